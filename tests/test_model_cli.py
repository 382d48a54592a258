"""The model commands (show, run, draw, export) through `rasp.tools.cli.main([...])` on the runtime's
hand-made model files (tests/transformer/handmade_models.py): outputs, exit codes, bad files, bad
arguments. tests/test_compile_cli.py has the commands that compile.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from safetensors import safe_open

from tests.cli_helpers import run
from tests.model_cli_files import bad_model_files
from tests.transformer.handmade_models import previous_token


@pytest.fixture(scope="module")
def prev_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return previous_token().save(tmp_path_factory.mktemp("cli") / "prev.safetensors")


def test_show_prints_the_summary_and_json(
    capsys: pytest.CaptureFixture[str], prev_model: Path
) -> None:
    code, out, err = run(capsys, "show", str(prev_model))
    assert code == 0 and not err
    assert (
        "layer  block   name  operation" in out
        and "tokens: a b c" in out
        and "indices: 0..6" in out
    )
    code, out, _ = run(capsys, "show", str(prev_model), "--json")
    data = json.loads(out)
    assert code == 0 and data["config"]["n_layers"] == 1 and data["parameters"]["total"] > 0


@pytest.mark.parametrize("command", ["show", "run", "draw", "export"])
def test_bad_model_files_give_one_error_line(
    capsys: pytest.CaptureFixture[str], prev_model: Path, tmp_path: Path, command: str
) -> None:
    for case, path in bad_model_files(tmp_path, prev_model).items():
        argv = {
            "show": ["show", str(path)],
            "run": ["run", "--model", str(path), "--input", "ab"],
            "draw": ["draw", str(path), "--input", "ab", "-o", str(tmp_path / "x.png")],
            "export": ["export", str(path), "--to", "transformer-lens", "-o", str(tmp_path / "tl")],
        }[command]
        code, out, err = run(capsys, *argv)
        assert code == 1, (command, case, err)
        assert err.startswith(f"error: {path}: ") and err.count("\n") == 1, (command, case, err)
        assert "Traceback" not in err and "internal error" not in err and not out, (command, case)


def test_run_model(capsys: pytest.CaptureFixture[str], prev_model: Path) -> None:
    assert run(capsys, "run", "--model", str(prev_model), "--input", "abc") == (
        0,
        "[-, a, b] (strings)\n",
        "",
    )
    assert (
        run(capsys, "run", "--model", str(prev_model), "--input", "abc", "--json")[1]
        == '["-", "a", "b"]\n'
    )
    code, _, err = run(capsys, "run", "--model", str(prev_model), "--input", "abz")
    assert code == 2 and 'rasp run: error: argument --input: token "z" at position 2' in err
    assert str(prev_model) in err
    code, _, err = run(capsys, "run", "--model", str(prev_model), "--input", "abc", "--name", "x")
    assert code == 2 and "--name applies only to FILE.rasp" in err
    code, _, err = run(capsys, "run", "--model", str(prev_model), "--input", "a", "--tracr-compat")
    assert code == 2 and "--tracr-compat applies only to PROG.py:NAME" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["draw", "{model}", "--input", "ab", "-o", "{tmp}/d.png"],
        ["verify", "--model", "{model}"],
        ["run", "--model", "{model}", "--input", "ab"],
    ],
)
def test_tracr_compat_with_a_model_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], prev_model: Path, tmp_path: Path, argv: list[str]
) -> None:
    """`draw M.safetensors` and `verify --model M` took --tracr-compat without a word, where it
    means nothing (a model file runs no Python; run --model refused it already)."""
    argv = [a.format(model=prev_model, tmp=tmp_path) for a in argv]
    code, out, err = run(capsys, *argv, "--tracr-compat")
    assert code == 2 and not out
    assert f"--tracr-compat applies only to PROG.py:NAME; {prev_model} is a model file" in err
    assert not (tmp_path / "d.png").exists()


def test_run_model_labels_the_values_as_the_interpreter_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the file's output type is strings (tokens, or the default 0); where every position takes
    # the default the values are ints, and `rasp run FILE.rasp` says so too
    program = tmp_path / "late.rasp"
    program.write_text("res = aggregate(select(indices, length - 5, ==), tokens);\n")
    model = tmp_path / "late.safetensors"
    compiled = ["compile", str(program), "--vocab", "abc", "--max-len", "8", "-o", str(model)]
    assert run(capsys, *compiled)[0] == 0
    assert run(capsys, "run", str(program), "--input", "ab")[1] == "[0]*2 (ints)\n"
    assert run(capsys, "run", "--model", str(model), "--input", "ab")[1] == "[0]*2 (ints)\n"


def test_run_model_without_cuda(capsys: pytest.CaptureFixture[str], prev_model: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    code, _, err = run(
        capsys, "run", "--model", str(prev_model), "--input", "ab", "--device", "cuda"
    )
    assert code == 1 and "no CUDA device" in err


def test_draw_model_and_argument_errors(
    capsys: pytest.CaptureFixture[str], prev_model: Path, tmp_path: Path
) -> None:
    png, dot = tmp_path / "p.png", tmp_path / "p.dot"
    code, out, _ = run(
        capsys, "draw", str(prev_model), "--input", "abc", "-o", str(png), "--dot", str(dot)
    )
    assert code == 0 and png.stat().st_size > 0 and "rank=same" in dot.read_text()
    assert out.startswith(f"wrote {png}")
    code, _, err = run(
        capsys, "draw", str(prev_model), "--input", "abc", "-o", str(png), "--vocab", "ab"
    )
    assert code == 2 and "--vocab applies only to a .rasp program" in err
    code, _, err = run(
        capsys, "draw", str(prev_model), "--input", "abc", "-o", str(png), "--vocab", "ab",
        "--max-len", "3",
    )  # fmt: skip
    assert code == 2 and "--vocab, --max-len apply only to a .rasp program" in err
    code, _, err = run(
        capsys, "draw", str(prev_model), "--input", "abc", "-o", str(tmp_path / "no" / "p.png")
    )
    assert (
        code == 1
        and err
        == f"error: cannot write {tmp_path / 'no' / 'p.png'}: directory {tmp_path / 'no'} does not exist\n"
    )
    code, _, err = run(capsys, "draw", str(tmp_path / "x.txt"), "--input", "abc", "-o", str(png))
    assert code == 2 and "TARGET must be a .rasp program" in err
    # a file where the directory should be was said not to exist
    (tmp_path / "f").write_text("")
    code, _, err = run(
        capsys, "draw", str(prev_model), "--input", "abc", "-o", str(tmp_path / "f" / "p.png")
    )
    assert code == 1 and err == (
        f"error: cannot write {tmp_path / 'f' / 'p.png'}: {tmp_path / 'f'} is not a directory\n"
    )


def test_export(capsys: pytest.CaptureFixture[str], prev_model: Path, tmp_path: Path) -> None:
    code, out, _ = run(
        capsys, "export", str(prev_model), "--to", "transformer-lens", "-o", str(tmp_path / "tl")
    )
    assert code == 0 and out.count("wrote ") == 3 and (tmp_path / "tl" / "config.json").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show"], "the following arguments are required: M.safetensors"),
        (["export", "m.safetensors", "--to", "onnx", "-o", "x"], "invalid choice: 'onnx'"),
        (["compile", "p.rasp", "--vocab", "ab", "--max-len", "4"], "-o/--output"),
        (["compile", "p.rasp", "--vocab", "ab", "--max-len", "0", "-o", "m"], "must be at least 1"),
        (["verify", "p.rasp", "--max-len", "4"], "--vocab"),
        (
            ["verify", "p.rasp", "--vocab", "ab", "--max-len", "4", "--samples", "-1"],
            "must not be negative",
        ),
        (["verify", "p.rasp", "--vocab", "[a", "--max-len", "4"], "not valid JSON"),
        (
            ["run", "--model", "m.safetensors", "--input", "ab", "--device", "tpu"],
            "invalid choice: 'tpu'",
        ),
        (["draw", "m.safetensors", "-o", "x.png"], "--input"),
        (
            [
                "verify",
                "p.rasp",
                "--vocab",
                "ab",
                "--max-len",
                "4",
                "--exhaustive-len",
                "0",
                "--samples",
                "0",
            ],
            "leaves no input to check",
        ),
    ],
)
def test_bad_arguments_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and not out


def test_a_rasp_programs_token_starting_with_the_tuple_mark_runs_as_a_string(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `x = tokens;` over the token "\x00(1, 2)": the model's value (and the interpreter's, and
    # `rasp verify`'s comparison) is that string; `run --model` printed the tuple (1, 2)
    program = tmp_path / "id.rasp"
    program.write_text("x = tokens;\n", encoding="utf-8")
    model = str(tmp_path / "id.safetensors")
    vocab = json.dumps(["\x00(1, 2)", "a"])
    code, _, err = run(
        capsys, "compile", str(program), "--vocab", vocab, "--max-len", "3", "-o", model
    )
    assert code == 0, err
    code, out, _ = run(capsys, "run", "--model", model, "--input", vocab, "--json")
    assert (code, json.loads(out)) == (0, ["\x00(1, 2)", "a"])
    code, out, _ = run(capsys, "run", "--model", model, "--input", vocab)
    assert (code, out) == (0, "[\x00(1, 2), a] (strings)\n")  # as `rasp run` of the program
    # the file does not say its marked strings are tracr's tuples (docs/format.md)
    with safe_open(model, "np") as f:
        assert "tuples" not in json.loads(f.metadata()["rasp_forge"])["output"]

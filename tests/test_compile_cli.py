"""The commands that compile (compile, run, show and verify of a compiled model, draw FILE.rasp)
through `rasp.tools.cli.main([...])`, with the real compiler on small programs: outputs, exit codes,
warnings, bad and mismatched model files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run
from tests.model_cli_files import REVERSE, bad_model_files


def test_compile_then_run_show_verify(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    model = tmp_path / "reverse.safetensors"
    code, out, err = run(
        capsys, "compile", str(reverse_file), "--vocab", "abc", "--max-len", "5", "-o", str(model)
    )
    assert code == 0, err
    assert out.startswith(f"wrote {model}: ")
    assert (
        run(capsys, "run", "--model", str(model), "--input", "abca")[1]
        == "[a, c, b, a] (strings)\n"
    )
    code, out, _ = run(capsys, "show", str(model))
    assert code == 0 and "reverse" in out and "sha256:" in out
    code, out, err = run(
        capsys,
        "verify",
        str(reverse_file),
        "--vocab",
        "abc",
        "--max-len",
        "5",
        "--model",
        str(model),
    )
    assert code == 0 and not err and "model == interpreter on 363 inputs" in out
    assert "every input of length 1..5 over 3 tokens" in out


def test_compile_errors(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    out_path = tmp_path / "missing_dir" / "m.safetensors"
    code, _, err = run(
        capsys, "compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(out_path)
    )
    assert code == 1 and err.startswith(f"error: cannot write {out_path}: ")
    code, _, err = run(
        capsys,
        "compile",
        str(reverse_file),
        "--vocab",
        "ab",
        "--max-len",
        "3",
        "-o",
        str(tmp_path / "m.safetensors"),
        "--name",
        "flip",
    )
    assert code == 1 and "'flip' is a selector, not an s-op" in err and "Traceback" not in err


def compile_argv(tmp_path: Path, name: str, text: str, vocab: str) -> tuple[list[str], Path, Path]:
    """`rasp compile` of `text` (written to NAME.rasp) at max-len 4, its program and model."""
    pytest.importorskip("compiler")
    program, model = tmp_path / f"{name}.rasp", tmp_path / f"{name}.safetensors"
    program.write_text(text)
    return (
        ["compile", str(program), "--vocab", vocab, "--max-len", "4", "-o", str(model)],
        program,
        model,
    )


def test_compile_warns_where_the_program_itself_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv, program, model = compile_argv(tmp_path, "tenth", "x = 10 / (indices - 2);\n", "ab")
    code, out, err = run(capsys, *argv)
    # every input of 3 or 4 tokens divides by zero at position 2: 24 of the 30 inputs tried
    assert code == 0 and out.startswith(f"wrote {model}: ")
    warning = (
        'the program fails on 24 of the 30 inputs tried (e.g. "aaa": '
        f"{program}:1:5: division by zero); the model accepts such inputs, but its output on "
        "them is not defined (rasp verify skips them)"
    )
    assert err == f"warning: {warning}\n"
    code, _, err = run(capsys, *argv, "--quiet")
    assert code == 0 and err == ""
    code, out, _ = run(capsys, *argv, "--quiet", "--json")  # (quiet: no stderr; JSON: still)
    assert code == 0 and json.loads(out)["warnings"] == [warning]


def test_a_failure_inside_a_def_is_also_located_at_the_programs_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = "def tenth(s) {\n  return 10 / (s - 2);\n}\nx = tenth(indices);\n"
    argv, program, _ = compile_argv(tmp_path, "tenth", text, "ab")
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    assert f"{program}:2:10: division by zero in tenth, called at {program}:4:5)" in err


def test_compile_warns_of_an_output_that_is_one_value_everywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a count of "a"s over the vocabulary bc (a typo of abc) compiled silently to 0 heads
    text = 'n = selector_width(select(indices, indices, <=) and select(tokens, "a", ==));\n'
    argv, _, _ = compile_argv(tmp_path, "count", text, "bc")
    code, _, err = run(capsys, *argv)
    assert code == 0 and err == (
        "warning: the output `n` is 0 at every position of all 30 inputs tried: the model "
        "computes a constant (does the vocabulary hold the tokens the program looks for?)\n"
    )
    argv, _, _ = compile_argv(tmp_path, "count", text, "abc")
    code, _, err = run(capsys, *argv)
    assert code == 0 and err == ""


def test_compile_is_silent_where_the_program_never_fails(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    model = tmp_path / "reverse.safetensors"
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "4", "-o", str(model)]
    code, _, err = run(capsys, *argv)
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    ("program", "vocab", "given", "hint", "no_token", "listed", "right", "output"),
    [
        (
            "s = tokens_int + 1;\n",
            "[1,2,3]",
            "312",
            "; its tokens are not strings: write the input as a JSON list, --input '[3,1,2]'",
            "314",  # 4 is no token: no hint
            "[1, 2, 3]",
            "[3,1,2]",
            "[4, 2, 3] (ints)",
        ),
        (
            "s = tokens;\n",
            '["[","]","1"]',
            '[1, "]"]',
            """; its tokens are strings: write the input as strings, --input '["1", "]"]'""",
            "[2]",  # no string 2 either: no hint
            '["[", "]", "1"]',
            '["1", "]"]',
            "[1, ]] (strings)",
        ),
    ],
)
def test_run_says_how_to_write_tokens_of_the_other_kind(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    program: str,
    vocab: str,
    given: str,
    hint: str,
    no_token: str,
    listed: str,
    right: str,
    output: str,
) -> None:
    """Characters for a model of number tokens, numbers for one of their strings."""
    argv, _, model = compile_argv(tmp_path, "m", program, vocab)
    assert run(capsys, *argv)[0] == 0
    code, _, err = run(capsys, "run", "--model", str(model), "--input", given)
    assert code == 2 and err.endswith(hint + "\n")
    assert "the vocabulary holds" not in err, "one hint: the runtime's own is not said too"
    code, _, err = run(capsys, "run", "--model", str(model), "--input", no_token)
    assert code == 2 and err.endswith(f"{listed} ({model})\n"), "no token of either kind: no hint"
    assert run(capsys, "run", "--model", str(model), "--input", right)[1] == output + "\n"


def test_run_gives_the_runtimes_hint_where_it_has_none_of_its_own(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a list mixing kinds (`["3", 1]` for [1, 2, 3]) had no hint at all
    argv, _, model = compile_argv(tmp_path, "m", "s = tokens_int + 1;\n", "[1,2,3]")
    assert run(capsys, *argv)[0] == 0
    code, _, err = run(capsys, "run", "--model", str(model), "--input", '["3", 1]')
    assert code == 2 and err.endswith(
        f'[1, 2, 3] ({model}); the vocabulary holds the number 3, not the string "3": '
        "write the tokens as numbers, e.g. [3, 1]\n"
    )


def test_run_says_a_json_list_keeps_its_types(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # `[1.0, 2]` for the vocabulary [1, 2, 3] said only that 1.0 is no token of it
    argv, _, model = compile_argv(tmp_path, "m", "s = tokens_int + 1;\n", "[1,2,3]")
    assert run(capsys, *argv)[0] == 0
    for given, wrong in (("[1.0, 2]", "1.0 (a float)"), ("[2, true]", "true (a bool)")):
        code, _, err = run(capsys, "run", "--model", str(model), "--input", given)
        assert code == 2 and err.endswith(
            f"; a JSON list keeps its types: the vocabulary has 1 (an int), not {wrong}\n"
        )
    code, _, err = run(capsys, "run", "--model", str(model), "--input", "[2, 7]")
    assert code == 2 and err.endswith(f"[1, 2, 3] ({model})\n"), "7 equals no token: no hint"


def test_verify_compiles_and_reports_json(
    capsys: pytest.CaptureFixture[str], reverse_file: Path
) -> None:
    code, out, _ = run(
        capsys,
        "verify",
        str(reverse_file),
        "--vocab",
        "ab",
        "--max-len",
        "6",
        "--exhaustive-len",
        "3",
        "--samples",
        "40",
        "--seed",
        "7",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and data["ok"] and data["checked"] == 14 + 40
    assert data["exhaustive"] == {
        "max_len": 3,
        "inputs": 14,
        "asked_len": None,
        "extended_from": None,
    }
    assert data["sampled"]["lengths"] == [4, 6] and data["sampled"]["seed"] == 7
    assert (data["sampled"]["uniform"], data["sampled"]["guided"]) == (20, 20)
    assert data["sampled"]["facts"] >= data["sampled"]["facts_uniform"] > 0


def test_verify_samples_uniformly_on_request(
    capsys: pytest.CaptureFixture[str], reverse_file: Path
) -> None:
    argv = ["verify", str(reverse_file), "--vocab", "ab", "--max-len", "6"]
    code, out, _ = run(capsys, *argv, "--exhaustive-len", "3", "--samples", "40", "--json",
                       "--sampling", "uniform")  # fmt: skip
    sampled = json.loads(out)["sampled"]
    assert code == 0 and (sampled["uniform"], sampled["guided"], sampled["facts"]) == (40, 0, None)
    code, _, err = run(capsys, *argv, "--sampling", "smart")
    assert code == 2 and "invalid choice: 'smart'" in err


def test_verify_warns_when_the_source_changed(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    model = tmp_path / "m.safetensors"
    assert (
        run(
            capsys,
            "compile",
            str(reverse_file),
            "--vocab",
            "ab",
            "--max-len",
            "3",
            "-o",
            str(model),
        )[0]
        == 0
    )
    reverse_file.write_text(REVERSE + "# edited\n")
    code, _, err = run(
        capsys,
        "verify",
        str(reverse_file),
        "--vocab",
        "ab",
        "--max-len",
        "3",
        "--model",
        str(model),
    )
    assert code == 0 and err.startswith("warning: ") and "not compiled from this version" in err


def test_verify_takes_vocab_length_and_name_from_the_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("compiler")
    program = tmp_path / "two.rasp"
    program.write_text(REVERSE + 'is_a = tokens == "a";\n')  # `reverse` is not the last name
    model = tmp_path / "m.safetensors"
    argv = ["--vocab", "ab", "--max-len", "4", "--name", "reverse", "-o", str(model)]
    assert run(capsys, "compile", str(program), *argv)[0] == 0
    code, out, err = run(capsys, "verify", str(program), "--model", str(model), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"], err
    assert report["exhaustive"] == {
        "max_len": 4,
        "inputs": 2 + 4 + 8 + 16,
        "asked_len": None,
        "extended_from": None,
    }
    # narrower than the model: fine; without a model both are needed
    code, out, err = run(capsys, "verify", str(program), "--model", str(model), "--max-len", "2")
    assert code == 0 and "`reverse`: model == interpreter on 6 inputs" in out + err
    code, _, err = run(capsys, "verify", str(program), "--max-len", "2")
    assert code == 2 and err.endswith(
        "rasp verify: error: the following arguments are required: --vocab (or --model "
        "M.safetensors, whose own they default to)\n"
    )


def test_draw_a_program(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    png = tmp_path / "r.png"
    code, _, err = run(capsys, "draw", str(reverse_file), "--input", "abc", "-o", str(png))
    assert code == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_verify_with_bad_or_mismatched_models(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, prev_model: Path, tmp_path: Path
) -> None:
    for case, path in bad_model_files(tmp_path, prev_model).items():
        code, out, err = run(
            capsys,
            "verify",
            str(reverse_file),
            "--vocab",
            "ab",
            "--max-len",
            "3",
            "--model",
            str(path),
        )
        assert (
            code == 1 and err.startswith(f"error: {path}: ") and err.count("\n") == 1 and not out
        ), case
    model = tmp_path / "m.safetensors"
    assert (
        run(
            capsys,
            "compile",
            str(reverse_file),
            "--vocab",
            "ab",
            "--max-len",
            "3",
            "-o",
            str(model),
        )[0]
        == 0
    )
    code, _, err = run(
        capsys,
        "verify",
        str(reverse_file),
        "--vocab",
        "ab",
        "--max-len",
        "4",
        "--model",
        str(model),
    )
    assert code == 2 and "rasp verify: error: argument --max-len 4: longer than" in err
    code, _, err = run(
        capsys,
        "verify",
        str(reverse_file),
        "--vocab",
        "abz",
        "--max-len",
        "3",
        "--model",
        str(model),
    )
    assert (
        code == 2
        and "rasp verify: error: argument --vocab: the token z is not in the vocabulary of" in err
    )


def test_compile_json_counts_heads_as_the_text_does(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    """reverse has one head in each of its 2 layers: `2 layers, 2 heads`, and `n_heads` 1 (the
    config's widest layer), which alone read as one head."""
    model = tmp_path / "reverse.safetensors"
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "4", "-o", str(model)]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.startswith(f"wrote {model}: 2 layers, 2 heads, ")
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 0 and (data["n_layers"], data["n_heads"], data["heads"]) == (2, 1, 2)
    assert list(data) == [
        "ok",
        "output",
        "n_layers",
        "n_heads",
        "heads",
        "d_model",
        "parameters",
        "nonzero",
        "certificate",
        "warnings",
    ]

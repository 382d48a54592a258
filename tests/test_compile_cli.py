"""The commands that compile (compile, run, show and verify of a compiled model, draw FILE.rasp)
through `rasp.tools.cli.main([...])`, with the real compiler on small programs: outputs, exit codes,
warnings, bad and mismatched model files.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run
from tests.model_cli_files import REVERSE, bad_model_files
from tests.transformer.handmade_models import previous_token


@pytest.fixture(scope="module")
def prev_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return previous_token().save(tmp_path_factory.mktemp("cli") / "prev.safetensors")


@pytest.fixture()
def reverse_file(tmp_path: Path) -> Path:
    pytest.importorskip("compiler")
    path = tmp_path / "reverse.rasp"
    path.write_text(REVERSE)
    return path


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
    assert f"{program}:2:10: division by zero in the call of tenth at {program}:4:5)" in err


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
    code, _, err = run(capsys, "run", "--model", str(model), "--input", no_token)
    assert code == 2 and err.endswith(f"{listed} ({model})\n"), "no token of either kind: no hint"
    assert run(capsys, "run", "--model", str(model), "--input", right)[1] == output + "\n"


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


def test_verify_shows_progress_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["verify", str(reverse_file), "--vocab", "ab", "--max-len", "5", "--samples", "0"]
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == "" and "62 inputs" in out
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr("rasp.tools.console.PROGRESS_DELAY_S", 0.0)  # a bar at once, however quick
    code, out, err = run(capsys, *argv)
    assert code == 0 and "verifying" in err and "/62.0" in err and "62 inputs" in out
    for quiet in (["--json"], ["--quiet"]):  # machine output or a quiet run: no bar
        code, out, err = run(capsys, *argv, *quiet)
        assert code == 0 and err == "", quiet
    # guiding samples runs the interpreter on each: a bar of its own
    argv = ["verify", str(reverse_file), "--vocab", "ab", "--max-len", "6", "--exhaustive-len", "2"]
    code, out, err = run(capsys, *argv, "--samples", "30")
    assert code == 0 and "guiding samples" in err and "/30.0" in err and "36 inputs" in out
    code, out, err = run(capsys, *argv, "--samples", "30", "--sampling", "uniform")
    assert code == 0 and "guiding samples" not in err and "verifying" in err


def test_a_long_compile_stage_shows_its_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile's stages are each one call (done 0 of 1) and then seconds of work; tqdm draws a
    delayed bar only when updated after its delay, so no compile stage ever showed a bar (the
    certify of most_freq at N = 300 takes 2.5 s). It is drawn once the delay has passed, with its
    time, and cleared when the next stage starts."""
    import io
    import time

    from rasp.tools import console

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(console, "PROGRESS_DELAY_S", 0.05)
    with console.Console().progress() as bars:
        assert bars is not None
        bars("compiling: certify", 0, 1)
        time.sleep(0.6)
        shown = stream.getvalue()
        bars("compiling: write", 0, 1)  # quick: never drawn
    assert "compiling: certify" in shown and "0.00/1.00" in shown
    rest = stream.getvalue()[len(shown) :]
    assert "compiling: write" not in rest and rest.endswith("\r")  # the line cleared
    # a pipe: nothing at all
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with console.Console().progress() as bars:
        assert bars is None


def test_the_compile_notes_its_size_prediction() -> None:
    """The size prediction and the program's rewrites ran before the first stage was noted:
    seconds without a bar at a large N."""
    from compiler import compile_sop
    from tests.compiler import sop_builders as B

    stages: list[str] = []
    compile_sop(B.hist(), list("ab"), 65, progress=lambda s, *_: stages.append(s))
    assert stages[:2] == ["compiling: predict the size", "compiling: prepare the program"]


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


@pytest.mark.parametrize(
    ("program", "location", "message"),
    [
        ("x = select(indices, indices, ==;\n", "bad.rasp:1:32", "expected ')'"),
        ("x = selector_width(select(tokens, tokens, ==));\n", "bad.rasp:1:5", "causal"),
        (None, None, "cannot read bad.rasp"),
    ],
)
def test_compile_json_describes_a_refusal_on_stdout(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    program: str | None,
    location: str | None,
    message: str,
) -> None:
    """`compile --json` printed nothing on stdout when it failed: a JSON consumer read empty
    output. It prints one object (ok false, the first error, where, every diagnostic) and still
    exits 1, the located error on stderr as before."""
    monkeypatch.chdir(tmp_path)
    if program is not None:
        Path("bad.rasp").write_text(program)
    argv = ["compile", "bad.rasp", "--vocab", "ab", "--max-len", "4", "-o", "m.safetensors"]
    code, out, err = run(capsys, *argv, "--causal", "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and message in data["error"]
    assert data["location"] == location and data["output"] == "m.safetensors"
    assert data["refused"][0]["message"] == data["error"]
    assert data["refused"][0]["severity"] == "error"
    assert message in err and not Path("m.safetensors").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "bad.rasp", "--input", "abab"],
        ["verify", "bad.rasp", "--vocab", "ab", "--max-len", "3"],
        ["show", "bad.rasp"],
        ["export", "bad.rasp", "--to", "transformer-lens", "-o", "tl"],
        ["draw", "bad.rasp", "--input", "ab", "-o", "d.png"],
    ],
)
def test_every_json_command_describes_its_error_on_stdout(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    """With --json an error (exit 1) printed nothing on stdout but for compile's and verify's
    refusals: each command prints `{ok: false, error, location, refused}`, once."""
    monkeypatch.chdir(tmp_path)
    Path("bad.rasp").write_text("x = select(indices, indices, ==;\n")
    code, out, err = run(capsys, *argv, "--json")
    data = json.loads(out)  # (one object: two would not parse)
    assert code == 1 and data["ok"] is False and data["error"] in err
    if argv[0] in ("show", "export"):  # (they read the program as a model file: not located)
        assert data["location"] is None and "not a safetensors file" in data["error"]
    else:
        assert data["location"] == "bad.rasp:1:32" and "expected ')'" in data["error"]
    assert data["refused"][0]["message"] == data["error"]


def test_compile_refuses_to_replace_a_device_or_fifo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, reverse_file: Path
) -> None:
    """safetensors writes by renaming a new file into place: `-o /dev/null` run as root replaced
    the device with a model file. An existing path that is not a regular file is refused first."""
    fifo = tmp_path / "out.safetensors"
    os.mkfifo(fifo)
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(fifo)]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 1 and "not a regular file" in json.loads(out)["error"]
    assert "not a regular file" in err and fifo.is_fifo()


def test_compile_writes_through_a_symlink(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, reverse_file: Path
) -> None:
    """safetensors renames its new file into place: `-o LINK` replaced the symlink with a plain
    file and left its target as it was. The model is written to the target, the link kept."""
    target = tmp_path / "models" / "reverse.safetensors"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "latest.safetensors"
    link.symlink_to(target)
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(link)]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_bytes()[:8] != b"old" and target.stat().st_size > 100


def test_draw_json_describes_a_failed_write_on_stdout(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    prev_model: Path,
) -> None:
    """An OSError while writing (a full disk: `draw -o /dev/full`) printed `error: [Errno 28] No
    space left on device` and nothing on stdout under --json; it names the file, and --json
    prints its object."""
    pytest.importorskip("matplotlib")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    out_png, out_dot = tmp_path / "d.png", tmp_path / "d.dot"
    argv = ["draw", str(prev_model), "--input", "ab", "-o", str(out_png), "--json"]
    monkeypatch.setattr("rasp.tools.draw_graph.Path.write_text", full)  # the --dot file's
    code, out, err = run(capsys, *argv, "--dot", str(out_dot))
    data = json.loads(out)
    assert code == 1 and data["error"] == f"cannot write {out_dot}: No space left on device"
    monkeypatch.setattr("matplotlib.figure.Figure.savefig", full)
    code, out, err = run(capsys, *argv)
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert data["error"] == f"cannot write {out_png}: No space left on device"
    assert data["error"] in err


@pytest.mark.parametrize(
    ("raised", "line"),
    [
        (
            OSError(5, "Input/output error", "x.rasp"),  # (not show's file: no read or write)
            "error: x.rasp: Input/output error",
        ),
        (MemoryError("30 GB"), "error: not enough memory: 30 GB"),
        (KeyError("k"), "internal error: KeyError: 'k' (a bug in rasp-forge"),
    ],
)
def test_json_describes_every_failure_on_stdout(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    prev_model: Path,
    raised: Exception,
    line: str,
) -> None:
    """An OSError, MemoryError or internal error that reaches the CLI's entry point printed only
    its stderr line under --json (exit 1): the JSON consumer read empty output."""

    def failing(*args: object) -> int:
        raise raised

    monkeypatch.setattr("rasp.tools.cli._dispatch", failing)
    code, out, err = run(capsys, "show", str(prev_model), "--json")
    data = json.loads(out)  # (one object: two would not parse)
    text = line.split(": ", 1)[1]
    assert code == 1 and data["ok"] is False and data["error"].startswith(text)
    assert data["location"] is None and data["refused"][0]["message"] == data["error"]
    assert err.startswith(line) and len(err.splitlines()) == 1
    code, out, err = run(capsys, "show", str(prev_model))
    assert code == 1 and out == "" and err.startswith(line)


@pytest.mark.parametrize(
    ("command", "failed", "line"),
    [
        # a write failure said "cannot read": it names the file written now
        (("compile", "IN", "--vocab", "ab", "--max-len", "3", "-o", "OUT"), "OUT", "cannot write"),
        (("draw", "MODEL", "--input", "ab", "-o", "OUT"), "OUT", "cannot write"),
        (("draw", "MODEL", "--input", "ab", "-o", "x.png", "--dot", "OUT"), "OUT", "cannot write"),
        (
            ("export", "MODEL", "--to", "transformer-lens", "-o", "OUT"),
            "OUT/config.json",
            "cannot write",
        ),
        (("show", "MODEL"), "MODEL", "cannot read"),
        (("compile", "IN", "--vocab", "ab", "--max-len", "3", "-o", "OUT"), "IN", "cannot read"),
        (("draw", "IN:x", "--input", "ab", "-o", "OUT"), "IN", "cannot read"),
        # a file that is neither (a temporary one): named, with no guess at what failed
        (("show", "MODEL"), "/tmp/elsewhere", ""),
    ],
)
def test_an_os_error_says_whether_reading_or_writing_failed(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    prev_model: Path,
    tmp_path: Path,
    command: tuple[str, ...],
    failed: str,
    line: str,
) -> None:
    paths = {"IN": str(tmp_path / "p.py"), "MODEL": str(prev_model), "OUT": str(tmp_path / "o")}
    argv = [paths.get(word, word).replace("IN:", paths["IN"] + ":") for word in command]
    path = failed.replace("OUT", paths["OUT"]).replace("IN", paths["IN"])
    path = path.replace("MODEL", paths["MODEL"])

    def failing(*args: object) -> int:
        raise OSError(28, "No space left on device", path)

    monkeypatch.setattr("rasp.tools.cli._dispatch", failing)
    code, out, err = run(capsys, *argv, "--json")
    said = f"{line} {path}: No space left on device" if line else f"{path}: No space left on device"
    assert code == 1 and json.loads(out)["error"] == said
    assert err == f"error: {said}\n"


def test_compile_json_describes_a_failed_save_as_its_refusals(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reverse_file: Path,
) -> None:
    """A save that fails (a full disk) printed the generic object, without compile's `output`."""
    from compiler.model import CompiledModel

    def full(self: object, path: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(CompiledModel, "save", full)
    out_path = tmp_path / "m.safetensors"
    argv = ["compile", str(reverse_file), "--vocab", "ab", "--max-len", "3", "-o", str(out_path)]
    code, out, err = run(capsys, *argv, "--json")
    data = json.loads(out)  # (one object: two would not parse)
    assert code == 1 and data["ok"] is False and data["output"] == str(out_path)
    assert data["error"] == f"cannot write {out_path}: No space left on device" in err

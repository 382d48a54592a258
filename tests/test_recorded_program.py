"""The program a model records: `rasp verify --model M` checks the model against it (no FILE),
and `rasp show M --source` prints it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformer")
pytest.importorskip("compiler")

from safetensors.numpy import load_file, save_file

from rasp.tools.cli import main
from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parents[1]
REVERSE = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"


@pytest.fixture
def compiled(tmp_path: Path) -> tuple[Path, Path]:
    """(program, model): reverse over ab up to length 3."""
    program, model = tmp_path / "rev.rasp", tmp_path / "rev.safetensors"
    program.write_text(REVERSE)
    argv = ["compile", str(program), "--vocab", "ab", "--max-len", "3", "-q", "-o", str(model)]
    assert main(argv) == 0
    return program, model


def test_verify_without_a_program_checks_the_recorded_one(
    capsys: pytest.CaptureFixture[str], compiled: tuple[Path, Path]
) -> None:
    program, model = compiled
    program.unlink()  # the model's copy is what is checked
    code, out, err = run(capsys, "verify", "--model", str(model))
    assert code == 0 and err == "", err
    assert out.startswith(
        f"verified {program} (recorded in {model}) `reverse`: model == interpreter on 14 inputs"
    )


def test_the_recorded_program_is_checked_against_the_files_weights(
    capsys: pytest.CaptureFixture[str], compiled: tuple[Path, Path]
) -> None:
    """Not a model compiled again from it: with the unembedding's columns swapped, it fails."""
    _, model = compiled
    tensors = load_file(str(model))
    from safetensors import safe_open

    with safe_open(str(model), "np") as handle:
        metadata = handle.metadata()
    tensors["unembed.W_U"] = tensors["unembed.W_U"][:, ::-1].copy()
    save_file(tensors, str(model), metadata=metadata)
    code, out, err = run(capsys, "verify", "--model", str(model))
    assert code == 1 and out == ""
    assert "verification failed for" in err and f"(recorded in {model}) `reverse`" in err


def test_another_name_of_the_recorded_program_is_verified_against_the_model(
    capsys: pytest.CaptureFixture[str], compiled: tuple[Path, Path]
) -> None:
    program, model = compiled
    code, _, err = run(capsys, "verify", "--model", str(model), "--name", "opp")
    assert code == 1 and err.splitlines()[0] == (
        f"warning: {model} computes `reverse`; verifying `opp` of {program} (recorded in "
        f"{model}) against it"
    )


def test_show_source_prints_the_recorded_text(
    capsys: pytest.CaptureFixture[str], compiled: tuple[Path, Path]
) -> None:
    _, model = compiled
    assert run(capsys, "show", str(model), "--source") == (0, REVERSE, "")


def test_a_model_without_a_recorded_program_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from compiler import compile_sop
    from rasp.errors import Source
    from rasp.interpreter import load_source

    sop = load_source(Source("r.rasp", REVERSE)).get("reverse")
    model = tmp_path / "bare.safetensors"
    compile_sop(sop, list("ab"), 3).save(model)
    code, out, err = run(capsys, "verify", "--model", str(model))
    assert (code, out) == (1, "") and err.splitlines() == [
        f"error: {model} records no program to verify it against",
        f"hint: name the program: `rasp verify PROGRAM.rasp --model {model}`",
    ]
    code, out, err = run(capsys, "show", str(model), "--source")
    assert (code, out) == (1, "") and err.startswith(f"error: {model} records no program\n")


def test_a_python_program_is_never_run_from_a_model_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = str(ROOT / "programs" / "tracr" / "library.py")
    model = tmp_path / "length.safetensors"
    argv = ["compile", f"{target}:length", "--vocab", "ab", "--max-len", "3", "-q", "-o"]
    assert main([*argv, str(model)]) == 0
    code, out, err = run(capsys, "verify", "--model", str(model))
    assert (code, out) == (1, "") and err.splitlines() == [
        f"error: {model} was compiled from the Python program {target}, which rasp-forge does "
        "not run from a model file",
        f"hint: loading a .py file runs it; if you trust it: `rasp verify {target}:length "
        f"--model {model}`",
    ]


def test_the_hint_for_a_recorded_tracr_program_passes_tracr_compat(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The hint's command is one that runs: an unmodified tracr file loads only with the option.
    target = tmp_path / "hist.py"
    target.write_text("from tracr.compiler import lib\n\nhist = lib.make_hist()\n")
    model = tmp_path / "hist.safetensors"
    argv = ["compile", f"{target}:hist", "--tracr-compat", "--vocab", "ab", "--max-len", "3"]
    assert main([*argv, "-q", "-o", str(model)]) == 0
    code, out, err = run(capsys, "verify", "--model", str(model))
    hint = f"rasp verify {target}:hist --tracr-compat --model {model}"
    assert (code, out) == (1, "") and err.splitlines()[-1].endswith(f"`{hint}`")
    assert main(hint.split()[1:] + ["-q"]) == 0


def test_verify_needs_a_program_or_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "verify", "--vocab", "ab", "--max-len", "3")
    assert (code, out) == (2, "") and err.endswith(
        "rasp verify: error: the following arguments are required: FILE.rasp (or --model "
        "M.safetensors, whose recorded program it then checks)\n"
    )


def test_the_recorded_programs_loads_look_in_its_directory_first(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when it was compiled: not the working directory's file of that name (which made a
    correct model fail), nor "cannot find" where the working directory has none."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "helper.rasp").write_text("def f(x) { return x + 1; }\n")
    (tmp_path / "proj" / "main.rasp").write_text('load "helper";\nres = f(indices);\n')
    argv = ["compile", "proj/main.rasp", "--vocab", "ab", "--max-len", "3", "-q", "-o", "m.st"]
    assert main(argv) == 0
    for elsewhere in ("def f(x) { return x + 2; }\n", None):
        if elsewhere is not None:
            (tmp_path / "helper.rasp").write_text(elsewhere)
        else:
            (tmp_path / "helper.rasp").unlink()
        code, out, err = run(capsys, "verify", "--model", "m.st")
        assert code == 0 and out.startswith(
            "verified proj/main.rasp (recorded in m.st) `res`: model == interpreter on 14 inputs"
        ), err


def test_an_expression_statements_value_is_named_out_in_the_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The output was `out` but its head and residual group `_aggregate_1`."""
    program, model = tmp_path / "e.rasp", tmp_path / "e.safetensors"
    program.write_text("aggregate(select(indices, length - indices - 1, ==), tokens);\n")
    argv = ["compile", str(program), "--vocab", "ab", "--max-len", "3", "-q", "-o", str(model)]
    assert main(argv) == 0
    code, out, _ = run(capsys, "show", str(model))
    assert code == 0 and "_aggregate" not in out
    assert "1      head 0  out     aggregate(select(indices, length" in out
    assert run(capsys, "verify", "--model", str(model))[0] == 0


@pytest.mark.parametrize("field", ["file", "name", "value"])
def test_the_files_own_strings_are_escaped_in_verifys_text(
    capsys: pytest.CaptureFixture[str], compiled: tuple[Path, Path], field: str
) -> None:
    # the program file, the output name and the output's values come from the model file:
    # verify's text quoted them raw (`rasp show` escapes them), a clear-screen escape included
    import json

    from safetensors import safe_open

    _, model = compiled
    with safe_open(str(model), "np") as handle:
        meta = json.loads(handle.metadata()["rasp_forge"])
    evil = "\x1b[2J\u202e\r"
    if field == "file":
        meta["program"]["file"] += evil
    elif field == "name":
        meta["output"]["name"] += evil
    else:
        meta["output"]["values"][0] += evil
    save_file(load_file(str(model)), str(model), metadata={"rasp_forge": json.dumps(meta)})
    code, out, err = run(capsys, "verify", "--model", str(model), "--no-rebuild")
    assert code == (0 if field == "file" else 1)
    lines = (out + err).splitlines()
    assert lines and all(line.isprintable() for line in lines), lines
    assert "\\x1b[2J\\u202e\\r" in out + err

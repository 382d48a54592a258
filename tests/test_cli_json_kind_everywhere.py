"""A program the interpreter fails on at every input is refused by the compiler (there is nothing
to compile), but what stopped the command is the program's evaluation, not a refusal of the
compiler's: `--json`'s `kind` said `refused` where `rasp run` of the same program says
`evaluation`. The error is still a `CompileError` for a Python caller, its `kind` EVALUATION."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run

from rasp.errors import CompileError, ErrorKind

pytest.importorskip("transformer")

# a program and the column of what fails in it
EVERYWHERE = {
    "map": ("x = tokens / 0;\n", 5),  # a map raising at every value
    "some position": ("x = 6 / indices;\n", 5),  # index 0 of every input
    "select": ("x = aggregate(select(tokens, 1, <), tokens);\n", 15),  # no pair compares
}


@pytest.mark.parametrize(("program", "column"), EVERYWHERE.values(), ids=EVERYWHERE.keys())
@pytest.mark.parametrize("command", ["compile", "verify", "run"])
def test_failing_on_every_input_is_an_evaluation_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, program: str, column: int, command: str
) -> None:
    path = tmp_path / "p.rasp"
    path.write_text(program)
    argv = {
        "compile": ["compile", str(path), "--vocab", "ab", "--max-len", "3"],
        "verify": ["verify", str(path), "--vocab", "ab", "--max-len", "3"],
        "run": ["run", str(path), "--input", "ab"],
    }[command]
    if command == "compile":
        argv += ["-o", str(tmp_path / "m.safetensors")]
    code, out, err = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert code == 1 and data["kind"] == "evaluation", data
    assert data["refused"][0]["message"] == data["error"] and data["location"] is not None
    assert f"p.rasp:1:{column}: error:" in err
    if command != "run":
        assert "fails on every input of length 1..3" in data["error"]


def test_a_python_caller_still_catches_a_compile_error() -> None:
    from compiler import compile_sop
    from rasp.errors import Source
    from rasp.interpreter import load_source

    interp = load_source(Source("p.rasp", EVERYWHERE["map"][0]))
    with pytest.raises(CompileError) as info:
        compile_sop(interp.get("x"), list("ab"), 3, name="x")
    assert info.value.kind is ErrorKind.EVALUATION
    assert info.value.diagnostics[0].kind is ErrorKind.EVALUATION


def test_a_tracr_predicate_failing_on_every_pair_is_an_evaluation_failure() -> None:
    from compiler import compile_sop
    from rasp import tracr as rasp
    from rasp.tracr.lower import to_sops

    select = rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k < 1).named("sel")
    width = to_sops(rasp.SelectorWidth(select).named("w"))
    with pytest.raises(CompileError, match="fails on every input") as info:
        compile_sop(width, list("ab"), 4, name="w")
    assert info.value.kind is ErrorKind.EVALUATION


def test_other_refusals_still_say_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "p.rasp"
    path.write_text("x = tokens;\n")
    argv = ["compile", str(path), "--vocab", "ab", "--max-len", "3", "--max-params", "1"]
    code, out, _ = run(capsys, *argv, "-o", str(tmp_path / "m.safetensors"), "--json")
    assert code == 1 and json.loads(out)["kind"] == "refused"

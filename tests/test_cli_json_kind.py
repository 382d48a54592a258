"""Every failed command's `--json` object says what kind of failure it is (`kind`), beside its
diagnostics, which stay under `refused` whatever stopped it (readers depend on the key): a syntax
error's object read as a compiler's refusal (docs/inspect.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from rasp.tools import model_commands

SYNTAX = "x = select(indices, indices, ==;\n"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code, stdout, _ = run(capsys, *argv)
    return code, json.loads(stdout)


@pytest.mark.parametrize("command", ["run", "compile", "verify"])
def test_a_syntax_error_is_told_from_a_refusal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    program = tmp_path / "p.rasp"
    program.write_text(SYNTAX)
    argv = {
        "run": ["run", str(program), "--input", "ab"],
        "compile": ["compile", str(program), "--vocab", "ab", "--max-len", "3"],
        "verify": ["verify", str(program), "--vocab", "ab", "--max-len", "3"],
    }[command]
    if command == "compile":
        argv += ["-o", str(tmp_path / "m.safetensors")]
    code, data = _json(capsys, *argv, "--json")
    assert code == 1 and data["kind"] == "syntax", data
    assert data["refused"][0]["message"] == data["error"]  # (the key every failure keeps)


def test_a_compile_refusal_says_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = tmp_path / "p.rasp"
    program.write_text("x = tokens;\n")
    argv = ["compile", str(program), "--vocab", "ab", "--max-len", "3", "--max-params", "1"]
    code, data = _json(capsys, *argv, "-o", str(tmp_path / "m.safetensors"), "--json")
    assert code == 1 and data["kind"] == "refused", data


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (KeyboardInterrupt(), "interrupted"),
        (MemoryError(), "memory"),
        (ValueError("boom"), "internal"),
        (FileNotFoundError(2, "No such file or directory", "x"), "io"),
    ],
)
def test_what_stopped_a_command_is_its_kind(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    exc: BaseException,
    kind: str,
) -> None:
    def raising(args: Any) -> int:
        raise exc

    monkeypatch.setattr(model_commands, "cmd_show", raising)
    _, data = _json(capsys, "show", str(tmp_path / "m.safetensors"), "--json")
    assert data["kind"] == kind, data

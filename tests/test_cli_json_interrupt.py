"""`rasp compile --json` prints one object with `output` however the compile fails: a program
error, Ctrl-C, running out of memory, a bug of ours (docs/inspect.md). The interrupted object
lacked `output`, which a failed compile's object has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from rasp.tools import model_commands


def _compile_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[int, Any, str]:
    program = tmp_path / "p.rasp"
    program.write_text("x = tokens;\n")
    out = tmp_path / "m.safetensors"
    code, stdout, err = run(
        capsys, "compile", str(program), "--vocab", "ab", "--max-len", "3", "-o", str(out), "--json"
    )
    assert not out.exists()
    return code, json.loads(stdout), err


def _raising(exc: BaseException) -> Any:
    def compile_(*args: Any, **kwargs: Any) -> Any:
        raise exc

    return compile_


@pytest.mark.parametrize(
    ("exc", "code", "error"),
    [
        (KeyboardInterrupt(), 130, "interrupted"),
        (MemoryError("too big"), 1, "not enough memory: too big"),
        (ValueError("boom"), 1, "ValueError: boom"),
    ],
)
def test_a_compile_that_fails_outside_the_compiler_has_compile_s_object(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    exc: BaseException,
    code: int,
    error: str,
) -> None:
    monkeypatch.setattr(model_commands, "_compile", _raising(exc))
    got_code, data, _ = _compile_json(capsys, tmp_path)
    assert got_code == code
    assert data["ok"] is False and data["error"].startswith(error)
    assert data["output"] == str(tmp_path / "m.safetensors")
    assert list(data) == ["ok", "output", "error", "location", "refused", "kind"]  # as a refusal's


def test_a_refused_compile_s_object_is_the_same_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "p.rasp").write_text("x = tokens +;\n")
    out = tmp_path / "m.safetensors"
    args = ["--vocab", "ab", "--max-len", "3", "-o", str(out), "--json"]
    code, stdout, _ = run(capsys, "compile", str(tmp_path / "p.rasp"), *args)
    data = json.loads(stdout)
    assert code == 1 and list(data) == ["ok", "output", "error", "location", "refused", "kind"]


def test_other_commands_keep_the_plain_object(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def interrupted(args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(model_commands, "cmd_show", interrupted)
    code, stdout, _ = run(capsys, "show", str(tmp_path / "m.safetensors"), "--json")
    assert code == 130 and list(json.loads(stdout)) == [
        "ok",
        "error",
        "location",
        "refused",
        "kind",
    ]


VERIFY_FAILURE = [
    "ok",
    "checked",
    "failures",
    "vocab",
    "max_len",
    "error",
    "location",
    "refused",
    "kind",
]


@pytest.mark.parametrize("how", ["interrupted", "program error", "refused", "model error"])
def test_every_failed_verify_s_object_has_the_same_keys(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    how: str,
) -> None:
    """`verify --json` interrupted printed `{ok, error, location, refused}`, without the
    `checked` and `failures` a completed report has; the compiler's refusal had them but no
    `error`. Every failure has the counts (0: no check completed) and the error alike."""
    program = tmp_path / "p.rasp"
    program.write_text(
        "x = select(indices, indices, ==;\n" if how == "program error" else "x = tokens;\n"
    )
    argv = ["verify", str(program), "--vocab", "ab", "--max-len", "3", "--json"]
    if how == "interrupted":
        monkeypatch.setattr(model_commands, "cmd_verify", _raising(KeyboardInterrupt()))
    elif how == "refused":
        argv[argv.index("3")] = "100000"
    elif how == "model error":  # (nothing known of what would be checked yet)
        argv = ["verify", "--model", str(tmp_path / "missing.safetensors"), "--json"]
    code, stdout, err = run(capsys, *argv)
    data = json.loads(stdout)
    assert code == (130 if how == "interrupted" else 1), err
    assert list(data) == VERIFY_FAILURE and data["error"] in err
    assert (data["ok"], data["checked"], data["failures"]) == (False, 0, 0)
    if how == "model error":
        assert (data["vocab"], data["max_len"]) == (None, None)
    else:
        assert data["vocab"] == ["a", "b"] and data["max_len"] in (3, 100_000)

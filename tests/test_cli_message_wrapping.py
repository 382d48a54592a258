"""Errors and warnings on stderr: wrapped to the terminal's width where stderr is one (a compile
refusal's message and hint ran to 200 characters a line), one line each in a pipe, a file and
under `--json` (tools grep the lines, goldens hold them). The wrapping is the REPL's
(`Diagnostic.render`'s `width`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run
from tests.pty_helpers import on_terminal

pytest.importorskip("transformer")

_MESSAGE = (
    "error: 'tokens / 0' fails on every input of length 1..3: unsupported operand type(s) for /: "
    "'str' and 'int'"
)
_HINT = (
    "hint: the interpreter raises an error here for every input, so there is nothing to "
    'compile; it fails where tokens = "a" (a string)'
)


@pytest.fixture
def refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`rasp compile` of a program failing on every input, in the current directory (a short
    location): its long message and hint."""
    monkeypatch.chdir(tmp_path)
    Path("p.rasp").write_text("x = tokens / 0;\n")
    return ["compile", "p.rasp", "--vocab", "ab", "--max-len", "3", "-o", "p.safetensors"]


def _on_a_terminal(monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    # (capsys's stream has no descriptor: the width falls back to $COLUMNS, as on a terminal
    # that says 0 columns)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", str(columns))


def _joined(lines: list[str]) -> str:
    """Wrapped lines read back as the one line they were cut from."""
    return " ".join(line.strip() for line in lines)


def test_an_error_is_one_line_in_a_pipe(
    capsys: pytest.CaptureFixture[str], refused: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")  # the width of no terminal: stderr is not one
    code, _, err = run(capsys, *refused)
    lines = err.splitlines()
    assert code == 1 and lines[0].endswith(_MESSAGE) and lines[-1] == _HINT


def test_an_error_is_wrapped_to_the_terminal(
    capsys: pytest.CaptureFixture[str], refused: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_a_terminal(monkeypatch, 61)
    code, _, err = run(capsys, *refused)
    lines = err.splitlines()
    assert code == 1 and all(len(line) <= 60 for line in lines), err
    source = lines.index("    x = tokens / 0;")
    message, hint = lines[:source], lines[source + 2 :]
    # continuation lines are indented under the text, not as deep as the source line below
    assert len(message) > 1 and all(line.startswith("  ") for line in message[1:])
    assert not any(line.startswith("   ") for line in message[1:])
    assert len(hint) > 1 and all(line.startswith(" " * 6) for line in hint[1:])
    assert _joined(message).endswith(_MESSAGE) and _joined(hint) == _HINT
    # --json: stderr keeps one line per message, terminal or not
    code, out, err = run(capsys, *refused, "--json")
    assert code == 1 and '"kind"' in out and err.splitlines()[-1] == _HINT


def test_a_warning_and_an_unlocated_error_are_wrapped_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "w.rasp"
    program.write_text("x = 6 / (indices - 2);\n")  # fails on most inputs: compile warns
    out = tmp_path / "w.safetensors"
    missing = tmp_path / "no such directory" / "model.safetensors"
    commands = (
        (["compile", str(program), "--vocab", "ab", "--max-len", "4", "-o", str(out)], 0),
        (["show", str(missing)], 1),
    )
    for argv, status in commands:
        code, _, err = run(capsys, *argv)
        assert code == status and len(err.splitlines()) == 1 and len(err) > 100, err
        _on_a_terminal(monkeypatch, 51)
        code, _, wrapped = run(capsys, *argv)
        monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
        lines = wrapped.splitlines()
        assert code == status and len(lines) > 1 and _joined(lines) == err.strip()
        assert all(line.startswith("  ") for line in lines[1:])
        # (a path is one word, never cut: only a line that is one word may be longer)
        assert all(len(line) <= 50 or " " not in line.strip() for line in lines), wrapped


def test_a_real_terminal_gets_its_own_width(refused: list[str]) -> None:
    """Through a pseudo-terminal 50 columns wide ($COLUMNS unset: the terminal's own size)."""
    done, lines = on_terminal(refused, 50, "stderr")
    assert done.returncode == 1 and len(lines) > 6 and all(len(line) < 50 for line in lines)
    assert lines[-1].startswith(" " * 6) and _HINT.endswith(lines[-1].strip())

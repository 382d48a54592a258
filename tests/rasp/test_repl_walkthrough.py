"""What a walk through every REPL command of docs/repl.md and README.md's REPL section found, one
fact at a time."""

from __future__ import annotations

import io
import sys

import pytest

from rasp.tools.repl import ReplSession


def test_verify_without_a_model_says_so_before_loading_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`:verify` imported torch (5 s) before it found there was no model to verify."""
    monkeypatch.setitem(sys.modules, "torch", None)  # (an import of it now fails)
    assert ReplSession().feed(":verify") == "error: no compiled model; use :compile NAME first"


def test_quiet_shows_results_and_errors_only() -> None:
    """`rasp repl -q` ("print only results and errors: no notes, warnings or progress bars", its
    --help) printed the banner and every warning all the same."""
    quiet, loud = ReplSession(quiet=True), ReplSession()
    assert quiet.banner() == "" and loud.banner().startswith("rasp-forge ")
    warned = "o = indicator(tokens);"
    assert "warning:" in loud.feed(warned) and "warning:" not in quiet.feed(warned)
    assert quiet.feed("o;") == loud.feed("o;")
    # a failing statement's hint names the warning it hides by what it warns of
    failing = "y = 10 / (indices < 3 < 1);"
    shown = loud.feed(failing)
    assert "likely because of the warning below, at <repl>:1:11" in shown
    hidden = quiet.feed(failing)
    assert "warning:" not in hidden
    assert "likely because of the warning at <repl>:1:11 (comparisons do not chain" in hidden
    assert hidden.splitlines()[0] == shown.splitlines()[0]


def test_quiet_from_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rasp.tools.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO("o = indicator(tokens);\n"))
    assert main(["repl", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "     s-op: o" and "warning" not in out


def test_quiet_compiles_without_warnings_or_notes() -> None:
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    lines = ['z = tokens == "z";', ":compile z abc 3", "z = tokens;", ":layers"]
    quiet, loud = ReplSession(quiet=True), ReplSession()
    said = [(quiet.feed(line), loud.feed(line)) for line in lines]
    assert "warning: the output `z` is False at every position" in said[1][1]
    assert said[1][0] == said[1][1].splitlines()[0]  # "compiled z: ..." alone
    assert said[3][1].startswith("note: `z` has been rebound") and said[3][0].startswith("z: vocab")

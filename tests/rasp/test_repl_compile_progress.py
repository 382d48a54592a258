"""`:compile` on a terminal draws the compile's stage bars and one while torch loads, as `rasp
compile` does (a class's first :compile was seconds of nothing); piped, it draws none."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("transformer")

from rasp.tools.repl import ReplSession


def test_compile_shows_its_stages_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = ReplSession()
    session.feed('x = count(tokens, "a");')
    assert session.feed(":compile x abc 4").startswith("compiled x: ")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr("rasp.tools.console.PROGRESS_DELAY_S", 0.0)  # a bar at once
    assert session.feed(":compile x abc 4").startswith("compiled x: ")
    err = capsys.readouterr().err
    assert "compiling: certify" in err and "loading torch" in err

"""`:verify` on a terminal draws a bar per stage, as `rasp verify` does (it was about 5 s of
silence); piped, it draws none, and prints the same report."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("transformer")

from rasp.tools.repl import ReplSession


def test_verify_shows_its_stages_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    session = ReplSession()
    session.feed("r = aggregate(select(indices, length - indices - 1, ==), tokens);")
    assert session.feed(":compile r abc 3").startswith("compiled r: ")
    capsys.readouterr()
    piped = session.feed(":verify")
    assert piped.startswith("verified `r`: model == interpreter on 39 inputs")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr("rasp.tools.console.PROGRESS_DELAY_S", 0.0)  # a bar at once
    assert session.feed(":verify") == piped
    err = capsys.readouterr().err
    assert "verifying" in err and "evaluation orders" in err

"""What a walk through every REPL command of docs/repl.md and README.md's REPL section found, one
fact at a time."""

from __future__ import annotations

import sys

import pytest

from rasp.tools.repl import ReplSession


def test_verify_without_a_model_says_so_before_loading_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`:verify` imported torch (5 s) before it found there was no model to verify."""
    monkeypatch.setitem(sys.modules, "torch", None)  # (an import of it now fails)
    assert ReplSession().feed(":verify") == "error: no compiled model; use :compile NAME first"

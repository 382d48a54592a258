"""How a test session ends (tests/conftest.py's `pytest_sessionfinish`): a pytest-xdist worker
must be done within the 5 seconds execnet gives it after it reports its session finished, or it
is sent SIGINT, which landed in a WeakSet callback of pytest's closing garbage collection (a
PytestUnraisableExceptionWarning with a KeyboardInterrupt after a passing `pytest -n 2`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# run in a fresh interpreter: freezing this session's heap mid-run would keep its garbage
_CHECK = """
import gc
from tests.conftest import pytest_sessionfinish
live = [[k] for k in range(200_000)]  # a worker's heap, which a full collection walks
garbage = [[]]
garbage[0].append(garbage)  # a cycle that only a collection frees
del garbage
pytest_sessionfinish(None)
assert gc.get_freeze_count() >= len(live), gc.get_freeze_count()
assert gc.collect() == 0  # collected already; what is left is frozen, not walked again
assert sum(gc.get_count()) < 1_000, gc.get_count()
print("ok")
"""


def test_the_session_end_collects_then_freezes_the_heap() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHECK], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"

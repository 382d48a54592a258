"""Under a Python program (`PROG.py:NAME`), what it writes to file descriptor 1 itself, with
`os.write(1, ...)` or a subprocess, as it loads or from a function the command calls, goes to
stderr as its prints do: stdout holds the result alone (`--json`'s one object). It reached stdout
and corrupted the JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

NOISY = """\
import os, subprocess, sys
from rasp import tracr as rasp
os.write(1, b"raw at load\\n")
subprocess.run([sys.executable, "-c", "print('child at load')"], check=True)
def f(t):
    os.write(1, b"raw from f\\n")
    return t
x = rasp.Map(f, rasp.tokens)
"""


def _rasp(*argv: str, stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "rasp", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "P", "--input", "ab", "--json"],
        ["compile", "P", "--vocab", "ab", "--max-len", "2", "-o", "OUT", "--json"],
        ["verify", "P", "--vocab", "ab", "--max-len", "2", "--json"],
        ["run", "P", "--input", "ab"],
    ],
)
def test_writes_to_fd_1_go_to_stderr(tmp_path: Path, argv: list[str]) -> None:
    program = tmp_path / "noisy.py"
    program.write_text(NOISY)
    words = [{"P": f"{program}:x", "OUT": str(tmp_path / "n.safetensors")}.get(w, w) for w in argv]
    done = _rasp(*words)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "raw" not in out and "child" not in out
    assert "raw at load" in err and "child at load" in err and "raw from f" in err
    if "--json" in words:
        json.loads(out)
    else:
        assert out == "[a, b] (strings)\n"


def test_stdout_is_restored_for_the_failure_object(tmp_path: Path) -> None:
    """A program that fails after writing to fd 1: the failure object is on stdout, alone."""
    program = tmp_path / "bad.py"
    program.write_text("import os\nos.write(1, b'raw\\n')\nraise ValueError('no')\n")
    done = _rasp("run", f"{program}:x", "--input", "ab", "--json")
    data = json.loads(done.stdout.decode())
    assert done.returncode == 1 and data["ok"] is False and "raw" in done.stderr.decode()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_stdout_is_still_its_one_error(tmp_path: Path) -> None:
    program = tmp_path / "noisy.py"
    program.write_text(NOISY)
    with open("/dev/full", "w") as full:
        done = _rasp("run", f"{program}:x", "--input", "ab", "--json", stdout=full.fileno())
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err and "Exception ignored" not in err
    assert "error: cannot write standard output" in err, err

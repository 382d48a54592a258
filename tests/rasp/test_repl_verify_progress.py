"""`:verify` on a terminal draws a bar per stage, as `rasp verify` does (it was about 5 s of
silence); piped, it draws none, and prints the same report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformer")

from rasp.tools.repl import ReplSession
from tests.pty_helpers import written_to_terminal

REVERSE = "r = aggregate(select(indices, length - indices - 1, ==), tokens);"


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


# Run in the `rasp repl` process (a sitecustomize on its path): `:verify`'s first stage draws its
# bar, then the terminal echoes a Ctrl-C's `^C` after it and the process gets SIGINT, as when a
# user presses Ctrl-C.
_CTRL_C_IN_VERIFY = """
import os, signal, time
import rasp.tools.console as console
import rasp.tools.verify_orders as verify_orders
console.PROGRESS_DELAY_S = 0.0

def check_model(*args, progress=None, stages=None, **kwargs):
    progress(3, 10)
    time.sleep(0.7)  # (drawn by now: at once, then every REDRAW_S)
    os.write(2, b"^C")
    signal.raise_signal(signal.SIGINT)
    time.sleep(10)

verify_orders.check_model = check_model
"""


def _screen(shown: str, columns: int) -> list[str]:
    """The lines a terminal `columns` wide shows for `shown`: a line longer than the terminal
    goes on on the next (the `^C` after a full-width bar), `\\r` goes back to its start,
    `\\x1b[K` erases the rest of it."""
    screen: list[list[str]] = [[]]
    row = col = 0
    k = 0
    while k < len(shown):
        if shown.startswith("\x1b[K", k):
            del screen[row][col:]
            k += 3
            continue
        char = shown[k]
        k += 1
        if char == "\r":
            col = 0
        elif char == "\n":
            row, col = row + 1, 0
            screen += [[]] * (row + 1 - len(screen))
            screen[row] = list(screen[row])
        else:
            if col == columns:  # (the terminal wraps to the next line)
                row, col = row + 1, 0
                screen += [[] for _ in range(row + 1 - len(screen))]
            line = screen[row]
            line += [" "] * (col + 1 - len(line))
            line[col] = char
            col += 1
    return ["".join(line).rstrip() for line in screen]


def test_ctrl_c_in_verify_leaves_no_bar_on_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bar filled the width less a column; the `^C` wrapped onto the next line, where tqdm
    then cleared, and the bar stayed on screen above `interrupted`."""
    (tmp_path / "sitecustomize.py").write_text(_CTRL_C_IN_VERIFY, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    lines = [REVERSE, ":compile r abc 3", ":verify", ":names"]
    typed = "\n".join(lines).encode() + b"\n"
    done, shown = written_to_terminal(["repl"], 60, "stderr", stdin=typed)
    assert done.returncode == 0
    assert done.stdout.decode().splitlines()[-2:] == ["interrupted", "\tr"]  # (the session goes on)
    assert "verifying:  30%" in shown and "^C" in shown  # the bar was drawn, Ctrl-C echoed
    assert not any("verifying" in line or "^" in line for line in _screen(shown, 60))

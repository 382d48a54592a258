"""A selector grid or `full seq display` rows wider than the REPL's terminal are shown in chunks
of positions (`rasp.display_chunks`), or one position a line where two do not fit side by side;
a pipe, and a terminal wide enough, get the original's table byte for byte (docs/repl.md).
The transcript `tests/golden/repl/tables_60.out` is a 60-column terminal's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rasp.display import full_seq_rows, selector_grid
from rasp.display_chunks import fitted
from rasp.sops import SeqType, SeqValue
from rasp.text_width import line_columns
from rasp.tools.repl import ReplSession
from tests.pty_helpers import on_terminal

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "golden" / "repl"
TABLES = (TRANSCRIPTS / "tables_60.in").read_text(encoding="utf-8").splitlines()


def _fed(width: int | None) -> list[str]:
    session = ReplSession()
    session.width = width
    return [session.feed(line) for line in TABLES]


def test_columns_count_tab_stops_and_wide_characters() -> None:
    assert line_columns(" \t\tinput:") == 22
    assert line_columns("日本") == 4 and line_columns("a\tb") == 9


def test_a_table_that_fits_is_the_same_table() -> None:
    def render(lo: int, hi: int) -> list[str]:
        return [" ".join(str(k) for k in range(lo, hi))]

    assert fitted(10, render, lambda lo, hi, n: "x", None) == render(0, 10)
    assert fitted(10, render, lambda lo, hi, n: "x", 19) == render(0, 10)
    chunks = fitted(10, render, lambda lo, hi, n: f"{lo}-{hi - 1}", 9)
    assert chunks == ["0-4", "0 1 2 3 4", "5-9", "5 6 7 8 9"]
    # a position wider than the terminal is shown alone, whole
    assert fitted(2, lambda lo, hi: ["x" * 20] * (hi - lo), lambda lo, hi, n: "h", 5) == [
        "h",
        "x" * 20,
        "h",
        "x" * 20,
    ]


def test_a_grid_in_chunks_shows_every_key_once_and_every_query_in_each() -> None:
    labels = list("abcdefghijklmnopqrstuvwxyz")
    matrix = np.eye(26, dtype=bool)[::-1]
    whole = selector_grid(labels, matrix)
    assert selector_grid(labels, matrix, width=200) == whole
    chunked = selector_grid(labels, matrix, width=59)
    assert all(line_columns(line) <= 59 for line in chunked)
    headings = [k for k, line in enumerate(chunked) if "keys " in line]
    assert [chunked[k].strip() for k in headings] == ["keys 0-14 of 26:", "keys 15-25 of 26:"]
    assert [len(chunked[k + 2 : k + 28]) for k in headings] == [26, 26]
    keys = "".join(chunked[k + 1].split("   ", 1)[1].replace(" ", "") for k in headings)
    assert keys == "".join(labels)
    ones = sum(line.split(" | ")[1].count("1") for line in chunked if " | " in line)
    assert ones == 26
    # a chunk of one key (one position) says so in the singular
    three = selector_grid(list("abc"), np.eye(3, dtype=bool), width=33)
    assert [line.strip() for line in three if " of 3" in line] == ["keys 0-1 of 3:", "key 2 of 3:"]
    ints = SeqValue(values=[10, 20, 30], type=SeqType.INTS)
    lines = full_seq_rows([1, 2, 3], ints, width=40)
    assert [line.strip() for line in lines if " of 3" in line][-1] == "position 2 of 3:"


def test_full_seq_rows_in_chunks_or_one_position_a_line() -> None:
    tokens = list(range(20))
    ints = SeqValue(values=[k * 1000 for k in tokens], type=SeqType.INTS)
    chunked = full_seq_rows(tokens, ints, width=59)
    assert all(line_columns(line) <= 59 for line in chunked)
    headings = [line for line in chunked if "positions" in line]
    assert headings[0].startswith(" \t positions 0-") and headings[-1].endswith("-19 of 20:")
    assert len(chunked) == 3 * len(headings) > 3
    outputs = [v for line in chunked if "output:" in line for v in line.split()[1:-1]]
    assert outputs == [str(k * 1000) for k in tokens]
    floats = SeqValue(values=[k / 3 for k in tokens], type=SeqType.FLOATS)
    lines = full_seq_rows(tokens, floats, width=59)
    assert lines[0] == " \t position: input (ints)  output (floats)"
    assert lines[2] == " \t  1:  1  0.3333333333333333" and len(lines) == 21
    assert full_seq_rows(tokens, floats, width=500) == full_seq_rows(tokens, floats)


def test_a_pipe_and_a_wide_terminal_print_the_originals_tables() -> None:
    piped = _fed(None)
    assert _fed(10_000) == piped
    assert not any("keys " in text or "position" in text for text in piped)
    assert any(line_columns(line) > 100 for text in piped for line in text.splitlines())


@pytest.mark.parametrize("columns", [40, 60, 80])
def test_a_narrow_terminal_shows_every_table_within_its_width(columns: int) -> None:
    # (at 40 columns too: one position a line inside a list, 25 columns in, names its columns a
    # line each, `output (strings)` broken at its space)
    for text in _fed(columns - 1):
        assert all(line_columns(line) <= columns - 1 for line in text.splitlines()), text


def test_one_position_a_line_inside_a_list_names_its_columns_a_line_each() -> None:
    session = ReplSession()
    session.width = 40  # (a terminal 40 columns wide: `console.message_width`)
    for line in ['set example "hello"', "full seq display on"]:
        session.feed(line)
    lines = session.feed("pair = [tokens, indices * 1000];").splitlines()
    at = [k for k, line in enumerate(lines) if line.endswith("position:")]
    assert [lines[k + 1 : k + 4] for k in at] == [
        ["\t\t \t input (strings)", "\t\t \t output", "\t\t \t   (strings)"],
        ["\t\t \t input (strings)", "\t\t \t output (ints)", "\t\t \t 0: h     0"],
    ]
    assert all(line_columns(line) <= 40 for line in lines)
    # a row wider than the terminal is shown whole, past its edge (docs/repl.md)
    lines = session.feed("thirds = [indices / 3];").splitlines()
    assert "\t\t \t 1: e  0.3333333333333333" in lines


def test_a_real_terminal_chunks_a_grid() -> None:
    """`rasp repl` writing to a pseudo-terminal 60 columns wide, its input piped."""
    typed = b'set example "hello world and more words"\nf = select(indices, indices, ==);\n'
    done, lines = on_terminal(["repl"], 60, "stdout", stdin=typed)
    assert done.returncode == 0 and done.stderr == b""
    assert [line.strip() for line in lines if "keys " in line] == [
        "keys 0-14 of 26:",
        "keys 15-25 of 26:",
    ]
    assert all(line_columns(line) <= 59 for line in lines[2:]), lines

"""The REPL's messages (errors, warnings, notes, hints, a command's refusal, a compile's, an
internal error) are wrapped to the terminal's width where its output is a terminal, by the code
that wraps the CLI's (`Diagnostic.render`'s `width`, `console.message_width`); piped, and in the
transcript goldens (a `ReplSession` alone: `width` None), each stays one line (docs/repl.md)."""

from __future__ import annotations

import io
import os

import pytest

from rasp.text_width import line_columns
from rasp.tools.repl import ReplSession
from rasp.tools.repl_terminal import run_loop
from rasp.tools.repl_wrap import wrap_line, wrap_report
from tests.pty_helpers import on_terminal

# each prints a message longer than 60 columns: an error with the running example's hint, a
# warning with its hint, a command's refusals, an unknown command
LINES = [
    "y = tokens_int + 1;",
    "o = indicator(tokens);",
    ":type a b c d e f g h i j k l m n o p q r s t u v w x y z",
    ":frobnicate the model with every option there is, please",
    "r = aggregate(select(indices, length - indices - 1, ==), tokens);",
    ":compile r abc 5 6 7",
]


class _Terminal(io.StringIO):
    """A terminal's stdout, as `message_width` asks it (its size: `os.get_terminal_size`)."""

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1


def _reader(lines: list[str]):  # type: ignore[no-untyped-def]
    given = iter(lines)

    def read(prompt: str) -> str:
        try:
            return next(given)
        except StopIteration:
            raise EOFError from None

    return read


def _printed(lines: list[str], stdout: io.StringIO, session: ReplSession | None = None) -> str:
    run_loop(session or ReplSession(), _reader(lines), stdout)
    return stdout.getvalue()


def _sized(monkeypatch: pytest.MonkeyPatch, columns: list[int]) -> None:
    """The terminal is `columns[0]` wide (a test may resize it between lines)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((columns[0], 24)))


def _fits(text: str, width: int) -> bool:
    """Every line within `width` terminal columns, but a source line and its caret (indented
    four) and a line of one word (a path or a quoted text is never cut)."""
    return all(
        line_columns(line) <= width or line.startswith("    ") or " " not in line.strip()
        for line in text.splitlines()
    )


def test_a_terminal_wraps_every_message_and_a_pipe_keeps_one_line_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _sized(monkeypatch, [61])
    piped = _printed(LINES, io.StringIO())
    wrapped = _printed(LINES, _Terminal())
    assert piped == "\n".join(ReplSession().feed(line) for line in LINES).strip() + "\n"
    assert any(len(line) > 60 for line in piped.splitlines())
    assert _fits(wrapped, 60) and not _fits(piped, 60)
    # only the line breaks differ, each message's later lines indented under its first
    assert wrapped.split() == piped.split()
    assert len(wrapped.splitlines()) >= len(piped.splitlines()) + len(LINES)
    for kind in (
        "hint: ",
        "<repl>:1:1: error: ",
        "<repl>:1:5: warning: ",
        "error: :type ",
        "error: unknown command",
        "error: usage: :compile",
    ):
        first = next(k for k, line in enumerate(wrapped.splitlines()) if line.startswith(kind))
        assert wrapped.splitlines()[first + 1].startswith("  "), kind


def test_the_width_is_the_terminals_at_each_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal resized between two lines wraps the second to its new width."""
    columns = [41]
    _sized(monkeypatch, columns)
    session, stdout = ReplSession(), _Terminal()
    run_loop(session, _reader([LINES[0]]), stdout)
    narrow = stdout.getvalue()
    columns[0] = 81
    run_loop(session, _reader([LINES[0]]), stdout)
    wide = stdout.getvalue()[len(narrow) :]
    assert _fits(narrow, 40) and _fits(wide, 80) and not _fits(wide, 60)
    assert narrow.split() == wide.split() and len(narrow.splitlines()) > len(wide.splitlines())


def test_an_internal_error_is_wrapped_too(monkeypatch: pytest.MonkeyPatch) -> None:
    _sized(monkeypatch, [51])
    session = ReplSession()
    monkeypatch.setattr(session, "feed", lambda line: 1 / 0)
    wrapped = _printed(["x = 1;"], _Terminal(), session)
    assert wrapped.startswith("internal error: ZeroDivisionError: division by\n  zero (a bug")
    assert _fits(wrapped, 50) and len(wrapped.splitlines()) > 2


def test_a_compile_refusal_is_wrapped_to_the_terminal_not_to_100_columns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    lines = [LINES[4], ":compile r abc 5 6"]  # over its limit of 6 parameters
    piped = _printed(lines, io.StringIO())
    _sized(monkeypatch, [61])
    wrapped = _printed(lines, _Terminal())
    assert "(`:compile r abc 5 MAX_PARAMS`)" in wrapped  # (a command to type is never cut)
    assert _fits(wrapped, 60) and wrapped.split() == piped.split()
    assert [line for line in piped.splitlines() if line.startswith("hint: ")] == [
        "hint: the limit is 6 parameters: use a smaller maximum length, or raise the limit "
        "(`:compile r abc 5 MAX_PARAMS`) if the machine can hold it"
    ]


def test_a_real_terminal_gives_its_own_width() -> None:
    """`rasp repl` writing to a pseudo-terminal 50 columns wide ($COLUMNS unset), its input
    piped (no prompts)."""
    done, lines = on_terminal(["repl"], 50, "stdout", stdin=b"y = tokens_int + 1;\n")
    assert done.returncode == 0 and done.stderr == b""
    error = lines.index("<repl>:1:1: error: cannot read the input as")
    assert _fits("\n".join(lines[error:]), 49) and lines[-1].startswith(" " * 6), lines


def test_a_real_terminal_wraps_wide_characters_by_their_columns() -> None:
    """`日` takes two columns: counted as one, a list of CJK tokens wrapped to 49 ran to ~70.
    A value with no space to break at is shown whole (one line, past the edge), and a caret
    sits under its column after wide characters and a tab (docs/repl.md)."""
    typed = "\n".join(
        [
            'x = ["日本語", "中文字符", "한국어", "e\u0301moji 👍🏽", "ｆｕｌｌｗｉｄｔｈ", "ｱｲｳ", "日本語"];',
            'y = "日本語の文字列はとても長いのでこの端末の幅を超えてしまう";',
            'w = "日本語"\t+ 1;',
        ]
    )
    done, lines = on_terminal(["repl"], 50, "stdout", stdin=typed.encode() + b"\n")
    assert done.returncode == 0 and done.stderr == b""
    shown = lines[lines.index("running example is: hello") + 1 :]
    assert _fits("\n".join(shown), 49) and len(shown) > 6, shown
    assert any(line_columns(line) > 49 for line in shown)  # (the one word, whole)
    assert shown[0].startswith("     list: x = ['日本語', '中文字符', '한국어',")
    assert '    w = "日本語"\t+ 1;' in shown
    underline = shown[shown.index('    w = "日本語"\t+ 1;') + 1]
    assert underline == "        ^~~~~~~~~~~~~~~~~~~"  # (to the end of `+ 1`, past the tab stop)


# ------------------------------------------------------------------------------------------------
# Reports (`:verify`, `:residual`, `:layers`, `:compile`), `draw`'s and the values' lines


def test_a_report_line_hangs_under_its_value_and_keeps_its_tabs() -> None:
    report = (
        "verified `r`: model == interpreter on 1,564 inputs\n"
        "  orders:     16 runs agree with each other and with the interpreter on 256 of the "
        "1,564 inputs (first 128, then 128 sampled with seed 0)\n"
        "              runs: cpu x {float32, float64} x {1, 2 threads} x {unbatched, batches "
        "of 3, 16, 128 (mixed lengths)}\n"
        "    y = tokens_int + 1 + a_rather_long_name_for_a_source_line_to_stay_whole;\n"
        "    ^~~~~~~~~~~~~~~~~~"
    )
    assert wrap_report(report, None) == report
    wrapped = wrap_report(report, 59).splitlines()
    assert wrapped[1:4] == [
        "  orders:     16 runs agree with each other and with the",
        "              interpreter on 256 of the 1,564 inputs (first",
        "              128, then 128 sampled with seed 0)",
    ]
    assert wrapped[4].startswith("              runs: cpu x")
    assert wrapped[5].startswith(" " * 20) and wrapped[-2:] == report.splitlines()[-2:]
    assert wrapped[0] == report.splitlines()[0]
    tabbed = wrap_line("\tdraw needs the compiler's drawing support, which is not available", 42)
    assert tabbed == ["\tdraw needs the compiler's drawing", "\t  support, which is not available"]


def test_a_space_in_a_value_is_never_the_break_nor_dropped() -> None:
    """`[a,  , b]` holds the token " ": a line broken at its space lost it."""
    line = "\t =  [e, s, r, e, v, e, r,  , e, h, t,  , r, o, f,  , g, n, i, r,  , t, s] (strings)"
    for width in range(40, 80):
        first, *more = wrap_line(line, width)
        assert all(line_columns(part) <= width for part in (first, *more))
        rejoined = first + "".join(" " + part.removeprefix("\t   ") for part in more)
        assert rejoined == line, width


def test_a_wide_terminal_changes_no_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a report fits, it is the pipe's, byte for byte (the table's columns too)."""
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    lines = [LINES[4], ":compile r abc 4", ":layers", ":residual ab", ":verify 2"]
    piped = _printed(lines, io.StringIO())
    _sized(monkeypatch, [400])
    assert _printed(lines, _Terminal()) == piped
    _sized(monkeypatch, [61])
    narrow = _printed(lines, _Terminal())
    assert _fits(narrow, 60) and not _fits(piped, 60)
    # the same words (a table's row split in two interleaves its cells' words)
    assert sorted(narrow.split()) == sorted(piped.split())
    # at 40 columns, the narrowest wrapped to, the table still fits: its cells wrap more
    _sized(monkeypatch, [41])
    narrowest = _printed(lines, _Terminal())
    assert max(line_columns(line) for line in narrowest.splitlines()) <= 40, narrowest
    assert "   * tokens       [a, b]     [a, b]" in narrowest.splitlines()

"""`:help` says what the REPL does: every `:command` it lists exists, every one that exists is
listed (and completed), and the defaults it states are the ones in use."""

from __future__ import annotations

import re

from rasp import __version__
from rasp.tools.repl import ReplSession
from rasp.tools.repl_compiled import MIN_MAX_LEN
from rasp.tools.repl_help import COLON_COMMANDS, HELP_TEXT, help_text
from rasp.tools.repl_terminal import completion_candidates
from tests.pty_helpers import on_terminal

LISTED = set(re.findall(r"(?<![\w'])(:[a-z]+)\b", HELP_TEXT))


def test_every_listed_colon_command_exists_and_every_one_is_listed() -> None:
    assert LISTED == set(COLON_COMMANDS)
    session = ReplSession()
    for command in sorted(LISTED):
        assert "unknown command" not in session.feed(command), command
    assert set(completion_candidates(session, ":")) == LISTED


def test_an_unlisted_colon_command_is_unknown() -> None:
    session = ReplSession()
    for command in (":load", ":show", ":run", ":undo"):
        assert command not in LISTED
        assert session.feed(command) == (
            f"error: unknown command {command!r}; type :help for the commands"
        )


def test_other_repls_ways_to_leave_are_answered_with_this_ones() -> None:
    # `:quit` (IPython's %quit, ghci's :q) said only "type :help for the commands"
    session = ReplSession()
    for command in (":quit", ":exit", ":q"):
        assert command not in LISTED
        assert session.feed(command) == (
            f"error: unknown command {command!r}; to leave, type exit or quit (no ':') or Ctrl-D"
        )
    assert not session.finished
    assert session.feed("quit") == "" and session.finished


def test_a_mistyped_colon_command_is_named() -> None:
    session = ReplSession()
    for typo, meant in ((":compil r", ":compile"), (":layer", ":layers"), (":hlep", ":help")):
        word = typo.split()[0]
        assert session.feed(typo) == f"error: unknown command {word!r}; did you mean {meant!r}?"


def test_a_command_cut_short_is_named_where_it_starts_one_only() -> None:
    # `:comp reverse` said only "type :help for the commands"
    session = ReplSession()
    for short, meant in ((":comp reverse", ":compile"), (":ver", ":verify"), (":na", ":names")):
        word = short.split()[0]
        assert session.feed(short) == f"error: unknown command {word!r}; did you mean {meant!r}?"
    assert session.feed(":r") == "error: unknown command ':r'; type :help for the commands"


def test_an_unknown_name_of_a_command_gets_a_hint() -> None:
    # `:compile reverse` before loading the library's reverse said only "Undefined variable"
    session = ReplSession()
    assert session.feed(":compile reverse").splitlines() == [
        "error: Undefined variable: reverse",
        'hint: load "reverse"; first: it reads reverse.rasp, which may define it',
    ]
    for line in (":compile nope", ":type nope"):
        assert session.feed(line).splitlines() == [
            "error: Undefined variable: nope",
            "hint: :names lists the names defined",
        ]


def test_the_listed_repl_commands_run() -> None:
    session = ReplSession()
    for line in (
        "set example [1, 2]",
        "set s-op example [1]",
        "set selector example [2]",
        "show example",
        "show s-op example",
        "show selector example",
        "examples off",
        "s-op examples on",
        "selector examples on",
        "full seq display on",
        "full seq display off",
    ):
        assert "error" not in session.feed(line), line
    assert session.feed("exit") == "" and session.finished
    quitting = ReplSession()
    assert quitting.feed("quit") == "" and quitting.finished


def test_the_defaults_it_states_are_in_use() -> None:
    from compiler.budget import DEFAULT_MAX_PARAMS

    assert f"max({MIN_MAX_LEN}, its length)" in HELP_TEXT
    assert f"(default {DEFAULT_MAX_PARAMS:,})" in re.sub(r"\s+", " ", HELP_TEXT)
    for word in ("help", "help;", "?"):
        assert ReplSession().feed(word) == HELP_TEXT


def test_type_names_a_built_in_form() -> None:
    # `:type select` said "no name 'select'", though select is what a newcomer uses first
    session = ReplSession()
    assert session.feed(":type select") == "\tselect: built-in form, select(keys, queries, OP)"
    assert session.feed(":type aggregate") == (
        "\taggregate: built-in form, aggregate(selector, sop[, default])"
    )
    assert session.feed(":type length") == "\tlength: s-op"


def test_a_question_mark_shows_the_help_also_where_a_program_names_help() -> None:
    # (`?` is no statement: a program that bound `help` made it an "unexpected character" error)
    session = ReplSession()
    session.feed("help = 1;")
    assert session.feed("?") == HELP_TEXT
    assert "value: help" in session.feed("help;")


def test_the_help_fits_the_terminal_and_says_the_same() -> None:
    """On a terminal narrower than the help (100 columns), it is wrapped to the session's width,
    each command's text beside it, or under it below 67 columns; the words stay the same. In a
    pipe (width None), and where it fits, it is as it always was."""
    assert max(len(line) for line in HELP_TEXT.splitlines()) == 99
    for width in (None, 99, 120):
        assert help_text(width) == HELP_TEXT
    for width in range(40, 99):
        text = help_text(width)
        assert text.split() == HELP_TEXT.split(), width
        assert max(len(line) for line in text.splitlines()) <= width, width
        assert "\xa0" not in text
        # a command line to type, and a list, are never cut
        assert "NAME --vocab abc --max-len 5" in text and '["a", 1]' in text
    assert "  :names                             names you defined" in help_text(70)
    assert "  :names\n    names you defined" in help_text(59)
    session = ReplSession()
    session.width = 59
    for word in (":help", "help", "?"):
        assert session.feed(word) == help_text(59)


def test_a_real_terminal_wraps_the_help() -> None:
    """`rasp repl` on a pseudo-terminal 60 columns wide: `:help` and the banner fit in its 59
    (its last column left free, as for every message)."""
    done, lines = on_terminal(["repl"], 60, "stdout", stdin=b":help\n")
    assert done.returncode == 0 and done.stderr == b""
    assert lines[lines.index("  :help") - 25].startswith("RASP statements")
    assert max(map(len, lines)) <= 59, lines  # (the banner too: it was 64 columns)
    assert lines[:2] == [
        f"rasp-forge {__version__} (RASP 0.1 compatible); :help lists the",
        "  commands",
    ]

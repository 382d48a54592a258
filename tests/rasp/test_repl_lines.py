"""The REPL reading statements and commands typed over several lines: when it reads on (as the
original does, and where the original fails), the continuation prompt, Ctrl-C, and a long statement
read in linear time (parsed once, no lexer built per line)."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.tools.repl import ReplSession


@pytest.mark.parametrize(
    ("lines", "shown"),
    [
        (["set", 'example "xy"'], '"xy"'),
        (["set s-op", "example [1]"], "[1]"),
        (["set", "", "s-op example", '"ab"'], '"ab"'),
        (["show", "example"], '"hello"'),
    ],
)
def test_a_command_split_over_lines_reads_on_as_the_original(lines: list[str], shown: str) -> None:
    # The original reads another line while its words leave the command unfinished (`set`,
    # `show s-op`, `s-op examples`), as for `set example` alone.
    session = ReplSession()
    for line in lines[:-1]:
        assert session.feed(line) == "" and session.is_continuing
    session.feed(lines[-1])
    assert not session.is_continuing
    assert session.feed("show s-op example") == f"\ts-op example: {shown}"


@pytest.mark.parametrize(
    "text", ["examples\noff\n", "s-op\nexamples off\n", "full seq display\non\n"]
)
def test_a_toggle_split_over_lines_acts_in_a_longer_text(text: str) -> None:
    # In a longer text (a loaded file, a paste), such a command ends where its words do.
    session = ReplSession()
    out = session.run_text(text + "x = indices;")
    assert "error" not in out
    assert ("Example" not in out) == ("off" in text), out
    assert ("input:" in out) == ("display" in text), out


def test_set_example_without_a_value_reads_on_as_the_original() -> None:
    # Kept on purpose: the original's LineReader reads another line (its `..` prompt) whenever the
    # parser meets the end of the text, so `set example` alone waits for its value there too, a
    # blank line included; Ctrl-C drops it, and `show example` prints the example.
    session = ReplSession()
    assert session.feed("set example") == "" and session.is_continuing
    assert session.continuation_prompt == ".. "
    assert session.feed("") == "" and session.is_continuing
    assert session.feed('"ab"') == "" and not session.is_continuing
    assert session.feed("show example") == '\ts-op example: "ab"\n\tselector example: "ab"'
    assert session.feed("set example") == ""
    session.interrupt()
    assert not session.is_continuing and session.settings.seq_example == "ab"


@pytest.mark.parametrize(
    ("lines", "shown"),
    [
        (["z = (1 -", " 2);"], "value: z =  -1"),
        (["z = round(1 +", " 2);"], "value: z =  3"),
        (["z = aggregate(select(indices +", " 1, indices, ==), indices);"], "s-op: z"),
        (["def g(a) {", "  return a -", "    2;", "}", "z = g(3);"], "value: z =  1"),
        (["def g(a) {", "  return min(max(a,", "    1), 2);", "}", "z = g(3);"], "value: z =  2"),
        (["for i in [1] + [2,", "  3] { z = i; }", "z;"], "value: z =  3"),
        (["z = indicator(has_focus(select(indices,", "  indices, !=)));"], "s-op: z"),
        (["z = [1,  # one", "  2];"], "list: z = [1, 2]"),  # a comment inside an expression
    ],
)
def test_a_statement_goes_on_over_lines_where_the_original_fails(
    lines: list[str], shown: str
) -> None:
    # docs/language.md, section 7: the original's parser fails at an earlier token after these
    # line ends, so it reports a syntax error there and reads the next line on its own.
    session = ReplSession()
    for line in lines[:-1]:
        assert "error" not in session.feed(line)
    printed = session.feed(lines[-1])
    assert "error" not in printed and shown in printed, printed


def test_continuation_and_interrupt() -> None:
    session = ReplSession()
    assert session.feed("def f(a) {") == ""
    assert session.is_continuing
    session.interrupt()  # Ctrl-C drops the partial def
    assert not session.is_continuing
    assert "f" not in session.interpreter.names()
    assert "value: x =  1" in session.feed("x = 1;")


def test_a_long_def_body_is_not_parsed_again_at_each_line(
    parsed_lengths: list[int],
) -> None:
    # each line of a def's body parsed everything typed so far: a 1,500-line body fed to
    # `rasp repl` took 166 s; the brace count now waits for the closing '}'
    session = ReplSession()
    lines = ["def f(a) {", *(f"  b{i} = a + {i};  # {{ " for i in range(50)), "  return a; }"]
    printed = [session.feed(line) for line in lines]
    assert printed[-1] == "     console function: f(a)" and not any(printed[:-1])
    assert len(parsed_lengths) <= 2


def test_a_comprehensions_for_is_no_block_to_wait_on() -> None:
    # a dict comprehension missing its '}' was taken for an open `for` block: its error waited
    # for a '}', and every statement typed meanwhile joined it and never ran
    session = ReplSession()
    out = session.feed("z = {a: 1 for a in range(3);")
    assert out.startswith("<repl>:1:28: error: expected '}' to close '{'"), out
    assert session.feed("w = 5;") == "    value: w =  5"
    # a block's body may still hold comprehensions, and a `for` block starts after a statement
    assert session.feed("def f(x) {") == ""
    assert session.feed("  d = {a: 1 for a in [x]};") == ""
    assert session.feed("  return [a for a in d]; }") == "     console function: f(x)"
    assert session.feed("v = 1; for i in [1, 2] {") == ""
    assert session.feed("  v = v + i; }") == "    value: v =  1"  # (the loop lists nothing)
    assert session.feed("v;") == "    value: v =  4"


def test_a_long_bracketed_statement_is_parsed_once(parsed_lengths: list[int]) -> None:
    # the pending statement was parsed again at each line: a 600-line list literal piped in took
    # ~14 s. Inside an open bracket no statement ends: the REPL reads on without parsing
    session = ReplSession()
    lines = [
        "x = [",
        *(
            f"  {i},  # (a ']' or ';' in a comment or \"];\" counts for nothing)"
            for i in range(300)
        ),
        "  300];",
    ]
    outs = [session.feed(line) for line in lines]
    assert outs[:-1] == [""] * 301 and outs[-1].startswith("     list: x = [0, 1, 2,")
    assert sum(parsed_lengths) < 3 * len("\n".join(lines)), parsed_lengths  # (was ~150 times)
    # an error inside the bracket is reported once it closes, or at a ';' (no statement ends
    # inside a bracket that opens no def or for block)
    assert session.feed("y = [1 2,") == ""
    assert session.feed("  3];").startswith("<repl>:1:8: error:")
    assert session.feed("w = (1,;").startswith("<repl>:1:7: error: expected ')' to close")


def test_a_long_statement_without_a_bracket_is_parsed_once(
    parsed_lengths: list[int],
) -> None:
    # `x = 1 +` continued over 600 lines parsed the whole pending text again at each line (11 s):
    # each line's tokens now go through the parser's automaton once (rasp.continuation)
    session = ReplSession()
    lines = ["x = 1 +", *("  1 +  # a ';' in a comment ends nothing" for _ in range(600)), "  1;"]
    outs = [session.feed(line) for line in lines]
    assert outs[:-1] == [""] * 601 and outs[-1] == "    value: x =  602"
    assert len(parsed_lengths) <= 2 and sum(parsed_lengths) < 3 * len("\n".join(lines)), (
        parsed_lengths
    )  # (was 602)
    # a line that no statement could continue is still an error at once, not at the next ';'
    assert session.feed("y = 1 +") == ""
    assert session.feed("  2 2").startswith("<repl>:2:4: error: expected ';'")
    assert session.feed("z = 3;") == "    value: z =  3"


def test_a_long_statement_builds_no_lexer_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lark's `lex` builds a lexer (and compiles its patterns) at each call: 2 ms a line, the most
    # of reading a long statement once its lines were no longer parsed again
    import lark.lexer

    session = ReplSession()
    assert session.feed("w = 1 +") == ""  # (the parser and its lexers, built once per process)
    assert session.feed("  1;") == "    value: w =  2"
    built: list[int] = []
    init = lark.lexer.BasicLexer.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(lark.lexer.BasicLexer, "__init__", counted)
    outs = [session.feed(line) for line in ["x = 1 +", *["  1 +"] * 200, "  1;"]]
    assert outs[-1] == "    value: x =  202"
    assert not built, len(built)


def test_the_continuation_prompt_counts_only_this_statements_defs() -> None:
    session = ReplSession()
    session.feed("def f(a) {")
    session.feed("  def g(b) {")
    assert session.continuation_prompt == "..     "
    session.interrupt()  # Ctrl-C: a new statement starts
    session.feed("x = 1 +")
    assert session.continuation_prompt == ".. "
    session.feed("  # def")
    session.feed("  2 +")
    assert session.continuation_prompt == ".. "
    assert session.feed("  3;") == "    value: x =  6"
    session.feed("def h(c) {")
    assert session.continuation_prompt == "..   "

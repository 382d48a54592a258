"""Whether the lines of a statement typed so far end it, reading each line once.

The REPL asks after every line whether the statement is complete (`rasp.parser.is_complete`).
Parsing the whole text again at each line made a statement of n lines cost n parses of growing
text: `x = 1 +` continued over 600 lines took 11 s. `Continuation` instead runs each new line's
tokens through the parser's LALR automaton (its states only, no tree) and asks whether the end of
input could come next, so a statement of n lines costs one pass. Its answer is `is_complete`'s:
where it cannot be sure (a token the automaton refuses, whose error `is_complete` classifies; a
REPL command line, whose text `parse` rewrites; a token that may go on in the next line) it asks
`is_complete` itself. `parse_recovering` reads a file so, statement by statement (`load` in the
REPL of a file with a syntax error).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any

from lark.exceptions import UnexpectedInput
from lark.lexer import BasicLexer, LexerThread
from lark.parsers.lalr_analysis import Shift

from rasp import (
    ast,
    parser,  # (parser.parse: one name, which the tests count calls of)
)
from rasp.errors import RaspSyntaxError, Source
from rasp.parser import is_complete, lark_parser, open_block, open_bracket, starts_command

# Names that, with a '(' at the start of the next line, lex as one token (`select\n(` is
# SELECT_OPEN in the whole text): a line ending with one is not read on its own.
_OPEN_WORDS = frozenset({"select", "aggregate", "range", "zip", "len"})


@functools.lru_cache(maxsize=1)
def _lexer() -> BasicLexer:
    # (built once: `Lark.lex` builds a lexer, and compiles its patterns, at every call: 2 ms a line)
    return BasicLexer(lark_parser().lexer_conf)


def _tokens(line: str) -> Iterator[Any]:
    return LexerThread.from_text(_lexer(), line).lex(None)  # type: ignore[arg-type]


class _Unsure(Exception):
    """This line cannot be read apart from the whole text."""


class Continuation:
    """One statement's lines, read as they come: `is_complete(lines)` with `lines` the statement's
    lines so far (each call the same list grown at its end)."""

    def __init__(self) -> None:
        conf = lark_parser().parse_interactive("").parser_state.parse_conf
        self._states: dict[Any, dict[str, tuple[Any, Any]]] = conf.states
        self._end = conf.end_state
        self._stack: list[Any] | None = [conf.start_state]  # None: ask is_complete
        self._read = 0  # lines whose tokens went through the automaton

    def is_complete(self, lines: Sequence[str]) -> bool:
        """False while `lines` stop inside an unfinished statement (`rasp.parser.is_complete`)."""
        if self._stack is not None:
            try:
                for line in lines[self._read :]:
                    self._read_line(self._stack, line)
                    self._read += 1
                return self._ends(list(self._stack))
            except (_Unsure, UnexpectedInput, KeyError):
                self._stack = None  # (a refused token: the error's words decide, not this)
        return is_complete("\n".join(lines))

    def _read_line(self, stack: list[Any], line: str) -> None:
        if any(map(starts_command, line.split("\n"))):  # (`parse` may end it with a ';')
            raise _Unsure
        token = None
        for token in _tokens(line):
            self._feed(stack, token.type)
        if token is not None and token.type == "NAME" and token.value in _OPEN_WORDS:
            raise _Unsure

    def _ends(self, stack: list[Any]) -> bool:
        try:
            return self._feed(stack, "$END")
        except KeyError:
            return False

    def _feed(self, stack: list[Any], terminal: str) -> bool:
        """One token through the automaton (KeyError: refused); True when it ends the input."""
        while True:
            action, arg = self._states[stack[-1]][terminal]
            if action is Shift:
                stack.append(arg)
                return False
            if arg.expansion:
                del stack[-len(arg.expansion) :]
            stack.append(self._states[stack[-1]][arg.origin.name][1])
            if terminal == "$END" and stack[-1] == self._end:
                return True


def parse_recovering(source: Source) -> list[ast.Stmt | RaspSyntaxError]:
    """A file the REPL loads, read as the original's REPL reads one: line by line, each statement
    parsed as soon as its lines complete it, so that a syntax error costs only the statement it is
    in. Statements and syntax errors (located in the file) in the file's order. The caller tries
    `parse` first; this is the slower path for a file with a syntax error."""
    out: list[ast.Stmt | RaspSyntaxError] = []
    lines = source.text.split("\n")
    first = 0  # the first line of the statement being read
    reader = Continuation()  # the statement's lines, each read once
    for number in range(len(lines)):
        text = "\n".join(lines[first : number + 1])
        more = number + 1 < len(lines)
        if more and (
            open_block(text)
            or open_bracket(text)
            or not reader.is_complete(lines[first : number + 1])
        ):
            # no statement ends inside a def's or for's body or an open bracket: a syntax error
            # there waits for its closing '}' or bracket, as typed in the REPL, so that the rest
            # of a body is not run as statements of their own (and a long statement is not
            # parsed again at each line, which was quadratic)
            continue
        # blank lines before the statement keep its lines (and spans) where they are in the file
        chunk = Source(source.name, "\n" * first + text)
        try:
            out += parser.parse(chunk).statements
        except RaspSyntaxError as exc:
            if more and exc.incomplete:
                continue  # the statement goes on in the next line
            exc.statement = (first + 1, text)  # (the REPL reads the names it would have bound)
            out.append(exc)
        first, reader = number + 1, Continuation()
    return out

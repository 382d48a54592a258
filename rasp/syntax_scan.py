"""Where a parse error stopped, read from the text: the brackets still open there (innermost
last, each named as a RASP user knows it: `'select('`), the token before it, the commas that
separate a call's arguments, and a token's span."""

from __future__ import annotations

from dataclasses import dataclass

from lark import Lark, Token
from lark.exceptions import UnexpectedInput

from rasp.errors import Source, Span
from rasp.foreign_syntax import previous_word

CLOSERS = {"(": ")", "[": "]", "{": "}"}
CLOSER_TERMINALS = {")": "RPAR", "]": "RSQB", "}": "RBRACE"}
_WORD_OPENERS = {"select", "aggregate", "range", "zip", "len", "round", "indicator", "draw"}


@dataclass(frozen=True)
class Opener:
    """An unclosed bracket: its character, how to name it (`'select('`) and where it is."""

    char: str
    label: str
    pos: int


def open_brackets(text: str, stop: int) -> list[Opener]:
    """The brackets still open at offset `stop`, innermost last (strings and comments skipped)."""
    stack: list[Opener] = []
    i = 0
    while i < min(stop, len(text)):
        char = text[i]
        if char == '"':
            close = text.find('"', i + 1)
            i = len(text) if close < 0 else close + 1
            continue
        if char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline + 1
            continue
        if char in CLOSERS:
            stack.append(Opener(char, *_label(text, i)))
        elif char in CLOSER_TERMINALS and stack and CLOSERS[stack[-1].char] == char:
            stack.pop()
        i += 1
    return stack


def _label(text: str, pos: int) -> tuple[str, int]:
    """How to name the bracket at `pos` (`'select('` after a known word, else the bracket itself),
    and where that name starts."""
    char = text[pos]
    word, k = previous_word(text, pos)
    if char == "(" and word in _WORD_OPENERS:
        return f"'{word}('", k
    if char == "(" and word.isidentifier():
        return f"the call '{word}('", k
    return f"'{char}'", pos


def is_block(text: str, pos: int) -> bool:
    """Whether the '{' at `pos` opens a def's or for's body (after a name, ')' or ']'), not a dict."""
    before = text[:pos].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in "_)]")


def top_level_commas(text: str, start: int, stop: int) -> int:
    """The ','s between the bracket at `start` and `stop` that separate its own arguments."""
    commas = depth = 0
    i = start + 1
    while i < stop:
        char = text[i]
        if char == '"':
            close = text.find('"', i + 1)
            i = stop if close < 0 else close
        elif char == "#":
            newline = text.find("\n", i)
            i = stop if newline < 0 else newline
        elif char in CLOSERS:
            depth += 1
        elif char in CLOSER_TERMINALS:
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
        i += 1
    return commas


def previous_token(lark: Lark, text: str, pos: int) -> Token | None:
    """The last token that starts before offset `pos` (None at the start of the text)."""
    found = None
    try:
        for token in lark.lex(text):
            if (token.start_pos or 0) >= pos:
                break
            found = token
    except UnexpectedInput:
        pass
    return found


def previous_token_end(lark: Lark, text: str, pos: int) -> int:
    """Offset just after the last token that starts before `pos` (where a missing ';' belongs)."""
    before = previous_token(lark, text, pos)
    return 0 if before is None else before.end_pos or 0


def token_span(source: Source, token: Token) -> Span:
    return Span(
        source, token.line or 1, token.column or 1, token.end_line or 1, token.end_column or 1
    )

"""Turning Lark's parse errors into `RaspSyntaxError`s that speak RASP, not terminal names.

Each message says what is wrong in the words a RASP user knows (`expected ')' to close 'select('`,
`'=' is assignment; use '==' to compare`), with the caret where the fix goes and a hint. An error at
the end of the text is `incomplete` (the REPL reads another line instead of reporting it).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from rasp.errors import RaspSyntaxError, Source, Span
from rasp.foreign_syntax import (
    doubled_operator,
    foreign_character,
    foreign_word,
    previous_word,
    span_at,
)

_FRIENDLY = {
    "NAME": "a name",
    "INT": "a number",
    "FLOAT": "a number",
    "STRING": "a string",
    "$END": "the end of the input",
    "SELECT_OPEN": "'select('",
    "AGGREGATE_OPEN": "'aggregate('",
    "RANGE_OPEN": "'range('",
    "ZIP_OPEN": "'zip('",
    "LEN_OPEN": "'len('",
    "FULL_SEQ_DISPLAY": "'full seq display'",
}
_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_CLOSER_TERMINALS = {")": "RPAR", "]": "RSQB", "}": "RBRACE"}
_COMPOUND = frozenset("+-*/%^")  # the operators Python writes before `=`
_COMPARISON_TERMINALS = {"EQ", "NE", "LE", "GE", "LT", "GT"}
_WORD_OPENERS = {"select", "aggregate", "range", "zip", "len", "round", "indicator", "draw"}
COMPARISON_HINT = "select(keys, queries, OP) takes one of == != < > <= >="
# tracr's Comparison names (and common spellings), as a RASP comparison
_COMPARISON_WORDS = {
    "eq": "==", "neq": "!=", "ne": "!=", "lt": "<", "leq": "<=", "le": "<=", "gt": ">",
    "geq": ">=", "ge": ">=",
}  # fmt: skip
# Where Lark expects these (and no statement), a value is missing: an operand, an argument.
_VALUE_STARTS = {"NAME", "INT", "LPAR"}
_STATEMENT_STARTS = {"DEF", "FOR", "LOAD"}
_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "CARET", "AND", "OR", "NOT", "IN"}
_OPERATORS |= _COMPARISON_TERMINALS
_VALUE_WORDS = "a name, a number, a string, a call or (...)"
# Built-ins whose arguments are fixed: the fewest ','s, how many arguments, the call written out.
_ARGUMENTS = {
    "'select('": (2, "3 arguments", "select(keys, queries, OP) with OP one of == != < > <= >="),
    "'aggregate('": (
        1,
        "2 or 3 arguments",
        "aggregate(selector, sop) or aggregate(selector, sop, default)",
    ),
}


@dataclass(frozen=True)
class _Opener:
    """An unclosed bracket: its character, how to name it (`'select('`) and where it is."""

    char: str
    label: str
    pos: int


def translate_error(exc: UnexpectedInput, source: Source, lark: Lark) -> RaspSyntaxError:
    text = source.text
    if isinstance(exc, UnexpectedCharacters):
        return _bad_character(exc, source)
    if not isinstance(exc, UnexpectedToken):
        pos = len(text.rstrip())
        return RaspSyntaxError("unexpected end of input", span_at(source, pos), incomplete=True)
    token = exc.token
    at_end = token.type == "$END"
    pos = len(text.rstrip()) if at_end else (token.start_pos or 0)
    expected = set(exc.expected)
    openers = _open_brackets(text, pos)
    here = span_at(source, pos) if at_end else _token_span(source, token)
    shown = "the end of the input" if at_end else f"'{token.value}'"

    value = str(token.value)
    if not at_end and (value[:1].isalnum() or value[:1] in '_("['):
        habit = foreign_word(source, pos, value)
        if habit is not None:
            return habit
    habit = None if at_end else doubled_operator(source, pos)
    if habit is not None:
        return habit
    keyword = _keyword_before(lark, source, token, expected)
    if keyword is not None:
        return keyword
    if token.type == "EQUAL" and "EQUAL" not in expected:
        before = text[token.start_pos - 1] if token.start_pos else ""
        if before in _COMPOUND:  # `x += 1`, Python's augmented assignment
            return RaspSyntaxError(
                f"RASP has no '{before}=' (augmented assignment)",
                Span(source, here.line, here.col - 1, here.line, here.col + 1),
                f"write it out: name = name {before} value;",
            )
        following = text[token.end_pos : (token.end_pos or 0) + 1] if token.end_pos else ""
        if following in ("<", ">") and expected <= _COMPARISON_TERMINALS:
            return RaspSyntaxError(
                f"unknown comparison '={following}'",
                Span(source, here.line, here.col, here.line, here.col + 2),
                f"did you mean '{following}='?",
            )
        named = _keyword_argument(source, pos, openers[-1] if openers else None)
        if named is not None:
            return named
        hint = (
            COMPARISON_HINT
            if expected <= _COMPARISON_TERMINALS
            else ("to name a value, write the assignment as its own statement: name = value;")
        )
        return RaspSyntaxError("'=' is assignment; use '==' to compare", here, hint)
    if expected and expected <= _COMPARISON_TERMINALS:
        # tracr's `Comparison.LT` reaches here as 'Comparison': its last part names the comparison
        dotted = None if at_end else re.match(r"[A-Za-z_][\w.]*\w", text[token.start_pos :])
        hint = None
        if dotted is not None:
            word = dotted.group()
            hint = _comparison_word_hint(word.rsplit(".", 1)[-1])
            shown = f"'{word}'"
            here = Span(source, here.line, here.col, here.line, here.col + len(word))
        message = f"unknown comparison {shown}"
        return RaspSyntaxError(message, here, hint or COMPARISON_HINT, incomplete=at_end)
    if token.type == "RETURN" and _misplaced_return(text, token, expected, openers):
        # `return x;` outside a def (at the top level, in a for): not a name, a misplaced return
        return RaspSyntaxError(
            "'return' outside a def",
            here,
            "only a def's body ends with 'return value;' (def f(x) { ... return value; }); "
            "elsewhere, bind the value: name = value;",
        )
    if _is_keyword(token) and "NAME" in expected:
        return RaspSyntaxError(
            f"'{token.value}' is a keyword and cannot be used as a name",
            here,
            _keyword_hint(token),
            incomplete=at_end,
        )
    innermost = openers[-1] if openers else None
    if token.type in _COMPARISON_TERMINALS and innermost is not None:
        word = innermost.label.removeprefix("the call '").removesuffix("('")
        capital = word.lower() == "select" and word != "select"
        hint = "did you mean 'select('? RASP's built-ins are lowercase" if capital else None
        if not capital and word != "select" and _misspells_select(word):
            hint = f"did you mean 'select('? {COMPARISON_HINT}"
        return RaspSyntaxError(f"{shown} on its own is not a value", here, hint or COMPARISON_HINT)
    # A def's or for's body is a '{' after ')' or a name; a dict's '{' follows an operator.
    in_block = innermost is not None and innermost.char == "{" and _is_block(text, innermost.pos)
    if token.type in _CLOSER_TERMINALS.values() and innermost is None:
        # `aggregate(s, v));`: one closer too many, where the statement could end
        return RaspSyntaxError(
            f"unmatched '{token.value}'", here, "nothing was opened here to close"
        )
    if "SEMICOLON" in expected and (not openers or in_block):
        end = _previous_token_end(lark, text, pos)
        return RaspSyntaxError(
            "expected ';' after the statement",
            span_at(source, end),
            _misspelt_command(lark, text, pos)
            or "every statement ends with ';' (a def or for ends with '}')",
            incomplete=at_end,
        )
    if token.type == "SEMICOLON" and expected & _STATEMENT_STARTS and (not openers or in_block):
        # A statement could start here, so this ';' ends an empty one.
        after_block = text[: _previous_token_end(lark, text, pos)].endswith("}")
        hint = "a def or for ends with '}', without ';'" if after_block else None
        return RaspSyntaxError("unexpected ';'", here, hint or "a statement cannot be empty")
    missing = _missing_comma(text, pos, here, expected, innermost)
    if missing is not None:
        missing.incomplete = at_end
        return missing
    if (
        token.type == "COMMA"
        and "COMMA" not in expected
        and innermost is not None
        and innermost.label in _ARGUMENTS
    ):  # `aggregate(s, v, d, x)`: the ',' after the last argument it takes
        _, count, usage = _ARGUMENTS[innermost.label]
        return RaspSyntaxError(
            f"too many arguments: {innermost.label} takes {count}", here, f"write {usage}"
        )
    if innermost is not None and _CLOSER_TERMINALS[_CLOSERS[innermost.char]] in expected:
        closer = _CLOSERS[innermost.char]
        opened = span_at(source, innermost.pos)
        wanted = f"',' or '{closer}'" if "COMMA" in expected else f"'{closer}'"
        return RaspSyntaxError(
            f"expected {wanted} to close {innermost.label}",
            here,
            f"{innermost.label} was opened at line {opened.line}, column {opened.col}",
            incomplete=at_end,
        )
    missing = _missing_value(lark, source, pos, here, expected, innermost)
    if missing is not None:
        missing.incomplete = at_end
        return missing
    if at_end:
        return RaspSyntaxError(
            "unexpected end of input", here, _expected_hint(lark, expected), incomplete=True
        )
    if token.type == "RBRACE" and "RETURN" in expected:
        return RaspSyntaxError(
            "a def ends with a return statement", here, "write 'return value;' before the '}'"
        )
    if token.type in _CLOSER_TERMINALS.values() and innermost is None:
        return RaspSyntaxError(
            f"unmatched '{token.value}'", here, "nothing was opened here to close"
        )
    return RaspSyntaxError(f"unexpected {shown}", here, _expected_hint(lark, expected))


def _misplaced_return(text: str, token: Token, expected: set[str], openers: list[_Opener]) -> bool:
    """`return x;` starting a statement outside any def's body (not `return = 1;`, a keyword
    written as a name, nor a second return in a def)."""
    start = token.start_pos or 0
    if "RETURN" in expected or text[:start].rstrip()[-1:] not in ("", ";", "{", "}"):
        return False
    after = text[token.end_pos or 0 :].lstrip()
    if after.startswith(",") or (after.startswith("=") and not after.startswith("==")):
        return False
    return not any(
        o.char == "{" and re.search(r"\bdef\s+\w+\s*\([^()]*\)\s*$", text[: o.pos]) for o in openers
    )


def _is_keyword(token: Token) -> bool:
    """A word the lexer reads as a keyword: `set`, `exit`, `round`, `on`, `s-op`, ..."""
    return token.type != "NAME" and (str(token.value).isidentifier() or token.type == "SOP_WORD")


def _keyword_hint(keyword: Token) -> str:
    if keyword.type == "SOP_WORD":
        return "choose another name; to subtract, write s - op, with spaces"
    if keyword.type in ("ROUND", "INDICATOR"):
        return f"choose another name; {keyword.value} is called on a value: {keyword.value}(x)"
    return "choose another name"


def _keyword_before(
    lark: Lark, source: Source, token: Token, expected: set[str]
) -> RaspSyntaxError | None:
    """`set = 1;`, `exit, y = 1, 2;`, `x = round;`: the keyword before the unexpected token is
    what is wrong (the statement it starts, `set example ...`, expected something else; Lark
    names the '=', which read as "'=' is assignment; use '==' to compare")."""
    if token.type == "$END":
        return None
    text = source.text
    before = _previous_token(lark, text, token.start_pos or 0)
    if before is None or not _is_keyword(before):
        return None
    starts_statement = text[: before.start_pos or 0].rstrip()[-1:] in ("", ";", "{", "}")
    called = before.type in ("ROUND", "INDICATOR") and expected == {"LPAR"}
    if not ((token.type in ("EQUAL", "COMMA") and starts_statement) or called):
        return None
    return RaspSyntaxError(
        f"'{before.value}' is a keyword and cannot be used as a name",
        _token_span(source, before),
        _keyword_hint(before),
    )


def _keyword_argument(
    source: Source, pos: int, innermost: _Opener | None
) -> RaspSyntaxError | None:
    """`aggregate(sel, v, default=0)`, `f(x=1)`: Python's keyword argument, at the '=' (`pos`)."""
    if innermost is None or innermost.char != "(" or innermost.label == "'('":
        return None
    text = source.text
    word, start = previous_word(text, pos)
    if not word.isidentifier() or text[:start].rstrip()[-1:] not in ("(", ","):
        return None
    call = innermost.label.removeprefix("the call ").strip("'").removesuffix("(")
    if call == "aggregate" and word == "default":
        hint = "pass the default as the third argument: aggregate(sel, v, 0)"
    elif innermost.label in _ARGUMENTS:
        hint = f"{call} takes its arguments in order: {_ARGUMENTS[innermost.label][2]}"
    else:
        hint = f"pass the value alone, in its place among {call}'s arguments"
    return RaspSyntaxError(
        f"RASP has no keyword arguments ('{word}=')", span_at(source, start, pos + 1 - start), hint
    )


def _missing_value(
    lark: Lark,
    source: Source,
    pos: int,
    here: Span,
    expected: set[str],
    innermost: _Opener | None,
) -> RaspSyntaxError | None:
    """`tokens +;`, `x = ;`, `f(a, )`: a value was expected (not a statement); the message names
    the token after which it is missing, so it never reads as an empty statement."""
    if not _VALUE_STARTS <= expected or expected & _STATEMENT_STARTS:
        return None
    before = _previous_token(lark, source.text, pos)
    if before is None:
        return None
    shown = f"'{before.value}'"
    if before.type in _OPERATORS:
        return RaspSyntaxError(
            f"expected an operand after {shown}",
            here,
            f"write a value after {shown} ({_VALUE_WORDS}), or remove the {shown}",
        )
    if before.type == "EQUAL":
        return RaspSyntaxError(
            "expected a value after '='", here, "an assignment needs a value: name = value;"
        )
    if before.type == "COMMA" and innermost is not None and innermost.label in _ARGUMENTS:
        _, count, usage = _ARGUMENTS[innermost.label]
        return RaspSyntaxError(
            "expected an argument after ','", here, f"{innermost.label} takes {count}: {usage}"
        )
    if before.type == "COMMA":
        return RaspSyntaxError(
            "expected a value after ','", here, "write the missing value, or remove the ','"
        )
    return RaspSyntaxError(f"expected a value after {shown}", here, f"write {_VALUE_WORDS}")


def _missing_comma(
    text: str, pos: int, here: Span, expected: set[str], innermost: _Opener | None
) -> RaspSyntaxError | None:
    """`select(indices, indices;`: a built-in that takes a fixed number of arguments has too few
    so far, so only ',' can follow (Lark's merged states may also offer ')')."""
    if "COMMA" not in expected or innermost is None or innermost.label not in _ARGUMENTS:
        return None
    fewest, count, usage = _ARGUMENTS[innermost.label]
    if _top_level_commas(text, text.index("(", innermost.pos), pos) >= fewest:
        return None
    return RaspSyntaxError(
        f"expected ',' and another argument: {innermost.label} takes {count}", here, usage
    )


def _top_level_commas(text: str, start: int, stop: int) -> int:
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
        elif char in _CLOSERS:
            depth += 1
        elif char in _CLOSER_TERMINALS:
            depth -= 1
        elif char == "," and depth == 0:
            commas += 1
        i += 1
    return commas


def _bad_character(exc: UnexpectedCharacters, source: Source) -> RaspSyntaxError:
    pos = exc.pos_in_stream
    char = source.text[pos] if pos < len(source.text) else ""
    here = span_at(source, pos)
    habit = foreign_character(source, pos)
    if habit is not None:
        return habit
    if char == '"':
        return RaspSyntaxError(
            "unterminated string",
            here,
            'a string ends with " on the same line and cannot contain "',
        )
    if char == "'":
        return RaspSyntaxError(
            "strings are written in double quotes", here, "write \"abc\", not 'abc'"
        )
    if char == "!":
        return RaspSyntaxError("unexpected '!'", here, "write 'not x' to negate; '!=' compares")
    if char == ".":
        return RaspSyntaxError(
            "a float needs digits on both sides of '.'", here, "write 0.5 or 5.0, not .5 or 5."
        )
    if char == "=":
        return RaspSyntaxError("'=' is assignment; use '==' to compare", here)
    return RaspSyntaxError(f"unexpected character {char!r}", here)


def _expected_hint(lark: Lark, expected: set[str]) -> str | None:
    names = sorted({_friendly(lark, name) for name in expected})
    if not names:
        return None
    if len(names) > 8:
        return "expected " + ", ".join(names[:8]) + ", ..."
    return "expected " + ", ".join(names)


def _friendly(lark: Lark, name: str) -> str:
    if name in _FRIENDLY:
        return _FRIENDLY[name]
    try:
        pattern = lark.get_terminal(name).pattern
    except KeyError:
        return name.lower()
    if isinstance(pattern, PatternStr):
        return f"'{pattern.value}'"
    return name.lower()


def _token_span(source: Source, token: Token) -> Span:
    return Span(
        source, token.line or 1, token.column or 1, token.end_line or 1, token.end_column or 1
    )


def _previous_token_end(lark: Lark, text: str, pos: int) -> int:
    """Offset just after the last token that starts before `pos` (where a missing ';' belongs)."""
    before = _previous_token(lark, text, pos)
    return 0 if before is None else before.end_pos or 0


def _previous_token(lark: Lark, text: str, pos: int) -> Token | None:
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


def _open_brackets(text: str, stop: int) -> list[_Opener]:
    """The brackets still open at offset `stop`, innermost last (strings and comments skipped)."""
    stack: list[_Opener] = []
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
        if char in _CLOSERS:
            stack.append(_Opener(char, *_label(text, i)))
        elif char in _CLOSER_TERMINALS and stack and _CLOSERS[stack[-1].char] == char:
            stack.pop()
        i += 1
    return stack


def _is_block(text: str, pos: int) -> bool:
    before = text[:pos].rstrip()
    return bool(before) and (before[-1].isalnum() or before[-1] in "_)]")


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


def _misspells_select(word: str) -> bool:
    """`selct`, `slect`, `selet`, `selecct`: a call name one or two typos from `select`."""
    return word.isidentifier() and bool(
        difflib.get_close_matches(word.lower(), ["select"], n=1, cutoff=0.75)
    )


# The REPL commands (statements too, as in the original), by their first word.
_COMMANDS = {
    "show": "show [s-op|selector] example",
    "set": "set [s-op|selector] example E",
    "examples": "[s-op|selector] examples on|off",
    "full": "full seq display on|off",
}


def _misspelt_command(lark: Lark, text: str, pos: int) -> str | None:
    """`sho example`, `exmaples off`, `full seq on`: a statement that is one name followed by
    another word, where that name is (nearly) a REPL command's first word."""
    first = _previous_token(lark, text, pos)
    if first is None or first.type != "NAME":
        return None
    start = first.start_pos or 0
    if text[:start].strip() and text[:start].rstrip()[-1] not in ";}":
        return None  # not a statement's first word
    word = str(first.value)
    close = difflib.get_close_matches(word.lower(), list(_COMMANDS), n=1, cutoff=0.6)
    return f"did you mean the REPL command {_COMMANDS[close[0]]}?" if close else None


def _comparison_word_hint(word: str) -> str | None:
    """A hint for a comparison written as a word: tracr's `LT` is RASP's `<`, and tracr's
    `TRUE`/`FALSE` selectors are RASP's `select(1, 1, ==)` (the prelude's `full_s`) and
    `select(1, 0, ==)`."""
    lower = word.lower()
    if lower in _COMPARISON_WORDS:
        return f"did you mean '{_COMPARISON_WORDS[lower]}'? {COMPARISON_HINT}"
    if lower == "true":
        return "RASP has no TRUE comparison: the selector of every pair is full_s, select(1, 1, ==)"
    if lower == "false":
        return "RASP has no FALSE comparison: the selector of no pair is select(1, 0, ==)"
    return None

"""Turning Lark's parse errors into `RaspSyntaxError`s that speak RASP, not terminal names.

Each message says what is wrong in the words a RASP user knows (`expected ')' to close 'select('`,
`'=' is assignment; use '==' to compare`), with the caret where the fix goes and a hint. An error at
the end of the text is `incomplete` (the REPL reads another line instead of reporting it).
"""

from __future__ import annotations

import difflib
import re

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lexer import PatternStr

from rasp.argument_errors import (
    ARGUMENTS,
    COMPARISON_TERMINALS,
    STATEMENT_STARTS,
    VALUE_STARTS,
    comprehension_filter,
    keyword_argument,
    missing_comma,
    missing_value,
)
from rasp.errors import RaspSyntaxError, Source, Span
from rasp.foreign_syntax import (
    doubled_operator,
    foreign_character,
    foreign_word,
    previous_word,
    span_at,
    typographic_character,
)
from rasp.keyword_errors import keyword_before, unexpected_keyword
from rasp.syntax_scan import (
    CLOSER_TERMINALS,
    CLOSERS,
    Opener,
    is_block,
    open_brackets,
    previous_token,
    previous_token_end,
    token_span,
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
_COMPOUND = frozenset("+-*/%^")  # the operators Python writes before `=`
COMPARISON_HINT = "select(keys, queries, OP) takes one of == != < > <= >="
# tracr's Comparison names (and common spellings), as a RASP comparison
_COMPARISON_WORDS = {
    "eq": "==", "neq": "!=", "ne": "!=", "lt": "<", "leq": "<=", "le": "<=", "gt": ">",
    "geq": ">=", "ge": ">=",
}  # fmt: skip
_AFTER_LOOP_NAMES = re.compile(r"\bfor\s+[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*$")


def translate_error(exc: UnexpectedInput, source: Source, lark: Lark) -> RaspSyntaxError:
    error = _translate(exc, source, lark)
    if isinstance(exc, UnexpectedToken | UnexpectedCharacters):
        pos = exc.pos_in_stream if isinstance(exc, UnexpectedCharacters) else exc.token.start_pos
        escaped = _escaped_quote(lark, source.text, pos or 0)
        if escaped is not None:  # the real cause: the '"' after the '\\' ended the string
            error.hint = (
                f"RASP strings have no escapes: '\\' is an ordinary character, so the '\"' after it ends "
                f"the string {escaped}; a string cannot contain '\"' (write another character)"
            )
    return error


def _escaped_quote(lark: Lark, text: str, pos: int) -> str | None:
    """The string just before `pos` if it ends with `\\"`, as a C-like escape would not."""
    before = previous_token(lark, text, pos)
    if before is None or before.type != "STRING" or not before.value.endswith('\\"'):
        return None
    return before.value if not text[before.end_pos : pos].strip() else None


def _translate(exc: UnexpectedInput, source: Source, lark: Lark) -> RaspSyntaxError:
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
    openers = open_brackets(text, pos)
    here = span_at(source, pos) if at_end else token_span(source, token)
    shown = "the end of the input" if at_end else f"'{token.value}'"

    value = str(token.value)
    if not at_end and (value[:1].isalnum() or value[:1] in '_("['):
        habit = foreign_word(source, pos, value)
        if habit is not None:
            return habit
    habit = None if at_end else doubled_operator(source, pos)
    if habit is not None:
        return habit
    keyword = keyword_before(lark, source, token, expected)
    if keyword is not None:
        return keyword
    if token.type == "COLON" and expected == {"LBRACE"}:  # Python's `def f(x):`, `for x in l:`
        return RaspSyntaxError(
            "a def's or for's body is in braces, not after ':'",
            here,
            "def f(x) { return x + 1; }  or  for i in range(3) { ... }",
        )
    if token.type == "COLON" and openers and _subscript(text, openers[-1]):
        # Python's slice, `tokens[1:]`: Lark only expected the ']'
        return RaspSyntaxError(
            "RASP has no slices ('x[a:b]')",
            here,
            "an index is one whole number (x[0]; x[-1], the last); to move an s-op's values by n "
            'positions, shift(x, n, filler): shift(tokens, -1, "_") reads the next position; a '
            "list's part is a comprehension, [l[i] for i in range(1, len(l))]",
        )
    if token.type == "EQUAL" and "EQUAL" not in expected:
        before = text[token.start_pos - 1] if token.start_pos else ""
        if before in _COMPOUND:  # `x += 1`, Python's augmented assignment
            return RaspSyntaxError(
                f"RASP has no '{before}=' (augmented assignment)",
                Span(source, here.line, here.col - 1, here.line, here.col + 1),
                f"write it out: name = name {before} value;",
            )
        following = text[token.end_pos : (token.end_pos or 0) + 1] if token.end_pos else ""
        if following in ("<", ">") and expected <= COMPARISON_TERMINALS:
            return RaspSyntaxError(
                f"unknown comparison '={following}'",
                Span(source, here.line, here.col, here.line, here.col + 2),
                f"did you mean '{following}='?",
            )
        named = keyword_argument(source, pos, openers[-1] if openers else None)
        if named is not None:
            return named
        hint = (
            COMPARISON_HINT
            if expected <= COMPARISON_TERMINALS
            else ("to name a value, write the assignment as its own statement: name = value;")
        )
        return RaspSyntaxError("'=' is assignment; use '==' to compare", here, hint)
    if expected and expected <= COMPARISON_TERMINALS:
        # tracr's `Comparison.LT` reaches here as 'Comparison': its last part names the comparison
        dotted = None if at_end else re.match(r"[A-Za-z_][\w.]*\w", text[token.start_pos :])
        hint = None
        if dotted is not None:
            word = dotted.group()
            hint = _comparison_word_hint(word.rsplit(".", 1)[-1])
            shown = f"'{word}'"
            here = Span(source, here.line, here.col, here.line, here.col + len(word))
        quoted = None if at_end else re.match(r'"(==|!=|<=|>=|<|>|=)"', text[token.start_pos :])
        if quoted is not None:  # `select(k, q, "==")`: the comparison is written bare
            op = "==" if quoted.group(1) == "=" else quoted.group(1)
            hint = f"write the comparison without quotes: select(keys, queries, {op})"
        message = f"unknown comparison {shown}"
        return RaspSyntaxError(message, here, hint or COMPARISON_HINT, incomplete=at_end)
    keyword = unexpected_keyword(text, token, expected, openers, here, at_end)
    if keyword is not None:
        return keyword
    innermost = openers[-1] if openers else None
    if token.type in COMPARISON_TERMINALS and innermost is not None:
        word = innermost.label.removeprefix("the call '").removesuffix("('")
        capital = word.lower() == "select" and word != "select"
        hint = "did you mean 'select('? RASP's built-ins are lowercase" if capital else None
        if not capital and word != "select" and _misspells_select(word):
            hint = f"did you mean 'select('? {COMPARISON_HINT}"
        return RaspSyntaxError(f"{shown} on its own is not a value", here, hint or COMPARISON_HINT)
    # A def's or for's body is a '{' after ')' or a name; a dict's '{' follows an operator.
    in_block = innermost is not None and innermost.char == "{" and is_block(text, innermost.pos)
    if (
        token.type in CLOSER_TERMINALS.values()
        and innermost is None
        and not VALUE_STARTS <= expected  # `x = 1 + )`: the operand is missing first
    ):
        # `aggregate(s, v));`: one closer too many, where the statement could end
        return RaspSyntaxError(
            f"unmatched '{token.value}'", here, "nothing was opened here to close"
        )
    if "SEMICOLON" in expected and (not openers or in_block):
        end = previous_token_end(lark, text, pos)
        return RaspSyntaxError(
            "expected ';' after the statement",
            span_at(source, end),
            _misspelt_command(lark, text, pos)
            or "every statement ends with ';' (a def or for ends with '}')",
            incomplete=at_end,
        )
    if token.type == "SEMICOLON" and expected & STATEMENT_STARTS and (not openers or in_block):
        # A statement could start here, so this ';' ends an empty one.
        after_block = text[: previous_token_end(lark, text, pos)].endswith("}")
        hint = "a def or for ends with '}', without ';'" if after_block else None
        return RaspSyntaxError("unexpected ';'", here, hint or "a statement cannot be empty")
    missing = missing_comma(text, pos, here, expected, innermost)
    if missing is not None:
        missing.incomplete = at_end
        return missing
    if (
        token.type == "COMMA"
        and "COMMA" not in expected
        and innermost is not None
        and innermost.label in ARGUMENTS
    ):  # `aggregate(s, v, d, x)`: the ',' after the last argument it takes
        _, count, usage = ARGUMENTS[innermost.label]
        return RaspSyntaxError(
            f"too many arguments: {innermost.label} takes {count}", here, f"write {usage}"
        )
    if innermost is not None and CLOSER_TERMINALS[CLOSERS[innermost.char]] in expected:
        closer = CLOSERS[innermost.char]
        opened = span_at(source, innermost.pos)
        wanted = f"',' or '{closer}'" if "COMMA" in expected else f"'{closer}'"
        return RaspSyntaxError(
            f"expected {wanted} to close {innermost.label}",
            here,
            f"{innermost.label} was opened at line {opened.line}, column {opened.col}",
            incomplete=at_end,
        )
    python_filter = comprehension_filter(source, pos, token, expected, innermost)
    if python_filter is not None:
        return python_filter
    missing = missing_value(lark, source, pos, here, expected, innermost)
    if missing is not None:
        missing.incomplete = at_end
        return missing
    if at_end and in_block and innermost is not None and "RETURN" in expected:
        # `def f(x) {` and nothing more: a def's '}' may not come before its return, so the
        # closer check above did not name it, and the hint listed the tokens a statement starts with
        opened = span_at(source, innermost.pos)
        return RaspSyntaxError(
            f"expected the def's body and '}}' to close {innermost.label}",
            here,
            f"{innermost.label} was opened at line {opened.line}, column {opened.col}; a def "
            "ends with 'return value;' before its '}'",
            incomplete=True,
        )
    if at_end:
        return RaspSyntaxError(
            "unexpected end of input", here, _expected_hint(lark, expected), incomplete=True
        )
    if "IN" in expected and _AFTER_LOOP_NAMES.search(text[:pos]):
        # `for x [1, 2] { ... }`: after the loop's names only 'in' (or another name) can come
        comprehension = innermost is not None and not in_block
        shape = "[f(x) for x in list]" if comprehension else "for x in list { ... }"
        return RaspSyntaxError(
            f"expected 'in' before {shown}", here, f"write 'in' after the loop's names: {shape}"
        )
    if token.type == "RBRACE" and "RETURN" in expected:
        return RaspSyntaxError(
            "a def ends with a return statement", here, "write 'return value;' before the '}'"
        )
    if token.type in CLOSER_TERMINALS.values() and innermost is None:
        return RaspSyntaxError(
            f"unmatched '{token.value}'", here, "nothing was opened here to close"
        )
    if expected == {"STRING"} and previous_word(text, pos)[0] == "load":
        # `load reverse;`, `load(reverse);`: the file's name is a string
        name = re.match(r"\(?\s*\"?([A-Za-z_][\w./-]*)", text[pos:])
        quoted = f'load "{name.group(1) if name else "FILE"}";'
        return RaspSyntaxError(
            f"unexpected {shown}", here, f"load takes the file's name in quotes: {quoted}"
        )
    return RaspSyntaxError(f"unexpected {shown}", here, _expected_hint(lark, expected))


def _subscript(text: str, opener: Opener) -> bool:
    """Whether `opener` is an index's '[' (after a value: `x[`, `f(x)[`, `l[0][`), not a list's."""
    before = text[: opener.pos].rstrip()
    return opener.char == "[" and (before[-1:].isalnum() or before[-1:] in '_)]}"')


def _bad_character(exc: UnexpectedCharacters, source: Source) -> RaspSyntaxError:
    pos = exc.pos_in_stream
    char = source.text[pos] if pos < len(source.text) else ""
    here = span_at(source, pos)
    habit = foreign_character(source, pos) or typographic_character(source, pos)
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
    if char.isalpha():  # a name with a letter outside ASCII, `é` or `naïve`
        hint = "a name is made of ASCII letters, digits and '_' (a string may hold any)"
        return RaspSyntaxError(f"unexpected character {char!r}", here, hint)
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
    first = previous_token(lark, text, pos)
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

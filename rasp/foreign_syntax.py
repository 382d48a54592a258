"""Python and tracr habits that RASP spells differently, and the messages that name the RASP way.

A user who writes `x // 2`, `x ** 2`, `a && b`, `x.f`, `tokens is "a"`, `lambda x: ...`, `while c {` or tracr's
`numerical aggregate(...)` gets a parse error at a place that Lark describes only by what it
expected. These checks recognise the habit from the text around the unexpected token or character
and say what RASP writes instead. Each returns None when the text is not such a habit.
"""

from __future__ import annotations

import ast
import math
import re
import unicodedata
from decimal import Decimal

from rasp.errors import RaspSyntaxError, Source, Span

_DEF_HINT = "or a def: def f(x) { return x + 1; } applies to every position of an s-op"

# Names from tracr's Python API with no RASP counterpart of a similar spelling (`Select` and
# `Aggregate` already get "did you mean 'select'?").
FOREIGN_NAME_HINTS = {
    "numerical": (
        "RASP has no numerical/categorical annotation (that is tracr's): aggregate averages "
        "numbers by itself, so write aggregate(...) without it"
    ),
    "Map": (
        "RASP has no Map (that is tracr's): write the function with operators, a ternary "
        f'(a if c else b), a dict lookup ({{"a": 1}}[tokens]), {_DEF_HINT}; a tracr '
        "program in Python compiles as is: rasp compile PROG.py:NAME"
    ),
    "lambda": (
        "write the function with operators, a ternary (a if c else b), "
        f'a dict lookup ({{"a": 1}}[tokens]), {_DEF_HINT}'
    ),
}
FOREIGN_NAME_HINTS["categorical"] = FOREIGN_NAME_HINTS["numerical"]
# Python built-ins a first program reaches for, which RASP spells another way (a class's
# `print(x);` said only `Undefined variable: print`).
FOREIGN_NAME_HINTS["print"] = (
    "RASP has no print: rasp run prints the program's last name (--name NAME picks another), "
    "and the REPL shows a name's value when you type it: x;"
)
FOREIGN_NAME_HINTS["sum"] = (
    "RASP has no sum: a head averages, it does not add, so the sum over all positions is "
    "round(length * aggregate(full_s, x)) (count(x, v) counts a value)"
)
FOREIGN_NAME_HINTS["SequenceMap"] = FOREIGN_NAME_HINTS["Map"].replace("no Map", "no SequenceMap")
FOREIGN_NAME_HINTS["LinearSequenceMap"] = FOREIGN_NAME_HINTS["SequenceMap"].replace(
    "no SequenceMap", "no LinearSequenceMap"
)

# Names a first program reaches for where RASP has a built-in s-op (`n - indices - 1`): an
# undefined one of these is pointed at the built-in, which no spelling distance would find.
_BUILT_IN_HINTS = {
    "length": "the input's length, at every position, is the built-in s-op `length`",
    "indices": "each position's index (0 to length - 1) is the built-in s-op `indices`",
    "tokens": "the input is the built-in s-op `tokens` (tokens_int reads it as numbers)",
}
_BUILT_IN_SYNONYMS = {
    **dict.fromkeys(
        ("n", "N", "L", "seq_len", "seqlen", "size", "input_length", "n_tokens"), "length"
    ),
    **dict.fromkeys(("i", "pos", "position", "positions", "index", "idx", "indexes"), "indices"),
    **dict.fromkeys(("input", "inputs", "seq", "sequence", "token", "tok", "toks"), "tokens"),
}
BUILT_IN_NAME_HINTS = {name: _BUILT_IN_HINTS[to] for name, to in _BUILT_IN_SYNONYMS.items()}

# Two-character operators of Python that RASP lacks: (message, hint).
_DOUBLED = {
    "//": (
        "RASP has no '//' (floor division)",
        "x / y divides exactly; (x - x % y) / y is the floored quotient, and round() of it an int",
    ),
    "**": ("RASP has no '**'", "its power operator is '^': write x ^ 2"),
    ">>": ("RASP has no '>>' (shift)", "divide by a power of two: (x - x % 2 ^ k) / 2 ^ k"),
    "<<": ("RASP has no '<<' (shift)", "multiply by a power of two: x * 2 ^ k"),
    "&&": ("RASP writes 'and', not '&&'", "a and b (also between selectors)"),
    "||": ("RASP writes 'or', not '||'", "a or b (also between selectors)"),
}
_SINGLE = {
    "&": ("RASP writes 'and', not '&'", "a and b (also between selectors)"),
    "|": ("RASP writes 'or', not '|'", "a or b (also between selectors)"),
}


# Characters that text copied from a PDF, a web page or a word processor holds where RASP has
# ASCII: (what to write instead, or "" for an invisible character to delete).
_TYPOGRAPHIC = {
    **dict.fromkeys("\u201c\u201d\u201e\u2033", '"'),
    **dict.fromkeys("\u2018\u2019\u2032", '"'),  # RASP's strings are in double quotes
    **dict.fromkeys("\u00a0\u2007\u2009\u202f\u3000", " "),
    **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff", ""),
    **dict.fromkeys("\u2212\u2013\u2014", "-"),
    "\u2264": "<=",
    "\u2265": ">=",
    "\u2260": "!=",
    "\u00d7": "*",
    "\u00f7": "/",
}


def typographic_character(source: Source, pos: int) -> RaspSyntaxError | None:
    """A curly quote, a non-breaking or zero-width space, a Unicode minus or `≤` where the lexer
    stops at `pos`: named by its code point (a repr of U+00A0 looks like a space), with the ASCII
    to write."""
    char = source.text[pos : pos + 1]
    if char not in _TYPOGRAPHIC:
        return None
    instead = _TYPOGRAPHIC[char]
    name = unicodedata.name(char, "").lower()
    message = f"unexpected character U+{ord(char):04X} ({name})" if name else f"U+{ord(char):04X}"
    if instead == "":
        hint = "it is invisible: delete it (text copied from a PDF or web page may hold one)"
    else:
        what = {" ": "a plain space", '"': 'a straight double quote, "'}.get(instead, instead)
        hint = f"write {what} (text copied from a PDF, web page or word processor may hold it)"
    return RaspSyntaxError(message, span_at(source, pos, 1), hint)


def doubled_operator(source: Source, pos: int) -> RaspSyntaxError | None:
    """`//`, `**`, `>>`, `<<`, where Lark stops at the second character (offset `pos`)."""
    pair = source.text[pos - 1 : pos + 1] if pos > 0 else ""
    if pair not in _DOUBLED:
        return None
    message, hint = _DOUBLED[pair]
    return RaspSyntaxError(message, span_at(source, pos - 1, 2), hint)


def foreign_character(source: Source, pos: int) -> RaspSyntaxError | None:
    """`&`, `&&`, `|`, `||`, and `.` after a name (`x.f`), where the lexer stops at `pos`."""
    text = source.text
    pair = text[pos : pos + 2]
    if pair in _DOUBLED:
        message, hint = _DOUBLED[pair]
        return RaspSyntaxError(message, span_at(source, pos, 2), hint)
    if text[pos : pos + 1] in _SINGLE:
        message, hint = _SINGLE[text[pos]]
        return RaspSyntaxError(message, span_at(source, pos, 1), hint)
    line_rest = text[pos:].split("\n", 1)[0]
    if line_rest.startswith("?") and ":" in line_rest:  # C's and JavaScript's conditional
        return RaspSyntaxError(
            "RASP has no 'c ? a : b'",
            span_at(source, pos, 1),
            "RASP's conditional puts the value first: a if c else b",
        )
    before = text[pos - 1] if pos > 0 else ""
    if text[pos : pos + 1] == "." and (before.isalpha() or before in "_)]"):
        return RaspSyntaxError(
            "RASP has no attributes or methods ('.')",
            span_at(source, pos, 1),
            "apply a function instead: f(x), not x.f",
        )
    return None


# Python's number literals that RASP lacks: an exponent, a base prefix, digit groups. The lexer
# reads the digits before the letter or '_' as a number, then stops at the rest.
_PY_NUMBER = re.compile(
    r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)|0[xXoObB][0-9a-fA-F_]+|\d+(?:_\d+)+(?:\.\d+(?:_\d+)*)?"
)


def number_literal(source: Source, pos: int) -> RaspSyntaxError | None:
    """`1e3`, `2.5e-3`, `0x10`, `1_000`, where the lexer stops at the letter or '_' (`pos`)."""
    text = source.text
    start = pos
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] == "."):
        start -= 1
    if start == pos or not text[start].isdigit() or (start > 0 and text[start - 1].isalnum()):
        return None
    found = _PY_NUMBER.match(text, start)
    if found is None or found.end() <= pos:
        return None
    literal = found.group()
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    mantissa, _, exponent = literal.lower().partition("e")
    if isinstance(value, float) and not math.isfinite(value):
        hint = "it is too large for a float; RASP writes numbers as digits"
    elif value == 0 and exponent and float(mantissa) != 0:
        hint = "it is too small for a float (0.0 is the nearest); RASP writes numbers as digits"
    else:
        if isinstance(value, float):
            written = format(Decimal(repr(value)), "f")
            written = written if "." in written else written + ".0"
        else:
            written = str(value)
        hint = f"write the number out: {written}"
        if len(written) > 24 and isinstance(
            value, float
        ):  # 1e30 is 31 digits written out: compute it instead
            hint = f"compute it: {mantissa} * 10 ^ {exponent.lstrip('+')}"
    return RaspSyntaxError(
        f"RASP has no number literal '{literal}'", span_at(source, start, len(literal)), hint
    )


def foreign_word(source: Source, pos: int, value: str) -> RaspSyntaxError | None:
    """`is`, `lambda x: ...`, `import x`, `numerical x` / `categorical x`, and Python's number literals: the
    unexpected token `value` at `pos`, or the word just before it."""
    number = number_literal(source, pos)
    if number is not None:
        return number
    if value == "is":
        return RaspSyntaxError(
            "RASP has no 'is'", span_at(source, pos, 2), "compare with '==' ('is not': '!=')"
        )
    word, start = previous_word(source.text, pos)
    if word == "lambda":
        return RaspSyntaxError(
            "RASP has no lambda", span_at(source, start, len(word)), FOREIGN_NAME_HINTS["lambda"]
        )
    if word == "while" and text_before(source.text, start)[-1:] in ("", ";", "{", "}"):
        return RaspSyntaxError(
            "RASP has no while loop",
            span_at(source, start, len(word)),
            "a loop runs over a list: for i in range(n) { ... } (n known in advance)",
        )
    if word in ("import", "from") and text_before(source.text, start)[-1:] in ("", ";", "{", "}"):
        module = value if value.isidentifier() else "FILE"
        return RaspSyntaxError(
            f"RASP has no '{word}'",
            span_at(source, start, len(word)),
            f'load "{module}"; runs {module}.rasp and copies its names into this program',
        )
    if word in ("numerical", "categorical"):
        return RaspSyntaxError(
            f"RASP has no '{word}' annotation",
            span_at(source, start, len(word)),
            FOREIGN_NAME_HINTS[word],
        )
    return None


def text_before(text: str, pos: int) -> str:
    return text[:pos].rstrip()


def previous_word(text: str, pos: int) -> tuple[str, int]:
    """The identifier that ends just before `pos` on its line (spaces between allowed), and where
    it starts (a name at the end of the line before is a statement missing its ';')."""
    end = pos
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:end], start


def span_at(source: Source, pos: int, width: int = 1) -> Span:
    """`width` characters from offset `pos` (at the end of the text: past the last character)."""
    text = source.text
    pos = max(0, min(pos, len(text)))
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return Span(source, line, col, line, col + width)

"""Syntax errors inside calls, operands and comprehensions, in RASP's words (for
`rasp.syntax_errors`): a value missing after an operator, '=' or ',', too few arguments to a
built-in that takes a fixed number, Python's keyword arguments (`default=0`) and Python's
comprehension filter (`[x for x in l if c]`).
"""

from __future__ import annotations

import re

from lark import Lark
from lark.lexer import Token

from rasp.errors import RaspSyntaxError, Source, Span
from rasp.foreign_syntax import previous_word, span_at
from rasp.syntax_scan import CLOSER_TERMINALS, CLOSERS, Opener, previous_token, top_level_commas

COMPARISON_TERMINALS = {"EQ", "NE", "LE", "GE", "LT", "GT"}
# Where Lark expects these (and no statement), a value is missing: an operand, an argument.
VALUE_STARTS = {"NAME", "INT", "LPAR"}
STATEMENT_STARTS = {"DEF", "FOR", "LOAD"}
_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "CARET", "AND", "OR", "NOT", "IN"}
_OPERATORS |= COMPARISON_TERMINALS
_VALUE_WORDS = "a name, a number, a string, a call or (...)"
# Built-ins whose arguments are fixed: the fewest ','s, how many arguments, the call written out.
# the built-in s-ops: `f(tokens = "a")` compares, as no parameter is named so
_SOP_WORDS = frozenset(
    ("tokens", "indices", "length", "tokens_str", "tokens_int", "tokens_float", "tokens_bool")
)

ARGUMENTS = {
    "'select('": (2, "3 arguments", "select(keys, queries, OP) with OP one of == != < > <= >="),
    "'aggregate('": (
        1,
        "2 or 3 arguments",
        "aggregate(selector, sop) or aggregate(selector, sop, default)",
    ),
}


def keyword_argument(source: Source, pos: int, innermost: Opener | None) -> RaspSyntaxError | None:
    """`aggregate(sel, v, default=0)`, `f(x=1)`: Python's keyword argument, at the '=' (`pos`)."""
    if innermost is None or innermost.char != "(" or innermost.label == "'('":
        return None
    text = source.text
    word, start = previous_word(text, pos)
    if not word.isidentifier() or text[:start].rstrip()[-1:] not in ("(", ","):
        return None
    call = innermost.label.removeprefix("the call ").strip("'").removesuffix("(")
    if word in _SOP_WORDS or call in ("indicator", "round"):
        # `indicator(tokens = "a")`: a comparison with one '=', not a parameter's name
        return RaspSyntaxError(
            "'=' is assignment; use '==' to compare",
            span_at(source, pos, 1),
            f"write {word} == ... (RASP has no keyword arguments)",
        )
    if call == "aggregate" and word == "default":
        hint = "pass the default as the third argument: aggregate(sel, v, 0)"
    elif innermost.label in ARGUMENTS:
        hint = f"{call} takes its arguments in order: {ARGUMENTS[innermost.label][2]}"
    else:
        hint = f"pass the value alone, in its place among {call}'s arguments"
    return RaspSyntaxError(
        f"RASP has no keyword arguments ('{word}=')", span_at(source, start, pos + 1 - start), hint
    )


def missing_value(
    lark: Lark,
    source: Source,
    pos: int,
    here: Span,
    expected: set[str],
    innermost: Opener | None,
) -> RaspSyntaxError | None:
    """`tokens +;`, `x = ;`, `f(a, )`: a value was expected (not a statement); the message names
    the token after which it is missing, so it never reads as an empty statement."""
    if not VALUE_STARTS <= expected or expected & STATEMENT_STARTS:
        return None
    before = previous_token(lark, source.text, pos)
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
    if before.type == "COMMA" and innermost is not None and innermost.label in ARGUMENTS:
        _, count, usage = ARGUMENTS[innermost.label]
        return RaspSyntaxError(
            "expected an argument after ','", here, f"{innermost.label} takes {count}: {usage}"
        )
    if before.type == "COMMA":
        return RaspSyntaxError(
            "expected a value after ','", here, "write the missing value, or remove the ','"
        )
    return RaspSyntaxError(f"expected a value after {shown}", here, f"write {_VALUE_WORDS}")


def missing_comma(
    text: str, pos: int, here: Span, expected: set[str], innermost: Opener | None
) -> RaspSyntaxError | None:
    """`select(indices, indices;`: a built-in that takes a fixed number of arguments has too few
    so far, so only ',' can follow (Lark's merged states may also offer ')')."""
    if "COMMA" not in expected or innermost is None or innermost.label not in ARGUMENTS:
        return None
    fewest, count, usage = ARGUMENTS[innermost.label]
    if top_level_commas(text, text.index("(", innermost.pos), pos) >= fewest:
        return None
    return RaspSyntaxError(
        f"expected ',' and another argument: {innermost.label} takes {count}", here, usage
    )


def comprehension_filter(
    source: Source, pos: int, token: Token, expected: set[str], innermost: Opener | None
) -> RaspSyntaxError | None:
    """`[x for x in l if c]`: Python's filter, which the original's grammar lacks (there `if`
    starts a conditional, and the closer comes where its `else` belongs)."""
    if "ELSE" not in expected or innermost is None or innermost.char not in "[{":
        return None
    if token.type != CLOSER_TERMINALS[CLOSERS[innermost.char]]:
        return None
    inside = source.text[innermost.pos : pos]
    ifs = list(re.finditer(r"\bif\b", inside))
    if not re.search(r"\bfor\b.*\bin\b", inside) or not ifs:
        return None
    return RaspSyntaxError(
        "a comprehension has no 'if' filter",
        span_at(source, innermost.pos + ifs[-1].start(), 2),
        "it keeps every item; choose each value with a conditional: [x if x > 0 else 0 for x in l]",
    )

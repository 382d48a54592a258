"""A keyword written where RASP needs a name (`set = 1;`, `x = round;`, `x = s-op;`), and a
`return` outside a def: the parse errors that name the keyword, not the token Lark stopped at."""

from __future__ import annotations

import re

from lark import Lark, Token

from rasp.errors import RaspSyntaxError, Source, Span
from rasp.syntax_scan import Opener, is_block, previous_token, token_span


def unexpected_keyword(
    text: str, token: Token, expected: set[str], openers: list[Opener], here: Span, at_end: bool
) -> RaspSyntaxError | None:
    """The unexpected token is a keyword: `return` outside a def (`return x;`), or a keyword
    where a name belongs (`x = s-op;`)."""
    if token.type == "RETURN" and _misplaced_return(text, token, expected, openers):
        # `return x;` outside a def (at the top level, in a for): not a name, a misplaced return
        return RaspSyntaxError(
            "'return' outside a def",
            here,
            "only a def's body ends with 'return value;' (def f(x) { ... return value; }); "
            "elsewhere, bind the value: name = value;",
        )
    start = token.start_pos or 0
    before = text[:start].rstrip()
    starts_statement = before[-1:] in ("", ";", "}") or (
        before[-1:] == "{" and is_block(text, len(before) - 1)  # a body, not a dict
    )
    # `x = if;` reads as the word used as a name; `x = if c ...` as a clause
    clause = text[token.end_pos or 0 :].lstrip()[:1] not in ("", ";", ")", "]", "}", ",")
    if token.type in _CLAUSE_HINTS and "NAME" in expected and clause and not starts_statement:
        # `y = if 1 else 2;`, `[for x in l]`: a clause written where its value belongs
        innermost = openers[-1].char if openers else ""
        comprehension = (
            token.type == "FOR"
            and innermost in "[{"
            and innermost
            and (not text[openers[-1].pos + 1 : start].strip())
        )
        return RaspSyntaxError(
            f"an expression cannot start with '{token.value}'",
            here,
            _COMPREHENSION_HINTS[innermost] if comprehension else _CLAUSE_HINTS[token.type],
            incomplete=at_end,
        )
    after = text[token.end_pos or 0 :].lstrip()
    assigned = after.startswith("=") and not after.startswith("==")  # `if = 1;`: a name
    if token.type == "IF" and starts_statement and clause and not assigned:  # `if c { ... }`
        return RaspSyntaxError("RASP has no 'if' statement", here, _IF_STATEMENT, incomplete=at_end)
    if _is_keyword(token) and "NAME" in expected:
        return RaspSyntaxError(
            f"'{token.value}' is a keyword and cannot be used as a name",
            here,
            _keyword_hint(token),
            incomplete=at_end,
        )
    return None


_CONDITIONAL = "RASP's conditional puts the value first: y = 1 if x > 0 else 2;"
_IF_STATEMENT = (
    "an if is an expression, its value first: y = 1 if x > 0 else 2; "
    '(on s-ops, position by position: y = tokens if indices > 0 else "_";)'
)
_CLAUSE_HINTS = {
    "IF": _CONDITIONAL,
    "ELSE": _CONDITIONAL,
    "FOR": "a loop is a statement (for x in l { ... }); a list built by one: [x + 1 for x in l]",
}
_COMPREHENSION_HINTS = {
    "[": "a comprehension starts with its value: [x + 1 for x in l]",
    "{": "a comprehension starts with its key and value: {x: x + 1 for x in l}",
}


def _misplaced_return(text: str, token: Token, expected: set[str], openers: list[Opener]) -> bool:
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


def keyword_before(
    lark: Lark, source: Source, token: Token, expected: set[str]
) -> RaspSyntaxError | None:
    """`set = 1;`, `exit, y = 1, 2;`, `x = round;`: the keyword before the unexpected token is
    what is wrong (the statement it starts, `set example ...`, expected something else; Lark
    names the '=', which read as "'=' is assignment; use '==' to compare")."""
    if token.type == "$END":
        return None
    text = source.text
    before = previous_token(lark, text, token.start_pos or 0)
    if before is None or not _is_keyword(before):
        return None
    starts_statement = text[: before.start_pos or 0].rstrip()[-1:] in ("", ";", "{", "}")
    called = before.type in ("ROUND", "INDICATOR") and expected == {"LPAR"}
    if not ((token.type in ("EQUAL", "COMMA") and starts_statement) or called):
        return None
    return RaspSyntaxError(
        f"'{before.value}' is a keyword and cannot be used as a name",
        token_span(source, before),
        _keyword_hint(before),
    )

"""What the REPL reads off values: the s-ops and selectors a statement's values hold (each is
tested on the running example), a function's text in a listing, an example as input tokens (or
its refusal), and an example's plain text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rasp.display import example_text, example_tokens
from rasp.errors import RaspTypeError
from rasp.sops import Selector, SOp
from rasp.values import (
    TOKEN_HINT,
    BuiltinFunction,
    RaspFunction,
    describe,
    evaluated_hint,
    kind_name,
    non_token_inside,
)
from rasp.wording import with_article


def nodes_in(values: Iterable[Any]) -> Iterator[SOp | Selector]:
    """The s-ops and selectors among `values` and inside their lists and dicts (a stack, not
    recursion: a list may nest deeper than Python recurses; each list once, as a loop of
    `l = [l, l];` shares them: 40 rounds were 2^40 visits)."""
    stack, seen = [iter(values)], set()
    while stack:
        value = next(stack[-1], _END)
        if value is _END:
            stack.pop()
        elif isinstance(value, SOp | Selector):
            yield value
        elif isinstance(value, list | tuple | dict) and id(value) not in seen:
            seen.add(id(value))
            stack.append(iter(value.values() if isinstance(value, dict) else value))


_END = object()


def function_text(value: Any) -> str | None:
    if isinstance(value, RaspFunction):
        # As the original: "console", a loaded file as its `load` named it (a full path too),
        # a ' for each call that a def ran in
        return f"{value.creator} function: {value.signature()}"
    if isinstance(value, BuiltinFunction):
        return f"built-in function: {value.signature()}"
    return None


def tokens_of(example: Any, span: Any) -> list[Any]:
    """An example as input tokens, non-empty: a string's characters, a list's elements, or a
    dict's keys (the original takes any of these, as Python iterates them). A dict's values are
    no tokens: they may be anything, an s-op too (`{"a": tokens}`), as in the original."""
    found = non_token_inside(list(example) if isinstance(example, dict) else example)
    if found is not None:  # (an s-op, selector or function as a token: our class's text)
        raise RaspTypeError(
            f"an example cannot {'be' if found is example else 'hold'} "
            f"{with_article(kind_name(found))}: {describe(found)}",
            span,
            hint=evaluated_hint(found) or TOKEN_HINT,
        )
    if isinstance(example, str | list | dict):
        tokens = example_tokens(example)
        if tokens:
            return tokens
        raise RaspTypeError("an example must not be empty", span, hint='e.g. set example "hello"')
    raise RaspTypeError(
        f"example not iterable: {example_text(example)}",
        span,
        hint='e.g. set example "hello" or set example [1, 2, 3]',
    )


def plain_example(example: Any) -> str:
    return example if isinstance(example, str) else example_text(example)

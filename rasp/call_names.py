"""What a `def`'s call names the s-op it returns, as the original names it: the function's name and
its arguments by value (`f("a" , indices)`), which the node's label shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rasp.errors import Span
from rasp.nodes import Node
from rasp.values import BuiltinFunction, RaspFunction, kind_name


def call_text(name: str, args: Sequence[Any]) -> str:
    """The original's name for what a call returns: `f("a" , indices)`, the arguments by value
    (a list or dict longer than 20 characters as `(list)` or `(dict)`)."""
    return f"{name}(" + " , ".join(_argument_text(a, cap=20) for a in args) + ")"


def _argument_text(value: Any, cap: int | None = None) -> str:
    if isinstance(value, Node):
        return value.label
    if isinstance(value, list | dict):
        if isinstance(value, list):
            text = "[" + ", ".join(_argument_text(v) for v in value) + "]"
        else:
            items = (f"{_argument_text(k)}: {_argument_text(v)}" for k, v in value.items())
            text = "{" + ", ".join(items) + "}"
        return f"({kind_name(value)})" if cap is not None and len(text) > cap else text
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, RaspFunction | BuiltinFunction):
        return value.name
    return str(value)


# the calls a message lists for where a node was made (innermost first); the rest are counted
MAX_CALLS_SHOWN = 3


def made_in(node: Node) -> str | None:
    """Where a `def`'s call named or made `node`, for a message that names it: `in f, called at
    p.rasp:12:5`, and `from g, called at p.rasp:20:1` for each call around that one. None where
    a file's top level named it, or no `def` made it: its name or text says it there."""
    if node.name is not None:
        if node.named_in is None:
            return None
        function = node.named_in
    elif node.calls:
        function = node.calls[0][0]
    else:
        return None
    start = next((i for i, (f, _) in enumerate(node.calls) if f == function), None)
    if start is None:  # an s-op passed in and renamed by the body (`y = x;`): no call made it
        return f"in {function}"
    return call_chain(node.calls[start:])


def call_chain(calls: Sequence[tuple[str, Span]]) -> str:
    """Calls of `def`s, innermost first, as a message says where something in the first one's
    body happened: `in f, called at p.rasp:12:5 from g, called at p.rasp:20:1`."""
    parts = [f"{f}, called at {span.location()}" for f, span in calls]
    if len(parts) > MAX_CALLS_SHOWN:  # the innermost, and the program's own call
        more = len(parts) - MAX_CALLS_SHOWN + 1
        parts = [*parts[: MAX_CALLS_SHOWN - 2], f"{more:,} more calls", parts[-1]]
    return "in " + " from ".join(parts)


def with_place(name: str, local: str | None, place: str | None) -> str:
    """A residual name as a message shows it: with where a `def`'s call named or made its s-op
    (`y (in f, called at p.rasp:12:5)`), and the body's own name where that differs (a second
    call's `y_2 (y in f, called at ...)`); alone where no `def` did (`place` None)."""
    told = about(name, local, place)
    return name if told is None else f"{name} ({told})"


def about(name: str, local: str | None, place: str | None) -> str | None:
    """What a message says of a residual name a `def`'s call named or made (`with_place`'s
    parenthesis): `y in f, called at p.rasp:12:5` for a second call's `y_2`; None where no `def`
    did."""
    if place is None:
        return None
    own = f"{local} " if local and local != name else ""
    return f"{own}{place}"


def local_name(node: Node) -> str | None:
    """The name a `def`'s body gave `node`, where one did (see `made_in`)."""
    return node.name if node.named_in is not None else None

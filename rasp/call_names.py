"""What a `def`'s call names the s-op it returns, as the original names it: the function's name and
its arguments by value (`f("a" , indices)`), which the node's label shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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

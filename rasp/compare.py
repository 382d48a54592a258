"""Comparing lists and dicts that hold s-ops or selectors, as the original's Python does.

Python compares two lists item by item, and the original's `==` on an s-op (`UnfinishedSequence`)
builds a new s-op, which is always true: an s-op item equals anything, so `[indices] == [length]`
and `1 in [indices]` are True there. A selector, function or other object equals only itself.
Our nodes compare by identity (the compiler relies on that), so these comparisons are written out
here; on atoms they are Python's own.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from rasp.sops import Selector, SOp
from rasp.values import BuiltinFunction, RaspFunction, kind_name
from rasp.wording import with_article

_SYMBOL = {
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}


def holds_node(value: Any) -> bool:
    """Whether `value` is, or its lists and dicts hold, an s-op, selector or function (a stack,
    not recursion; each list once): Python's own comparison would name our classes
    (`'>=' not supported between instances of 'RaspFunction' and 'int'`)."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, SOp | Selector | RaspFunction | BuiltinFunction):
            return True
        if isinstance(item, list | dict) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return False


def same(a: Any, b: Any) -> bool:
    """Python's `a == b` in the original: identity first, an s-op equals anything."""
    if a is b or isinstance(a, SOp) or isinstance(b, SOp):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if not _plain(a) or not _plain(b):
        return False  # a selector or function against anything else
    return bool(a == b)


def ordered(op: Callable[[Any, Any], bool], a: Any, b: Any) -> bool:
    """Python's `a < b` (or `<=`, `>`, `>=`) in the original: lists by their first unequal item,
    else by length."""
    if isinstance(a, list) and isinstance(b, list):
        for x, y in zip(a, b, strict=False):
            if not same(x, y):
                return ordered(op, x, y)
        return bool(op(len(a), len(b)))
    if not _plain(a) or not _plain(b):
        kinds = f"{with_article(kind_name(a))} and {with_article(kind_name(b))}"
        raise TypeError(f"'{_SYMBOL[op]}' not supported between {kinds}")
    return bool(op(a, b))


def member(item: Any, container: list[Any]) -> bool:
    """Python's `item in container` in the original."""
    return any(same(item, v) for v in container)


def _plain(value: Any) -> bool:
    return not isinstance(value, Selector | RaspFunction | BuiltinFunction)

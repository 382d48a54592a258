"""A graph walked children first without recursion: a chain of maps or s-ops built by a loop may be
thousands deep, past Python's recursion limit (rasp.deep_stack raises it for what still recurses).
One walk for the graphs of `rasp.nodes`, `rasp.tracr` and the compiler's IR."""

from __future__ import annotations

from collections.abc import Callable, Container, Hashable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def first_visits(
    root: T,
    inputs: Callable[[T], Iterable[T]],
    key: Callable[[T], Hashable],
    skip: Container[Hashable] = (),
) -> Iterator[T]:
    """`root` and what it reads through `inputs`, each once (by `key`) and after its inputs, in
    the order a depth-first walk of the inputs (left to right) first finishes them. A node whose
    key is in `skip` (read as each node is reached: a caller may add to it meanwhile) is left
    out, with what only it reads."""
    seen: set[Hashable] = set()
    stack: list[tuple[T, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        k = key(node)
        if k in seen or k in skip:
            continue
        seen.add(k)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(inputs(node))))

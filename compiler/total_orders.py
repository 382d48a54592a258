"""Selectors that select at most one key because they compare a rank in a strict total order of
the positions.

The paper's sort (the prelude's `sort(seq, key)`) moves each value to its rank:

    earlier = select(key, key, <) or (select(key, key, ==) and select(indices, indices, <));
    target = selector_width(earlier);
    sorted = aggregate(select(target, indices, ==), seq);

`earlier` orders the positions by (key, index): for any two positions exactly one is before the
other, and none is before itself. So `target` is the rank of each position in that order, a
permutation of 0..n-1: no two keys hold one value, and `select(target, y, ==)` selects at most
one key whatever `y` is. The value analysis (compiler.values) cannot see that from the value sets:
without this proof a sort of numbers averages them (refused from N = 64 on with ten digits).

A strict total order of the positions, here, is

- `select(indices, indices, <)` or `>`, or
- `select(k, k, <) or (select(k, k, ==) and T)` (either comparison `<` or `>`, the two operands
  of `or` and of `and` in either order) with T a strict total order: positions ordered by k, ties
  by T. k's values must compare as numbers or as strings do (no NaN, no mix of kinds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from compiler.blocks import Atom, is_number
from compiler.graph import Graph, IRNode, Op
from rasp import sops

_STRICT = (sops.Comparison.LT, sops.Comparison.GT)


def selects_one_by_rank(
    graph: Graph, node: IRNode, values: Callable[[int], Sequence[Atom]]
) -> bool:
    """Whether `node` is `select(selector_width(T), y, ==)` with T a strict total order of the
    positions (module doc); `values(i)`: node i's value set."""
    if node.op is not Op.SELECT or node.comparison is not sops.Comparison.EQ:
        return False
    width = graph[node.inputs[0]]
    return width.op is Op.SELECTOR_WIDTH and _strict_total(graph, width.inputs[0], values)


def _strict_total(graph: Graph, index: int, values: Callable[[int], Sequence[Atom]]) -> bool:
    node = graph[index]
    if node.op is Op.SELECT:
        keys, queries = node.inputs
        return node.comparison in _STRICT and keys == queries and graph[keys].op is Op.INDICES
    if node.op is not Op.OR or len(node.inputs) != 2:
        return False
    for first, rest in (node.inputs, node.inputs[::-1]):
        key = _strict_select_key(graph, first)
        if key is None or not _ordered(values(key)):
            continue
        tie = graph[rest]
        if tie.op is not Op.AND or len(tie.inputs) != 2:
            continue
        for equal, then in (tie.inputs, tie.inputs[::-1]):
            if _is_class(graph, equal, key) and _strict_total(graph, then, values):
                return True
    return False


def _strict_select_key(graph: Graph, index: int) -> int | None:
    """k where the selector is `select(k, k, <)` or `select(k, k, >)`."""
    node = graph[index]
    if node.op is Op.SELECT and node.comparison in _STRICT and node.inputs[0] == node.inputs[1]:
        return node.inputs[0]
    return None


def _is_class(graph: Graph, index: int, key: int) -> bool:
    """Whether the selector is `select(key, key, ==)`."""
    node = graph[index]
    return (
        node.op is Op.SELECT and node.comparison is sops.Comparison.EQ and node.inputs == (key, key)
    )


def _ordered(values: Sequence[Atom]) -> bool:
    """Whether `<` is a strict total order on these values, with `==` its equality: all numbers
    (bools among them, as Python compares them) without NaN, or all strings."""
    if all(isinstance(v, str) for v in values):
        return True
    return all(
        (is_number(v) or isinstance(v, bool)) and not (isinstance(v, float) and math.isnan(v))
        for v in values
    )

"""A chain of maps evaluated at many combinations of its sources' values, each map once per
combination (`PlanContext.chain_function`, for the map planners).

A chain is a graph, not a tree: a `def` called in a loop reads one inner map from several outer
ones (fuzz defs seed 1910140 at N = 4: a fused map over 7 sources whose chain, walked as a tree,
called 200 maps per combination where 30 are distinct: 13 s of an 18 s compile). Each node is
given a slot, computed once per combination in the order the tree walk first reaches it (inputs
before their readers), so the maps are called on the same arguments as the tree walk's and stop
at the same first failure: the maps are pure functions of their arguments, as the value analysis
and `PlanContext.chain_values`, which computes a chain column by column, already rely on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.graph import Graph, Op
from compiler.map_values import apply_map

Chain = Callable[[Sequence[Atom]], tuple[bool, Atom]]


def chain_function(graph: Graph, index: int, sources: Sequence[int]) -> Chain:
    """`combo -> (ok, value)`: node `index` computed from `sources` taking the values `combo`
    ((False, None) where a map of the chain raises), a source read where it is one (the last of
    equal sources, as `dict(zip(sources, combo))` keeps)."""
    at = {s: k for k, s in enumerate(sources)}
    order = _first_visits(graph, index, at)
    consts = [i for i in order if graph[i].op is Op.CONST]
    maps = [i for i in order if graph[i].op is not Op.CONST]
    slot = dict(at)
    for i in (*consts, *maps):
        slot[i] = len(slot) - len(at) + len(sources)
    fixed = [graph[i].value for i in consts]
    steps: list[tuple[Any, list[int]]] = [
        (graph[i].fn, [slot[j] for j in graph[i].inputs]) for i in maps
    ]
    out = slot[index]

    def chain(combo: Sequence[Atom]) -> tuple[bool, Atom]:
        values = [*combo, *fixed]
        for fn, ks in steps:
            ok, value = apply_map(fn, [values[k] for k in ks])
            if not ok:
                return False, None
            values.append(value)
        return True, values[out]

    return chain


def _first_visits(graph: Graph, index: int, at: dict[int, int]) -> list[int]:
    """The chain's nodes other than sources, each after its inputs, in the order a depth-first
    walk of the inputs (left to right) first finishes them: iterative, as chains may be
    thousands of maps long."""
    order: list[int] = []
    seen: set[int] = set(at)
    stack: list[tuple[int, bool]] = [(index, False)]
    while stack:
        i, expanded = stack.pop()
        if expanded:
            order.append(i)
            continue
        if i in seen:
            continue
        seen.add(i)
        stack.append((i, True))
        node = graph[i]
        if node.op is not Op.CONST:
            stack.extend((j, False) for j in reversed(node.inputs))
    return order

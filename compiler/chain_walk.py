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

from collections.abc import Callable, Collection, Mapping, Sequence
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
    # per map: its function, its inputs' slots, the sources (positions in combo) it reads through
    # the chain, and a memo of its results by those sources' values
    first = len(sources) + len(consts)
    fns = [graph[i].fn for i in maps]
    ins = [[slot[j] for j in graph[i].inputs] for i in maps]
    reads: list[tuple[int, ...]] = []
    for k in ins:
        below = set()
        for j in k:
            below |= {j} if j < len(sources) else set(reads[j - first]) if j >= first else set()
        reads.append(tuple(sorted(below)))
    # (a map that reads every source never meets its values again: the combinations differ)
    every = tuple(sorted(set(at.values())))
    memoised = [r != every for r in reads]
    memos: list[dict] = [{} for _ in maps]
    out = slot[index]

    def chain(combo: Sequence[Atom]) -> tuple[bool, Atom]:
        values: list[Any] = [*combo, *fixed, *([_UNSET] * len(maps))]
        if out < first:
            return True, values[out]
        typed = _typed(combo)
        stack = [out - first]
        while stack:
            m = stack[-1]
            if values[first + m] is not _UNSET:
                stack.pop()
                continue
            key = None
            if typed is not None and memoised[m]:
                key = tuple([typed[p] for p in reads[m]])
            found = None if key is None else memos[m].get(key)
            if found is None:
                todo = [j - first for j in ins[m] if j >= first and values[j] is _UNSET]
                if todo:  # its inputs first (each map's value is a pure function of them)
                    stack.extend(reversed(todo))
                    continue
                found = apply_map(fns[m], [values[j] for j in ins[m]])
                if key is not None and len(memos[m]) < MEMO_LIMIT:
                    memos[m][key] = found
            ok, value = found
            if not ok:
                return False, None
            values[first + m] = value
            stack.pop()
        return True, values[out]

    return chain


# A map of the chain is computed once per combination of the sources it reads: an inner map reads
# a few of them and repeats across the combinations, and a hit skips its whole sub-chain (defs
# seed 1910140 at N = 4: 1M map calls for a fused map's 46K combinations). A map's value is a
# pure function of the sources below it (as the value analysis and `chain_values` rely on), and
# a hit stands for a sub-chain that succeeded on the same values, so the answer is the eager
# walk's: False where any map raises. A map of all the sources stops filling its memo here.
MEMO_LIMIT = 1 << 16
_UNSET = object()
_PLAIN = frozenset({int, str, bool, type(None)})


def _typed(combo: Sequence[Atom]) -> list[tuple[type, Atom]] | None:
    """Each source value with its exact type (1, 1.0 and True apart), a key equal only for values
    no map can tell apart; None (no memo for this combination) where one is a float zero (0.0
    and -0.0 are equal, but 1 / x tells them apart), a NaN (equal to nothing) or of another type
    (a tuple equals one of other element types)."""
    out = []
    for x in combo:
        t = type(x)
        if t is float:
            if x == 0.0 or x != x:
                return None
        elif t not in _PLAIN:
            return None
        out.append((t, x))
    return out


def chain_value(graph: Graph, index: int, env: Mapping[int, Atom]) -> tuple[bool, Atom]:
    """Node `index` computed once from the values `env` of the s-ops it is computed from ((False,
    None) where a map of the chain raises): each node once, in the order a walk of the inputs
    first finishes it, so the maps are called on the tree walk's arguments and stop at its first
    failure (they are pure, as `chain_function` relies on), with no recursion."""
    if index in env:
        return True, env[index]
    values = dict(env)
    for i in _first_visits(graph, index, env):
        node = graph[i]
        if node.op is Op.CONST:
            values[i] = node.value
            continue
        ok, value = apply_map(node.fn, [values[j] for j in node.inputs])
        if not ok:
            return False, None
        values[i] = value
    return True, values[index]


def _first_visits(graph: Graph, index: int, at: Collection[int]) -> list[int]:
    """The chain's nodes other than sources (`at`), each after its inputs (`Graph.first_visits`,
    not below a source or a constant)."""
    order = graph.first_visits(index, lambda i: i not in at and graph[i].op is not Op.CONST)
    return [i for i in order if i not in at]

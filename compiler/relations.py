"""Per-position value relations: what the value inference knows so far, and what is asked of it.

A node that depends only on indices, length and constants has a `Relation`: its values at every
(index i, length n), i < n <= N. The inference (`compiler.values`) visits nodes in topological order
and records, in one `Known`, every earlier node's values and relation and every selector's width per
position (or a bound on it: `width_bound`); the aggregate analysis (`compiler.means`) reads the same
record. `input_combinations` and `combination_count` enumerate the input values that can meet at one
position (used by the inference and by the map and selector planners).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from compiler.blocks import Atom, sort_values, value_key
from compiler.combos import TooManyRows, joint_rows
from compiler.graph import Graph, IRNode, Op
from compiler.selector_cases import SelectorCases, compare_matrix, decided_matrix
from rasp.errors import Diagnostic

# (index i, length n) -> the values a node can take there (interned tuples), for every i < n <= N.
Relation = Mapping[tuple[int, int], tuple[Atom, ...]]


class Known:
    """The inference's record of the nodes analysed so far (all inputs of the node at hand)."""

    def __init__(self, graph: Graph, max_len: int) -> None:
        self.g, self.n_max = graph, max_len
        self.pairs = [(i, n) for n in range(1, max_len + 1) for i in range(n)]
        self.values: list[tuple[Atom, ...]] = []
        self.relation: list[Relation | None] = []
        # selector -> keys selected per (i, n), when it depends only on positions
        self.widths: dict[int, dict[tuple[int, int], int] | None] = {}
        # selector -> at most how many keys it selects per (i, n): its widths where it depends
        # only on positions, else the least bound of a conjunction's inputs (`width_bound`)
        self.width_bounds: dict[int, dict[tuple[int, int], int]] = {}
        # selector -> per length n, (at least, at most) how many keys each query selects, where
        # its sides' values decide some rows but not all (compiler.selector_cases; all: `widths`)
        self.width_ranges: dict[int, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        self.problems: list[Diagnostic] = []
        self._interned: dict[tuple, tuple[Atom, ...]] = {}

    def intern(self, vals: Any) -> tuple[Atom, ...]:
        """Sorted distinct values, one shared tuple per set (relations compare sets by id)."""
        if type(vals) in (list, tuple) and len(vals) == 1:  # most sets: the sort is the set
            return self._interned.setdefault((value_key(vals[0]),), (vals[0],))
        t = sort_values(vals)
        return self._interned.setdefault(tuple(value_key(v) for v in t), t)

    def column(self, index: int, n: int) -> list[Atom] | None:
        """Node `index` at every position of an input of length n, when each is known exactly."""
        return _column(self.relation[index], n)

    @functools.cached_property
    def cases(self) -> SelectorCases:
        """What each selector can and must select, from the values known so far."""
        return SelectorCases(self.g, self.relation, self.values)

    def matrix(self, index: int, n: int) -> np.ndarray | None:
        """Selector `index` as a bool [n_query, n_key] matrix at length n, when its sides' values
        decide it on every input of that length (positions alone, or values that never or always
        compare true: `compiler.selector_cases`)."""
        return decided_matrix(self.cases.at(index, n), n)


def selector_matrix(
    graph: Graph, relation: Sequence[Relation | None], index: int, n: int
) -> np.ndarray | None:
    """Selector `index` as a bool [n_query, n_key] matrix at length n, when positions decide it
    (every side's value at every position of length n is known exactly)."""
    node = graph[index]
    match node.op:
        case Op.SELECT:
            keys, queries = (_column(relation[i], n) for i in node.inputs)
            if keys is None or queries is None:
                return None
            assert node.comparison is not None
            return compare_matrix(node.comparison, keys, queries)
        case Op.NOT:
            inner = selector_matrix(graph, relation, node.inputs[0], n)
            return None if inner is None else ~inner
        case Op.AND | Op.OR:
            left, right = (selector_matrix(graph, relation, i, n) for i in node.inputs)
            if left is None or right is None:
                return None
            return (left & right) if node.op is Op.AND else (left | right)
    return None


def _column(rel: Relation | None, n: int) -> list[Atom] | None:
    """A node at every position of an input of length n, when each is known exactly."""
    if rel is None or any(len(rel[(i, n)]) != 1 for i in range(n)):
        return None
    return [rel[(i, n)][0] for i in range(n)]


def already_reported(node: IRNode, problems: list[Diagnostic]) -> bool:
    return node.span is not None and any(p.span is node.span for p in problems)


def combination_count(
    inputs: Sequence[int],
    relation: Sequence[Relation | None],
    values: Sequence[tuple[Atom, ...]],
) -> int:
    """An upper bound on len(input_combinations(...)), cheap to compute."""
    distinct = list(dict.fromkeys(inputs))
    rel = [i for i in distinct if relation[i] is not None]
    size = math.prod(len(values[i]) for i in distinct if relation[i] is None)
    if rel:
        groups = _groups(rel, relation)
        size *= sum(math.prod(map(len, sets)) for sets in groups.values())
    return size


def input_combinations(
    inputs: Sequence[int],
    relation: Sequence[Relation | None],
    values: Sequence[tuple[Atom, ...]],
    limit: int | None = None,
) -> list[tuple[Atom, ...]]:
    """Every combination of input values that can occur at one position (related inputs jointly);
    `combos.TooManyRows`, before they are built, where there are more than `limit`."""
    distinct = list(dict.fromkeys(inputs))
    rel = [i for i in distinct if relation[i] is not None]
    free = [i for i in distinct if relation[i] is None]
    joint: list[tuple[Atom, ...]] = [()]
    free_size = math.prod(len(values[i]) for i in free)
    if limit is not None and combination_count(inputs, relation, values) <= limit:
        limit = None  # the bound says it fits: no count needed
    if rel:
        groups = _groups(rel, relation)
        joint_limit = None if limit is None else limit // max(free_size, 1)
        if joint_limit is not None and _largest_group(groups) > joint_limit:
            raise TooManyRows  # before building any row
        fast = joint_rows(list(groups.values()), joint_limit)
        joint = fast if fast is not None else _joint_loop(list(groups.values()), joint_limit)
    if limit is not None and len(joint) * free_size > limit:
        raise TooManyRows
    # (the env {related: row, free: rest} read in `inputs`' order: positions in row + rest)
    order = rel + free
    at = [order.index(i) for i in inputs]
    if not free and at == list(range(len(order))):
        return [tuple(row) for row in joint]  # each row already is the combination
    out = []
    for row in joint:
        for rest in itertools.product(*(values[i] for i in free)):
            combo = tuple(row) + rest
            out.append(tuple(combo[k] for k in at))
    return out


# the last few `_groups` answers: map_values, then the map planners, ask for the same inputs'
# groups (the relations are kept alive here, so their ids stay theirs)
_GROUPS: dict[tuple[int, ...], tuple[list[Relation], dict[tuple[int, ...], list]]] = {}
_GROUPS_KEPT = 8


def _groups(
    rel: Sequence[int], relation: Sequence[Relation | None]
) -> dict[tuple[int, ...], list[tuple[Atom, ...]]]:
    """The distinct combinations of the related inputs' value sets over the positions (keyed by
    the sets' ids, the interned sets), first seen first."""
    rels: list[Relation] = [relation[i] for i in rel]  # type: ignore[misc]
    key = tuple(map(id, rels))
    hit = _GROUPS.get(key)
    if hit is not None:
        return hit[1]
    groups: dict[tuple[int, ...], list[tuple[Atom, ...]]] = {}
    for p in rels[0]:
        sets = [r[p] for r in rels]
        ids = tuple(map(id, sets))
        if ids not in groups:
            groups[ids] = sets
    if len(_GROUPS) >= _GROUPS_KEPT:
        del _GROUPS[next(iter(_GROUPS))]
    _GROUPS[key] = (rels, groups)
    return groups


def _largest_group(groups: dict[tuple[int, ...], list[tuple[Atom, ...]]]) -> int:
    """The most distinct rows one group's product has: a lower bound on the joint rows."""
    sizes: dict[int, int] = {}  # id(value set) -> its distinct values (the sets are interned)
    for sets in groups.values():
        for v in sets:
            if id(v) not in sizes:
                sizes[id(v)] = len({value_key(x) for x in v})
    return max((math.prod(sizes[id(v)] for v in sets) for sets in groups.values()), default=0)


def _joint_loop(
    groups: list[list[tuple[Atom, ...]]], limit: int | None = None
) -> list[tuple[Atom, ...]]:
    """The distinct rows of the groups' products, first seen first (`combos.joint_rows`' loop);
    TooManyRows as soon as there are more than `limit` (the products the numpy path declines,
    hundreds of millions of rows, would fill memory first)."""
    seen: dict[tuple, tuple[Atom, ...]] = {}
    keys: dict[int, tuple] = {}  # id(value set) -> its values' keys (the sets are interned)
    for sets in groups:
        for s in sets:
            if id(s) not in keys:
                keys[id(s)] = tuple(map(value_key, s))
        rows = itertools.product(*sets)
        for row_key, row in zip(itertools.product(*(keys[id(s)] for s in sets)), rows):
            seen.setdefault(row_key, row)
        if limit is not None and len(seen) > limit:
            raise TooManyRows
    return list(seen.values())


def width_bound(node: IRNode, known: Known) -> dict[tuple[int, int], int] | None:
    """At most how many keys selector `node` selects per (i, n), where its inputs' bounds say:
    a conjunction selects no more than any of its inputs, a disjunction no more than their sum
    (nor than n); None where nothing bounds it below n."""
    inputs = [known.width_bounds.get(i) for i in node.inputs if known.g[i].op.is_selector]
    if node.op is Op.AND:
        found = [b for b in inputs if b is not None]
        if not found:
            return None
        return {p: min(b[p] for b in found) for p in found[0]}
    if node.op is Op.OR and inputs and all(b is not None for b in inputs):
        return {p: min(p[1], sum(b[p] for b in inputs)) for p in inputs[0]}  # type: ignore[index]
    return None


def is_window(bound: dict[tuple[int, int], int], n_max: int) -> bool:
    """Whether a width bound is a window's: at most half of N anywhere. (A prefix's, i + 1 or i,
    removes one value of 0..N at most: its widths keep their 0..N, and the models theirs.)"""
    return max(bound.values(), default=0) <= n_max // 2

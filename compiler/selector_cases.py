"""What a selector can select, and what it must, at each (query, key) pair of an input of length n.

A select whose sides are known exactly at every position (`indices`, `length`, maps of them) is
one matrix per length (`relations.selector_matrix`). Where a side has a relation that is not one
value per position (a mean of `indices` is any of 0..n-1 at length n), or no relation at all (its
whole value set at every position), the comparison may still be decided: `select(length, v0 -
length, <=)` compares n with a number that is never positive, so it selects no key, on any input.
`SelectorCases.at(index, n)` gives two bool [n_query, n_key] arrays (either may broadcast):
`can` (the key is selected on some input of length n) and `must` (on every such input). They
over-approximate: a key value and a query value are paired wherever each can occur at its
position, even where no input has both (the same s-op on both sides); a pair whose comparison
raises (a string ordered against a number: the interpreter fails on that input, so no model
promises anything there) is neither. Negation swaps them (`can` of `not s` is `not must`), a
conjunction ands both, a disjunction ors both; `must <= can` throughout.

A row where `can` and `must` agree is decided: the query selects exactly those keys on every
input (none at all where `can` is empty, every key where `must` is full). Where every row of every
length is decided, the selector is known as a matrix (`decided_matrix`), just as a positional one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom
from compiler.graph import Graph, Op
from compiler.relations import Relation, _column, _compare_matrix
from rasp import sops

Cases = tuple[np.ndarray, np.ndarray]  # (can, must), [n_query, n_key] or broadcastable to it

# (key value, query value) pairs compared one by one per length, beyond which a select whose
# values are not all numbers is taken as unknown (every key can be selected, none must be)
MAX_PAIRS = 200_000
EXACT_FLOATS = 2**53  # whole numbers beyond this compare against floats as Python does, not float64


class SelectorCases:
    """`at(index, n)` for the selectors of one graph, from its value sets and relations."""

    def __init__(
        self,
        graph: Graph,
        relation: Sequence[Relation | None],
        values: Sequence[tuple[Atom, ...]],
    ) -> None:
        self.g, self.relation, self.values = graph, relation, values
        self._bounds: dict[int, tuple[float, float] | None] = {}  # id(value set) -> (lo, hi)
        self._pairs: dict[tuple[int, int, sops.Comparison], tuple[bool, bool]] = {}
        self._uniform: dict[int, Cases | None] = {}  # selects of two whole sets: every length alike

    def at(self, index: int, n: int) -> Cases | None:
        """Selector `index` at length n; None where nothing is known (every key can be selected,
        none must be)."""
        node = self.g[index]
        match node.op:
            case Op.SELECT:
                return self._select(index, n)
            case Op.NOT:
                inner = self.at(node.inputs[0], n)
                return None if inner is None else (~inner[1], ~inner[0])
            case Op.AND | Op.OR:
                left, right = (self.at(i, n) for i in node.inputs)
                if node.op is Op.AND:
                    if left is None or right is None:  # the known side bounds what can be
                        known = left if right is None else right
                        if known is None:
                            return None
                        return known[0], np.zeros_like(known[1])
                    return left[0] & right[0], left[1] & right[1]
                if left is None or right is None:  # the known side bounds what must be
                    known = left if right is None else right
                    if known is None:
                        return None
                    return np.ones_like(known[0]), known[1]
                return left[0] | right[0], left[1] | right[1]
        return None

    def _select(self, index: int, n: int) -> Cases | None:
        node = self.g[index]
        keys_at, queries_at = node.inputs
        assert node.comparison is not None
        keys, queries = _column(self.relation[keys_at], n), _column(self.relation[queries_at], n)
        if keys is not None and queries is not None:  # positions decide it
            m = _compare_matrix(node.comparison, keys, queries)
            return m, m
        whole = self.relation[keys_at] is None and self.relation[queries_at] is None
        if whole and index in self._uniform:
            return self._uniform[index]
        key_sets = self._sets(keys_at, n)
        query_sets = self._sets(queries_at, n)
        found = self._by_bounds(node.comparison, key_sets, query_sets)
        if found is None:
            found = self._by_pairs(node.comparison, key_sets, query_sets)
        if whole:
            self._uniform[index] = found
        return found

    def _sets(self, index: int, n: int) -> list[tuple[Atom, ...]]:
        """Each position's values at length n (one entry, the whole set, without a relation)."""
        rel = self.relation[index]
        if rel is None:
            return [self.values[index]]
        return [rel[(i, n)] for i in range(n)]

    def _bounds_of(self, values: tuple[Atom, ...]) -> tuple[float, float] | None:
        """(least, greatest) of a set of numbers that float64 orders as Python does; None
        otherwise (a string, None, nan, a whole number past 2^53). An empty set: (inf, -inf)."""
        key = id(values)  # interned sets (relations) or the node's own tuple: kept alive
        if key not in self._bounds:
            ok = all(
                type(v) in (int, float, bool)
                and not (isinstance(v, float) and math.isnan(v))
                and not (isinstance(v, int) and abs(v) > EXACT_FLOATS)
                for v in values
            )
            self._bounds[key] = (
                (float(min(values, default=math.inf)), float(max(values, default=-math.inf)))
                if ok
                else None
            )
        return self._bounds[key]

    def _by_bounds(
        self,
        comparison: sops.Comparison,
        key_sets: list[tuple[Atom, ...]],
        query_sets: list[tuple[Atom, ...]],
    ) -> Cases | None:
        """`can` and `must` from each side's least and greatest value, where both are numbers."""
        sides = []
        for sets in (key_sets, query_sets):
            bounds = [self._bounds_of(s) for s in sets]
            if any(b is None for b in bounds):
                return None
            sides.append(np.array(bounds, dtype=np.float64).reshape(len(sets), 2))
        k_lo, k_hi = sides[0][None, :, 0], sides[0][None, :, 1]  # [1, keys]
        q_lo, q_hi = sides[1][:, None, 0], sides[1][:, None, 1]  # [queries, 1]
        match comparison:
            case sops.Comparison.LT:
                can, must = k_lo < q_hi, k_hi < q_lo
            case sops.Comparison.LEQ:
                can, must = k_lo <= q_hi, k_hi <= q_lo
            case sops.Comparison.GT:
                can, must = k_hi > q_lo, k_lo > q_hi
            case sops.Comparison.GEQ:
                can, must = k_hi >= q_lo, k_lo >= q_hi
            case _:
                overlap = (k_lo <= q_hi) & (q_lo <= k_hi)
                same = (k_lo == k_hi) & (q_lo == q_hi) & (k_lo == q_lo)
                can, must = (
                    (overlap, same) if comparison is sops.Comparison.EQ else (~same, ~overlap)
                )
        # a position with no value fails every input of this length: nothing is selected there
        present = (k_lo <= k_hi) & (q_lo <= q_hi)
        return can & present, must & present

    def _by_pairs(
        self,
        comparison: sops.Comparison,
        key_sets: list[tuple[Atom, ...]],
        query_sets: list[tuple[Atom, ...]],
    ) -> Cases | None:
        """`can` and `must` from every pair of values of each pair of distinct sets, as Python
        compares them; None beyond MAX_PAIRS pairs to compare."""
        k_ids = {id(s): s for s in key_sets}
        q_ids = {id(s): s for s in query_sets}
        todo = [(k, q) for k in k_ids for q in q_ids if (k, q, comparison) not in self._pairs]
        if sum(len(k_ids[k]) * len(q_ids[q]) for k, q in todo) > MAX_PAIRS:
            return None
        for k, q in todo:
            can, must, any_ok = False, True, False
            for key in k_ids[k]:
                for query in q_ids[q]:
                    try:
                        holds = comparison.apply(key, query)
                    except TypeError:  # the interpreter fails on such an input
                        continue
                    any_ok = True
                    can, must = can or holds, must and holds
            self._pairs[(k, q, comparison)] = (can, must and any_ok)
        k_code = {k: c for c, k in enumerate(k_ids)}
        q_code = {q: c for c, q in enumerate(q_ids)}
        table = np.zeros((len(q_ids), len(k_ids), 2), dtype=bool)
        for k, kc in k_code.items():
            for q, qc in q_code.items():
                table[qc, kc] = self._pairs[(k, q, comparison)]
        rows = np.array([q_code[id(s)] for s in query_sets])[:, None]
        cols = np.array([k_code[id(s)] for s in key_sets])[None, :]
        cells = table[rows, cols]  # [queries, keys, 2]
        return cells[..., 0], cells[..., 1]


def decided_matrix(cases: Cases | None, n: int) -> np.ndarray | None:
    """The selector as a bool [n_query, n_key] matrix where every row is decided; else None."""
    if cases is None:
        return None
    can, must = (np.broadcast_to(c, (n, n)) for c in cases)
    return np.array(can) if np.array_equal(can, must) else None


def row_ranges(cases: Cases | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query at length n: at least and at most how many keys it selects."""
    if cases is None:
        return np.zeros(n, dtype=np.int64), np.full(n, n, dtype=np.int64)
    can, must = (np.broadcast_to(c, (n, n)) for c in cases)
    return must.sum(axis=1), can.sum(axis=1)

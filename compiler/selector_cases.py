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
conjunction ands both, a disjunction ors both; `must <= can` throughout. A conjunction or
disjunction whose selects all compare one key s-op with one query s-op is paired as a whole
instead (`_joint`): each pair of values through its formula.

A row where `can` and `must` agree is decided: the query selects exactly those keys on every
input (none at all where `can` is empty, every key where `must` is full). Where every row of every
length is decided, the selector is known as a matrix (`decided_matrix`), just as a positional one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from compiler.blocks import Atom
from compiler.graph import Graph, Op
from rasp import sops
from rasp.walks import Steps, unwound

# (index i, length n) -> a node's values there (compiler.relations.Relation)
Relation = Mapping[tuple[int, int], tuple[Atom, ...]]
Cases = tuple[np.ndarray, np.ndarray]  # (can, must), [n_query, n_key] or broadcastable to it

# (key value, query value) pairs compared one by one per length, beyond which a select whose
# values are not all numbers is taken as unknown (every key can be selected, none must be)
MAX_PAIRS = 200_000
EXACT_FLOATS = 2**53  # whole numbers beyond this compare against floats as Python does, not float64


@dataclass
class _Side:
    sets: list[tuple[Atom, ...]]
    column: list[Atom] | None
    bounds: np.ndarray | None = None  # SelectorCases._side_bounds, once asked
    bounds_known: bool = False
    _distinct: tuple[list[tuple[Atom, ...]], np.ndarray] | None = None

    def distinct(self) -> tuple[list[tuple[Atom, ...]], np.ndarray]:
        """The distinct sets (by identity: interned), first seen first, and each position's."""
        if self._distinct is None:
            code: dict[int, int] = {}
            for s in self.sets:
                code.setdefault(id(s), len(code))
            first = {id(s): s for s in reversed(self.sets)}
            self._distinct = (
                [first[k] for k in code],
                np.array([code[id(s)] for s in self.sets], dtype=np.int64),
            )
        return self._distinct


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
        self._shared: dict[int, tuple[int, int] | None] = {}  # SelectorCases._shared_steps
        self._flat: dict[int, bool] = {}  # SelectorCases.uniform
        self._one: dict[int, tuple[Atom, ...] | None] = {}  # SelectorCases._one_set
        self._uniform: dict[int, Cases | None] = {}  # uniform selectors: every length alike
        self._sides: dict[tuple[int, int], _Side] = {}
        self._tables: dict[tuple[tuple[int, ...], tuple[int, ...], Hashable], np.ndarray] = {}
        self._prefix: dict[tuple[int, int], bool] = {}  # SelectorCases.prefix_stable

    # A selector of thousands of ands is walked by the recursions below, each written as steps
    # (`rasp.walks.unwound`: `yield` is the recursive call) so that Python's stack stays flat and
    # the work and the caches' filling keep the recursion's order.

    def uniform(self, index: int) -> bool:
        """Whether no select under selector `index` has a side with a relation: then it is
        known alike at every position of every length (one cell, broadcast)."""
        return unwound(self._uniform_steps(index))

    def _uniform_steps(self, index: int) -> Steps[bool]:
        if index not in self._flat:
            node = self.g[index]
            if node.op is Op.SELECT:
                self._flat[index] = all(self._one_set(i) is not None for i in node.inputs)
            else:
                flat = True
                for i in node.inputs:  # (the first False ends it, as `all` does)
                    if not (yield self._uniform_steps(i)):
                        flat = False
                        break
                self._flat[index] = flat
        return self._flat[index]

    def at(self, index: int, n: int) -> Cases | None:
        """Selector `index` at length n; None where nothing is known (every key can be selected,
        none must be)."""
        return unwound(self._at_steps(index, n))

    def _at_steps(self, index: int, n: int) -> Steps[Cases | None]:
        if (yield self._uniform_steps(index)):
            if index not in self._uniform:
                self._uniform[index] = yield self._at_node(index, 1)
            return self._uniform[index]
        return (yield self._at_node(index, n))

    def prefix_stable(self, index: int, n_max: int) -> bool:
        """Whether selector `index` at every length n is its cases at n_max cut to [:n, :n]: each
        select side holds one set per position whatever the length (`indices`, a whole value
        set), and each select is taken the same way at every length (one cell where both sides
        are uniform, else both sides' bounds, which every shorter length has where n_max has
        them; no `_joint` pairing, whose cut-off at MAX_PAIRS depends on the length)."""
        return unwound(self._prefix_steps(index, n_max))

    def _prefix_steps(self, index: int, n_max: int) -> Steps[bool]:
        key = (index, n_max)
        if key not in self._prefix:
            node = self.g[index]
            if (yield self._uniform_steps(index)):
                stable = True
            elif node.op is Op.SELECT:
                stable = all(self._stable_side(i, n_max) for i in node.inputs) and all(
                    self._side_bounds(self._side(i, n_max)) is not None for i in node.inputs
                )
            elif node.op is Op.NOT or (yield self._shared_steps(index)) is None:
                stable = True
                for i in node.inputs:  # (the first False ends it, as `all` does)
                    if not (yield self._prefix_steps(i, n_max)):
                        stable = False
                        break
            else:
                stable = False
            self._prefix[key] = stable
        return self._prefix[key]

    def _stable_side(self, index: int, n_max: int) -> bool:
        key = (-1 - index, n_max)  # (beside the selectors' own entries)
        if key not in self._prefix:
            rel = self.relation[index]
            self._prefix[key] = self._one_set(index) is not None or (
                rel is not None and all(vs is rel[(i, n_max)] for (i, _), vs in rel.items())
            )
        return self._prefix[key]

    def _at_node(self, index: int, n: int) -> Steps[Cases | None]:
        node = self.g[index]
        match node.op:
            case Op.SELECT:
                return self._select(index, n)
            case Op.NOT:
                inner = yield self._at_steps(node.inputs[0], n)
                return None if inner is None else (~inner[1], ~inner[0])
            case Op.AND | Op.OR:
                joint = yield self._joint(index, n)
                if joint is not None:
                    return joint
                left = yield self._at_steps(node.inputs[0], n)
                right = yield self._at_steps(node.inputs[1], n)
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
        keys, queries = self._side(keys_at, n), self._side(queries_at, n)
        k_bounds, q_bounds = self._side_bounds(keys), self._side_bounds(queries)
        if k_bounds is not None and q_bounds is not None:  # (one value each: exact)
            return _by_bounds(node.comparison, k_bounds, q_bounds)
        if keys.column is not None and queries.column is not None:  # positions decide it
            m = compare_matrix(node.comparison, keys.column, queries.column)
            return m, m
        return self._by_pairs(node.comparison, keys, queries)

    def _joint(self, index: int, n: int) -> Steps[Cases | None]:
        """A conjunction or disjunction whose selects all compare one key s-op with one query
        s-op (`select(x, x, !=) and select(x, x, ==)`), from each pair of values through its
        whole formula: its sides' cases pair values independently, so one pair may satisfy `!=`
        and another `==`, and it would seem to select keys. None where its selects read other
        s-ops, where positions decide them (the sides' cases are exact then), or beyond
        MAX_PAIRS values to pair."""
        sides = yield self._shared_steps(index)
        if sides is None:
            return None
        keys, queries = self._side(sides[0], n), self._side(sides[1], n)
        if keys.column is not None and queries.column is not None:
            return None
        k_sets, k_codes = keys.distinct()
        q_sets, q_codes = queries.distinct()
        k_vals = [v for vs in k_sets for v in vs]
        q_vals = [v for vs in q_sets for v in vs]
        if len(k_vals) * len(q_vals) > MAX_PAIRS:
            return None
        key = (tuple(map(id, k_sets)), tuple(map(id, q_sets)), ("joint", index))
        table = self._tables.get(key)
        if table is None:
            holds, ok = yield self._formula(index, k_vals, q_vals, {})  # [q values, k values]
            # per (query set, key set): how many pairs compare, and how many of those hold
            q_of = _members(q_sets)  # [q sets, q values]
            k_of = _members(k_sets).T  # [k values, k sets]
            compared = q_of @ ok.astype(np.float64) @ k_of
            held = q_of @ (holds & ok).astype(np.float64) @ k_of
            table = np.stack([held > 0, (held == compared) & (compared > 0)], axis=-1)
            self._tables[key] = table
        cells = table[q_codes[:, None], k_codes[None, :]]  # [queries, keys, 2]
        return cells[..., 0], cells[..., 1]

    def _shared_steps(self, index: int) -> Steps[tuple[int, int] | None]:
        """(key s-op, query s-op) where every select under selector `index` compares those two."""
        if index not in self._shared:
            node = self.g[index]
            if node.op is Op.SELECT:
                found: tuple[int, int] | None = (node.inputs[0], node.inputs[1])
            else:
                each = set()
                for i in node.inputs:
                    each.add((yield self._shared_steps(i)))
                found = each.pop() if len(each) == 1 else None
            self._shared[index] = found
        return self._shared[index]

    def _formula(
        self,
        index: int,
        keys: list[Atom],
        queries: list[Atom],
        leaves: dict[sops.Comparison, tuple[np.ndarray, np.ndarray]],
    ) -> Steps[tuple[np.ndarray, np.ndarray]]:
        """Selector `index` at every (query value, key value): whether it holds, and whether
        every select under it orders the two (the interpreter builds each select whole, so a
        pair one of them cannot order fails the input). Both bool [queries, keys]."""
        node = self.g[index]
        if node.op is Op.SELECT:
            assert node.comparison is not None
            if node.comparison not in leaves:
                leaves[node.comparison] = _compared(node.comparison, keys, queries)
            return leaves[node.comparison]
        if node.op is Op.NOT:
            holds, ok = yield self._formula(node.inputs[0], keys, queries, leaves)
            return ~holds, ok
        a, a_ok = yield self._formula(node.inputs[0], keys, queries, leaves)
        b, b_ok = yield self._formula(node.inputs[1], keys, queries, leaves)
        return ((a & b) if node.op is Op.AND else (a | b)), a_ok & b_ok

    def _side(self, index: int, n: int) -> _Side:
        """A select side at length n: each position's values (one entry, the whole set, without
        a relation), and the column where each is one value."""
        key = (index, n)
        found = self._sides.get(key)
        if found is None:
            rel = self.relation[index]
            one = self._one_set(index)
            if one is not None:
                sets, column = [one], None
            else:
                assert rel is not None
                sets = [rel[(i, n)] for i in range(n)]
                column = [s[0] for s in sets] if all(len(s) == 1 for s in sets) else None
            found = self._sides[key] = _Side(sets, column)
        return found

    def _one_set(self, index: int) -> tuple[Atom, ...] | None:
        """The one set s-op `index` takes at every position of every length (its whole set
        without a relation; a constant's); None where its relation tells positions apart."""
        if index not in self._one:
            rel = self.relation[index]
            if rel is None:
                self._one[index] = self.values[index]
            else:
                first = next(iter(rel.values()), ())
                same = all(vs is first for vs in rel.values())  # interned: one set, one object
                self._one[index] = first if same else None
        return self._one[index]

    def _side_bounds(self, side: _Side) -> np.ndarray | None:
        """[positions, 2]: each position's least and greatest value, where every value is a
        number float64 orders as Python does (`_bounds_of`); else None."""
        if not side.bounds_known:
            each = [self._bounds_of(s) for s in side.sets]
            if all(b is not None for b in each):
                side.bounds = np.array(each, dtype=np.float64).reshape(len(side.sets), 2)
            side.bounds_known = True
        return side.bounds

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

    def _by_pairs(self, comparison: sops.Comparison, keys: _Side, queries: _Side) -> Cases | None:
        """`can` and `must` from every pair of values of each pair of distinct sets, as Python
        compares them; None beyond MAX_PAIRS pairs to compare."""
        k_sets, k_codes = keys.distinct()
        q_sets, q_codes = queries.distinct()
        key = (tuple(map(id, k_sets)), tuple(map(id, q_sets)), comparison)
        table = self._tables.get(key)
        if table is None:
            if sum(len(k) for k in k_sets) * sum(len(q) for q in q_sets) > MAX_PAIRS:
                return None
            table = np.zeros((len(q_sets), len(k_sets), 2), dtype=bool)
            for kc, ks in enumerate(k_sets):
                for qc, qs in enumerate(q_sets):
                    table[qc, kc] = self._pair(comparison, ks, qs)
            self._tables[key] = table
        cells = table[q_codes[:, None], k_codes[None, :]]  # [queries, keys, 2]
        return cells[..., 0], cells[..., 1]

    def _pair(
        self, comparison: sops.Comparison, keys: tuple[Atom, ...], queries: tuple[Atom, ...]
    ) -> tuple[bool, bool]:
        """(some pair compares true, every pair that compares at all does, and one does)."""
        found = self._pairs.get((id(keys), id(queries), comparison))
        if found is None:
            can, must, any_ok = False, True, False
            for k in keys:
                for q in queries:
                    try:
                        holds = comparison.apply(k, q)
                    except TypeError:  # the interpreter fails on such an input
                        continue
                    any_ok = True
                    can, must = can or holds, must and holds
            found = self._pairs[(id(keys), id(queries), comparison)] = (can, must and any_ok)
        return found


def _members(sets: list[tuple[Atom, ...]]) -> np.ndarray:
    """[sets, values]: 1 where the value (the sets' values in order, concatenated) is the set's."""
    sizes = [len(vs) for vs in sets]
    out = np.zeros((len(sets), sum(sizes)))
    out[np.repeat(np.arange(len(sets)), sizes), np.arange(sum(sizes))] = 1.0
    return out


def _compared(
    comparison: sops.Comparison, keys: list[Atom], queries: list[Atom]
) -> tuple[np.ndarray, np.ndarray]:
    """`key OP query` at every [query, key] as Python compares them, and where Python can (a
    string ordered against a number raises): vectorised where every value is a number float64
    orders as Python does, or every value a string."""
    shape = (len(queries), len(keys))
    holds = _vectorised(comparison, keys, queries)
    if holds is not None:
        return holds, np.ones(shape, dtype=bool)
    holds, ok = np.zeros(shape, dtype=bool), np.ones(shape, dtype=bool)
    for r, q_value in enumerate(queries):
        for c, k_value in enumerate(keys):
            try:
                holds[r, c] = comparison.apply(k_value, q_value)
            except TypeError:
                ok[r, c] = False
    return holds, ok


def _vectorised(
    comparison: sops.Comparison, keys: list[Atom], queries: list[Atom]
) -> np.ndarray | None:
    """`key OP query` at every [query, key] where every pair compares, at once: numbers float64
    orders as Python does, or strings, compared by their rank in Python's order (numpy's own
    string comparisons took 1.5 s for 9,000 x 9,000 tokens, and differ on a trailing NUL). None
    where some pair is compared one by one."""
    values = (*keys, *queries)
    shape = (len(queries), len(keys))
    if not values or 0 in shape:  # (an empty side would be a float array against strs)
        return np.zeros(shape, dtype=bool)
    numbers = all(
        type(v) in (int, float, bool) and not (type(v) is int and abs(v) > EXACT_FLOATS)
        for v in values
    )
    if numbers:
        k = np.array(keys, dtype=np.float64)[None, :]
        q = np.array(queries, dtype=np.float64)[:, None]
    elif all(type(v) is str for v in values):
        rank = {v: i for i, v in enumerate(sorted(set(values)))}  # equal ranks: equal strings
        k = np.fromiter((rank[v] for v in keys), dtype=np.int64, count=len(keys))[None, :]
        q = np.fromiter((rank[v] for v in queries), dtype=np.int64, count=len(queries))[:, None]
    else:
        return None
    return np.asarray(sops._COMPARE[comparison](k, q), dtype=bool).reshape(shape)


def compare_matrix(
    comparison: sops.Comparison, keys: list[Atom], queries: list[Atom]
) -> np.ndarray:
    """[n_query, n_key] of `key OP query`, False where Python cannot order them (`safe_compare`),
    vectorised when both sides are numbers (or both strings)."""
    holds = _vectorised(comparison, keys, queries)
    return _compared(comparison, keys, queries)[0] if holds is None else holds


def checked_compare_table(
    compare: Callable[[Atom, Atom], bool],
    keys: Sequence[tuple[bool, Atom]],
    queries: Sequence[tuple[bool, Atom]],
) -> np.ndarray:
    """[n_query, n_key] of `compare(key, query)` for (ok, value) pairs: False where either side's
    ok is False (its chain of maps raised there, so the select does not hold)."""
    rows = [[k_ok and q_ok and compare(k, q) for k_ok, k in keys] for q_ok, q in queries]
    return np.array(rows, dtype=bool).reshape(len(queries), len(keys))


def safe_compare(comparison: sops.Comparison, key: Atom, query: Atom) -> bool:
    """`key OP query`, False where Python cannot order them (str against number: the
    interpreter errors there, so no model promises anything)."""
    try:
        return comparison.apply(key, query)
    except TypeError:
        return False


def _by_bounds(comparison: sops.Comparison, keys: np.ndarray, queries: np.ndarray) -> Cases:
    """`can` and `must` from each side's least and greatest value per position ([positions, 2])."""
    k_lo, k_hi = keys[None, :, 0], keys[None, :, 1]  # [1, keys]
    q_lo, q_hi = queries[:, None, 0], queries[:, None, 1]  # [queries, 1]
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
            can, must = (overlap, same) if comparison is sops.Comparison.EQ else (~same, ~overlap)
    # a position with no value fails every input of this length: nothing is selected there
    present = (k_lo <= k_hi) & (q_lo <= q_hi)
    return can & present, must & present


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

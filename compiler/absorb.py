"""Disjunctions one side already covers: `A or B` is A where B holds only where A does.

The paper's BOS sort takes `select(place, indices - 1, ==) or (select(indices, 0, ==) and
select(indices, indices, ==))`: the BOS (place -1) already takes itself through the first select,
so the second adds nothing. A disjunction of selects over different s-ops is otherwise one table
over a joint (product) reading per side (`compiler.joint_readings`), here (indices, the mean the
place is rounded from): N x N columns, 51M parameters at N = 64 instead of 0.7M.

`absorbing_side` checks B => A (or A => B) on every pair of per-position value combinations the
value analysis allows, the pairs a joint table would list: where it holds, the planner compiles the
covering side alone, and the certifier proves that side's pattern.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from compiler.blocks import Atom, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.plan_context import PlanContext
from compiler.relations import combination_count, input_combinations
from compiler.selector_cases import checked_compare_table, safe_compare
from rasp.walks import Steps, unwound

# (query combination, key combination) pairs checked at most: one bool each, plus the chains'
# values per combination (Python calls, one per combination and select side)
MAX_ABSORB_PAIRS = 50_000_000
# classes per side whose pairs are tried first for a witness each way
_SAMPLE = 64
# (query class, key class) pairs whose tables are made at once, after the sample's
_SLICE_PAIRS = 1 << 20


def absorbing_side(
    ctx: PlanContext, support: Callable[[int], tuple[int, ...]], node: IRNode
) -> int | None:
    """The input of OR `node` that holds wherever the other does (so the OR is that input), or
    None where neither covers the other or the check would be too large. `support` gives, per
    s-op read by a select, the s-ops it is computed from (`MapPlanner.support`)."""
    leaves = select_leaves(ctx.graph, node.index)
    sides = []
    for side in (1, 0):  # queries, keys
        nodes = side_nodes(ctx.graph, leaves, side)
        sides.append(tuple(dict.fromkeys(s for n in nodes for s in support(n))))
    vs = ctx.value_sets
    counts = [max(1, combination_count(s, vs.relation, vs.values)) for s in sides]
    if counts[0] * counts[1] > MAX_ABSORB_PAIRS:
        return None
    combos = [input_combinations(s, vs.relation, vs.values) if s else [()] for s in sides]
    # A combination where some select side raises never occurs on an input the model must run:
    # the interpreter evaluates every side at every position, and fails there.
    truth = _Truth(ctx, sides, combos, leaves)
    live = [np.flatnonzero(valid) for valid in truth.valid]
    first, second = node.inputs
    # a pair each way on a few classes settles "neither" (most ors, like an order's digit terms,
    # at once: their whole tables are 8K x 8K classes at N = 64)
    few = truth.on(*(rows[:: max(1, len(rows) // _SAMPLE)] for rows in live))
    a, b = few.table(first), few.table(second)
    if (b & ~a).any() and (a & ~b).any():
        return None
    # then every pair, a slice of query classes at a time (every class in one: most_freq's 4,656 x
    # 4,656 at N = 256 took 1.5 s, 22 MB a table), until both ways have a witness
    b_only = a_only = False
    slices = max(1, min(len(live[0]), len(live[0]) * len(live[1]) // _SLICE_PAIRS))
    for start in range(slices):
        part = truth.on(live[0][start::slices], live[1])  # (spread: witnesses come sooner)
        a, b = part.table(first), part.table(second)
        b_only = b_only or bool((b & ~a).any())
        a_only = a_only or bool((a & ~b).any())
        if b_only and a_only:
            return None
    if not b_only:
        return first
    if not a_only:
        return second
    return None


def select_leaves(g: Graph, index: int) -> list[IRNode]:
    """The selects a selector formula (and, or, not) is made of."""
    # (a stack, not recursion: thousands of ands nest as deep; leftmost leaf first)
    leaves: list[IRNode] = []
    stack = [index]
    while stack:
        node = g[stack.pop()]
        if node.op is Op.SELECT:
            leaves.append(node)
        else:
            stack.extend(reversed(node.inputs))
    return leaves


def side_nodes(g: Graph, leaves: Sequence[IRNode], side: int) -> tuple[int, ...]:
    """The s-ops the selects `leaves` read on one side (0: keys, 1: queries), constants aside."""
    return tuple(
        dict.fromkeys(
            leaf.inputs[side] for leaf in leaves if g[leaf.inputs[side]].op is not Op.CONST
        )
    )


class _Truth:
    """Selector truth tables [query classes, key classes]: the combinations of one side alike in
    the value of every s-op the selects read there form one class (most_freq's order digits: a
    few dozen classes of thousands of combinations), so a table is over classes, not pairs of
    combinations, and says the same."""

    def __init__(
        self,
        ctx: PlanContext,
        sources: Sequence[tuple[int, ...]],
        combos: Sequence[list[tuple[Atom, ...]]],
        leaves: Sequence[IRNode],
    ) -> None:
        self.ctx, self.sources, self.combos = ctx, sources, combos
        # per side (0: queries, 1: keys): each s-op the selects read there, its distinct (ok,
        # value)s and which one each class has
        self.read: list[dict[int, tuple[list[tuple[bool, Atom]], np.ndarray]]] = []
        # per side: the classes where every s-op the selects read there is computed
        self.valid: list[np.ndarray] = []
        for side, input_side in ((0, 1), (1, 0)):
            sops_read = list(dict.fromkeys(leaf.inputs[input_side] for leaf in leaves))
            seen = [self._values(i, side) for i in sops_read]
            ats = np.stack([at for _, at in seen], axis=1)  # [combinations, s-ops read]
            kinds = np.unique(ats, axis=0)  # [classes, s-ops read]
            self.read.append(
                {i: (vals, kinds[:, k]) for k, (i, (vals, _)) in enumerate(zip(sops_read, seen))}
            )
            computed = [np.array([ok for ok, _ in vals], dtype=bool) for vals, _ in seen]
            valid = np.ones(len(kinds), dtype=bool)
            for k, ok in enumerate(computed):
                valid &= ok[kinds[:, k]]
            self.valid.append(valid)
        self._tables: dict[int, np.ndarray] = {}

    def on(self, queries: np.ndarray, keys: np.ndarray) -> _Truth:
        """The tables over these query and key classes only (row numbers of each side's)."""
        out = copy.copy(self)
        out.read = [
            {i: (vals, at[rows]) for i, (vals, at) in read.items()}
            for read, rows in zip(self.read, (queries, keys), strict=True)
        ]
        out.valid = [valid[rows] for valid, rows in zip(self.valid, (queries, keys), strict=True)]
        out._tables = {}
        return out

    def table(self, index: int) -> np.ndarray:
        # (on a list, in the recursion's order: a selector of thousands of ands nests as deep)
        return unwound(self._table_steps(index))

    def _table_steps(self, index: int) -> Steps[np.ndarray]:
        if index not in self._tables:  # (an order's nested ors share their terms)
            self._tables[index] = yield self._table(index)
        return self._tables[index]

    def _table(self, index: int) -> Steps[np.ndarray]:
        node = self.ctx.graph[index]
        match node.op:
            case Op.SELECT:
                keys, queries = node.inputs
                assert node.comparison is not None
                q_vals, q_at = self.read[0][queries]
                k_vals, k_at = self.read[1][keys]
                compare = partial(safe_compare, node.comparison)
                small = checked_compare_table(compare, k_vals, q_vals)
                return small[q_at][:, k_at]
            case Op.AND | Op.OR:
                left = yield self._table_steps(node.inputs[0])
                right = yield self._table_steps(node.inputs[1])
                return (left & right) if node.op is Op.AND else (left | right)
            case Op.NOT:
                return ~(yield self._table_steps(node.inputs[0]))
        raise TypeError(node.op)

    def _values(self, index: int, side: int) -> tuple[list[tuple[bool, Atom]], np.ndarray]:
        """The distinct (ok, value) of s-op `index` over one side's combinations, and which one
        each combination has (ok False: the chain raises there, and the select does not hold).
        The same chain over the same sources' combinations in every build of one value analysis
        (whose graphs number their nodes alike): kept there."""
        key = ("absorb side", index, self.sources[side])
        memo = self.ctx.value_sets.memo
        if key not in memo:
            memo[key] = self._evaluated(index, side)
        return memo[key]

    def _evaluated(self, index: int, side: int) -> tuple[list[tuple[bool, Atom]], np.ndarray]:
        fn = self.ctx.chain_function(index, self.sources[side])
        distinct: dict[tuple, int] = {}
        values: list[tuple[bool, Atom]] = []
        at = np.empty(len(self.combos[side]), dtype=np.int64)
        for c, combo in enumerate(self.combos[side]):
            ok, v = fn(combo)
            key = (ok, value_key(v)) if ok else (False,)
            if key not in distinct:
                distinct[key] = len(values)
                values.append((ok, v))
            at[c] = distinct[key]
        return values, at

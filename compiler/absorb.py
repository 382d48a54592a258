"""Disjunctions one side already covers: `A or B` is A where B holds only where A does.

The paper's BOS sort takes `select(place, indices - 1, ==) or (select(indices, 0, ==) and
select(indices, indices, ==))`: the BOS (place -1) already takes itself through the first select,
so the second adds nothing. A disjunction of selects over different s-ops is otherwise one table
over a joint (product) reading per side (`SelectorPlanner._combined`), here (indices, the mean the
place is rounded from): N x N columns, 51M parameters at N = 64 instead of 0.7M.

`absorbing_side` checks B => A (or A => B) on every pair of per-position value combinations the
value analysis allows, the pairs a joint table would list: where it holds, the planner compiles the
covering side alone, and the certifier proves that side's pattern.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from compiler.blocks import Atom, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.plan_context import PlanContext
from compiler.relations import combination_count, input_combinations
from compiler.selector_cases import safe_compare
from rasp import sops

# (query combination, key combination) pairs checked at most: one bool each, plus the chains'
# values per combination (Python calls, one per combination and select side)
MAX_ABSORB_PAIRS = 50_000_000


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
    truth = _Truth(ctx, sides, combos)
    first, second = node.inputs
    a, b = truth.table(first), truth.table(second)
    # A combination where some select side raises never occurs on an input the model must run:
    # the interpreter evaluates every side at every position, and fails there.
    live = np.ix_(truth.valid[0], truth.valid[1])
    a, b = a[live], b[live]
    if not (b & ~a).any():
        return first
    if not (a & ~b).any():
        return second
    return None


def select_leaves(g: Graph, index: int) -> list[IRNode]:
    """The selects a selector formula (and, or, not) is made of."""
    node = g[index]
    if node.op is Op.SELECT:
        return [node]
    return [leaf for i in node.inputs for leaf in select_leaves(g, i)]


def side_nodes(g: Graph, leaves: Sequence[IRNode], side: int) -> tuple[int, ...]:
    """The s-ops the selects `leaves` read on one side (0: keys, 1: queries), constants aside."""
    return tuple(
        dict.fromkeys(
            leaf.inputs[side] for leaf in leaves if g[leaf.inputs[side]].op is not Op.CONST
        )
    )


class _Truth:
    """Selector truth tables [query combinations, key combinations]."""

    def __init__(
        self,
        ctx: PlanContext,
        sources: Sequence[tuple[int, ...]],
        combos: Sequence[list[tuple[Atom, ...]]],
    ) -> None:
        self.ctx, self.sources, self.combos = ctx, sources, combos
        # per side: the combinations where every s-op the selects read there is computed
        self.valid = [np.ones(len(c), dtype=bool) for c in combos]

    def table(self, index: int) -> np.ndarray:
        node = self.ctx.graph[index]
        match node.op:
            case Op.SELECT:
                keys, queries = node.inputs
                assert node.comparison is not None
                q_vals, q_at = self._values(queries, 0)
                k_vals, k_at = self._values(keys, 1)
                small = np.array(
                    [[_holds(node.comparison, k, q) for k in k_vals] for q in q_vals], dtype=bool
                ).reshape(len(q_vals), len(k_vals))
                return small[q_at][:, k_at]
            case Op.AND:
                return self.table(node.inputs[0]) & self.table(node.inputs[1])
            case Op.OR:
                return self.table(node.inputs[0]) | self.table(node.inputs[1])
            case Op.NOT:
                return ~self.table(node.inputs[0])
        raise TypeError(node.op)

    def _values(self, index: int, side: int) -> tuple[list[tuple[bool, Atom]], np.ndarray]:
        """The distinct (ok, value) of s-op `index` over one side's combinations, and which one
        each combination has (ok False: the chain raises there, and the select does not hold)."""
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
            if not ok:
                self.valid[side][c] = False
        return values, at


def _holds(comparison: sops.Comparison, key: tuple[bool, Atom], query: tuple[bool, Atom]) -> bool:
    return key[0] and query[0] and safe_compare(comparison, key[1], query[1])

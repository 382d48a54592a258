"""Which s-ops a map is computed from (its *support*), for `compiler.maps.MapPlanner`.

A chain of elementwise maps is fused: its support is expanded input by input while one cheap block
can still compute the whole chain (a free view, a step MLP over one number with at most one
categorical context, a table over few categorical combinations, or gated units); an input whose
expansion would not be cheap is computed on its own first and read as a source.
"""

from __future__ import annotations

import math

from compiler import gates, map_rows
from compiler.combos import TooManyRows
from compiler.graph import IRNode, Op
from compiler.map_rows import MapRows
from compiler.picks import Pick
from compiler.plan_context import PlanContext
from compiler.relations import combination_count, input_combinations

# A fused chain of maps over several categorical s-ops is one table up to this many input
# combinations.
MAX_FUSED_TABLE = 4096


class MapSupports:
    def __init__(self, ctx: PlanContext, points: MapRows) -> None:
        self.ctx, self.points = ctx, points
        self._supports: dict[int, tuple[int, ...]] = {}

    def support(self, index: int) -> tuple[int, ...]:
        """The s-ops a map is computed from: its chain of maps is expanded (fused) input by input
        while one cheap block can still compute it; an input whose expansion would not be cheap is
        computed on its own first and read as a source."""
        if index not in self._supports and self._expanded(index):
            # the maps below first, each after its inputs (Graph.first_visits): each then finds
            # its inputs' supports, where a chain thousands of maps long recursed as deep
            g = self.ctx.graph

            def recurses(i: int) -> bool:
                return (
                    i not in self._supports
                    and self._expanded(i)
                    and g[i].name not in self.ctx.options.direct_maps
                )

            for i in g.first_visits(index, recurses)[:-1]:
                self._support(i)
        return self._support(index)

    def _expanded(self, index: int) -> bool:
        """Whether a map's support is its chain's (memoised), not itself or nothing."""
        node = self.ctx.graph[index]
        if node.op is not Op.MAP or isinstance(node.fn, Pick):
            return False
        return not self.ctx.is_position_class(index)

    def _support(self, index: int) -> tuple[int, ...]:
        g = self.ctx.graph
        node = g[index]
        if node.op is Op.CONST:
            return ()
        if node.op is not Op.MAP or self.ctx.is_position_class(index) or isinstance(node.fn, Pick):
            return (index,)  # (a pick is its own parts' sum, never a table of its V + 1 inputs)
        if index not in self._supports and node.name in self.ctx.options.direct_maps:
            # its inputs computed first, each on its own (`direct_maps`)
            self._supports[index] = tuple(
                dict.fromkeys(i for i in node.inputs if g[i].op is not Op.CONST)
            )
        if index not in self._supports:
            fused = node.name in self.ctx.options.fused_maps  # expanded even where that costs more
            out: dict[int, None] = {}
            for i in node.inputs:
                merged = out | dict.fromkeys(self.support(i))
                if fused or self._one_block(node, tuple(merged)):
                    out = merged
                elif g[i].op is not Op.CONST:
                    out[i] = None
            if any(g[s].op is Op.INDICES for s in out):
                # a class of the position is a function of `indices`, already a source here
                out = {s: None for s in out if not self.ctx.is_position_class(s)}
            direct = tuple(dict.fromkeys(i for i in node.inputs if g[i].op is not Op.CONST))
            if not fused and not self._one_block(node, tuple(out)):
                if self.cheap(direct) or self._too_many_rows(tuple(out), direct):
                    # Expanding one input made the rest costly (`vals if indices > plus else 0`:
                    # the condition's sources plus vals), or its points more than a map lists
                    # (`indices - first + 1 == length` over the three at N = 256: 2.8M; over
                    # `indices - first` and `length`, a step of their difference): compute the
                    # inputs first, then one block over them.
                    out = dict.fromkeys(direct)
            self._supports[index] = tuple(out)
        return self._supports[index]

    def cheap(self, support: tuple[int, ...]) -> bool:
        """Whether one MLP (or a free view) computes a function of these s-ops."""
        numeric = [s for s in support if self.ctx.is_numeric_source(s)]
        sizes = [len(self.ctx.values(s)) for s in support if s not in numeric]
        if numeric:
            return len(numeric) == 1 and len(sizes) <= 1
        return len(sizes) <= 1 or math.prod(sizes) <= MAX_FUSED_TABLE

    def _one_block(self, node: IRNode, support: tuple[int, ...]) -> bool:
        """Whether one block computes `node` from `support`: a cheap one (`cheap`), or gated
        units over one number and several small categorical contexts where the chain is affine
        in the number for each tuple of their values. `(2 * w) if indices > 0 else ((w + 1) if
        tokens == "b" else w)` is then 8 gated units over w, where computing the inner map
        first made the outer one a table of both maps' one-hots (369K parameters at N = 32)."""
        if self.cheap(support):
            return True
        numeric = [s for s in support if self.ctx.is_numeric_source(s)]
        sizes = [len(self.ctx.values(s)) for s in support if s not in numeric]
        if len(numeric) != 1 or len(sizes) < 2 or math.prod(sizes) > MAX_FUSED_TABLE:
            return False
        if not self.may_gate(support):
            return False
        rows = self.points.rows(node, support)
        return gates.context_fits(rows, support.index(numeric[0]), float) is not None

    def _too_many_rows(self, support: tuple[int, ...], direct: tuple[int, ...]) -> bool:
        """Whether `support` combines in more ways than a map lists (`map_rows.MAX_ROWS`, where
        its rows would be refused) and the direct inputs do not."""
        vs = self.ctx.value_sets

        def too_many(over: tuple[int, ...]) -> bool:
            if combination_count(over, vs.relation, vs.values) <= map_rows.MAX_ROWS:
                return False  # (the bound, cheap; past it, the count)
            try:
                input_combinations(over, vs.relation, vs.values, limit=map_rows.MAX_ROWS)
            except TooManyRows:
                return True
            return False

        return support != direct and too_many(support) and not too_many(direct)

    def may_gate(self, support: tuple[int, ...]) -> bool:
        """Whether gated units may be built over `support`: on, and its rows few enough."""
        vs = self.ctx.value_sets
        return self.ctx.options.gates and (
            combination_count(support, vs.relation, vs.values) <= map_rows.MAX_ROWS
        )

    def sources_of(self, support: tuple[int, ...]) -> tuple[int, ...]:
        """`support` with each map of several numerical s-ops (an affine view such as `x - y`)
        replaced by the s-ops it is computed from."""
        g, out = self.ctx.graph, {}
        for s in support:
            inner = self.support(s) if g[s].op is Op.MAP else (s,)
            several = len(inner) > 1 and all(self.ctx.is_numeric_source(i) for i in inner)
            out.update(dict.fromkeys(inner if several else (s,)))
        return tuple(out)

"""The free views of a map (no block computes them): its one categorical source's one-hot terms
regrouped by the map's value, or an exact affine form of its numerical sources' numbers.

`compiler.maps.MapPlanner` decides which way a map is computed and asks these where a view is
exact; they build nothing but the reading (`Encoded`) itself.
"""

from __future__ import annotations

from typing import Any

from compiler import map_rows
from compiler.blocks import ONE, Atom, Dim, Encoded, Encoding, Terms, value_key
from compiler.graph import IRNode
from compiler.map_rows import Fit, MapRows, Rows
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import view_numerical
from compiler.relations import combination_count


class MapViews:
    """The views of the maps of one build: `points` lists each map's rows and affine fit once."""

    def __init__(self, ctx: PlanContext, reader: Reader, built: Built, points: MapRows) -> None:
        self.ctx, self.reader, self.built, self.points = ctx, reader, built, points

    def affine_view(
        self,
        node: IRNode,
        support: tuple[int, ...],
        numeric: list[int],
        categorical: list[int],
    ) -> Encoded | None:
        """sum_k a_k * x_k + b over numeric sources (no categorical ones), when that is exact: a free view."""
        if categorical:
            return None
        fit = self.fit(node, support)
        if fit is None:
            return None
        coef, misfit = fit
        terms: dict[Dim, float] = {}
        for a, s in zip(coef[:-1], support):
            source = self.reader.reading(s, Encoding.NUMERICAL)  # a width: decoded first
            for d, c in source.number:
                terms[d] = terms.get(d, 0.0) + float(a) * c
            misfit += abs(float(a)) * source.misfit  # (a view of a view: both misses add up)
        terms[ONE] = terms.get(ONE, 0.0) + float(coef[-1])
        number = tuple((d, c) for d, c in terms.items() if c != 0.0)
        values = self.ctx.values(node.index)
        return Encoded(node.name, Encoding.NUMERICAL, values, number=number, misfit=misfit)

    def fit(self, node: IRNode, support: tuple[int, ...]) -> Fit | None:
        """The map's exact affine form over the numbers of `support`, with its misfit, or None."""
        vs = self.ctx.value_sets
        fit = self.points.stated_fit(node, support)  # `opens - closes`: no rows to fit
        if fit is None:
            # reachable combinations (related inputs jointly): two prefix means meet in (i+2)^2
            # ways at position i, not in the product of their ~N^2/2 values each
            size = combination_count(support, vs.relation, vs.values)
            if size > map_rows.MAX_ROWS:  # the fit checks every row, as many as a table may have
                return None
            fit = self.points.affine_fit(node, support)
        return fit

    def regrouped(self, node: IRNode, source: int, rows: Rows, encoding: Encoding) -> Encoded:
        """A map of one categorical s-op: regroup its one-hot terms (free)."""
        src = self.reader.reading(source, Encoding.CATEGORICAL)
        vals = self.ctx.values(node.index)
        groups: dict[tuple[str, Any], list[Terms]] = {value_key(v): [] for v in vals}
        for (u,), v in rows:
            groups[value_key(v)].append(src.one_hot[src.index_of(u)])
        vals = self._twins_merged(node, vals, groups)
        vals = self._unreached_dropped(node, vals, groups)
        one_hot = tuple(_add_terms(groups[value_key(v)]) for v in vals)
        cat = Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=one_hot)
        return cat if encoding is Encoding.CATEGORICAL else view_numerical(node, cat, vals)

    def _twins_merged(
        self, node: IRNode, vals: tuple[Atom, ...], groups: dict[tuple[str, Any], list[Terms]]
    ) -> tuple[Atom, ...]:
        """`vals` without a value no row gives whose equal number of another type (1.0 beside 1)
        is written in its place (`MapRows` merged their rows: the source reads them as one), that
        written value standing for it (`Built.canon`), as a step MLP's one-hot does. Its own
        empty column was the decoder's second choice tied with nothing: an identity map of a
        prefix mean's copy, 1 at position 0 and 1.0 after it, was refused (argmax margin 0)."""
        twins = self.built.twins.get(node.index, {})
        canon: dict[tuple[str, Any], Atom] = {}
        for v in vals:
            key = value_key(v)
            if groups[key] or key not in twins:
                continue
            written = [w for w in twins[key].values() if groups[value_key(w)]]
            if len(written) == 1:
                canon[key] = written[0]
        if not canon:
            return vals
        kept = tuple(v for v in vals if value_key(v) not in canon)
        self.built.canon[node.index] = {**{value_key(v): v for v in kept}, **canon}
        return kept

    def _unreached_dropped(
        self, node: IRNode, vals: tuple[Atom, ...], groups: dict[tuple[str, Any], list[Terms]]
    ) -> tuple[Atom, ...]:
        """`vals` without a value no row gives: the rows are every reachable value of the source,
        so such a value never occurs (the value analysis pairs the map's inputs independently:
        `"q" if c else ("e" if indices < 2 else tokens)` where c is False only at index 1 never
        gives a token). Listed with no dimension, a head copying this map was held to write its
        column from a zero vector (a certifier's deviation of 1 and an argmax refused at N = 3);
        readers drop the rows of a value a reading lacks, as they do for a twin merged away."""
        # (a value whose row was merged into a twin's, 1 beside 1.0, occurs: it stays, as before)
        twins = self.built.twins.get(node.index, {})
        kept = tuple(v for v in vals if groups[value_key(v)] or value_key(v) in twins)
        if not kept or len(kept) == len(vals):
            return vals
        table = self.built.canon.get(node.index)
        if table is not None:
            dropped = {value_key(v) for v in vals} - {value_key(v) for v in kept}
            self.built.canon[node.index] = {k: v for k, v in table.items() if k not in dropped}
        return kept


def _add_terms(parts: list[Terms]) -> Terms:
    total: dict[Dim, float] = {}
    for terms in parts:
        for d, c in terms:
            total[d] = total.get(d, 0.0) + c
    return tuple((d, c) for d, c in total.items() if c != 0.0)

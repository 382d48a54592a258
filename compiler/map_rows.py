"""A map's reachable points: its value at every reachable combination of its support's values, and
the exact affine fit over them, computed once per (map, support) for `maps.MapPlanner`.

A map of two means is planned in several ways over the same ~N^3/3 rows (641K at N = 128), so
rows and fits are cached; an entry stays valid while the support's canonical tables are the same
objects (a categorical reading built since may merge values).
"""

from __future__ import annotations

import math
from itertools import compress
from operator import eq, ne
from typing import Any

from compiler import merged_rows
from compiler.affine_fits import affine_fit
from compiler.blocks import Atom, value_key
from compiler.combos import TooManyRows
from compiler.graph import IRNode
from compiler.known_affine import known_affine, known_misfit
from compiler.plan_context import PlanContext
from compiler.plan_state import Built
from compiler.relations import input_combinations
from compiler.row_memo import AnalysisRows, derived
from compiler.weighted_counts import declared_affine
from rasp.atoms import same_value
from rasp.errors import CompileError, Diagnostic
from rasp.seqvalues import value_repr

# A map is tabulated over at most this many combinations of its inputs' values (a guard: beyond it,
# compiling takes minutes and gigabytes).
MAX_ROWS = 2_000_000

_NUMBER_TYPES = {int, float, bool}  # what an affine fit reads as numbers
Rows = list[tuple[tuple[Atom, ...], Atom]]  # (support values, the map's value there)
_Key = tuple[int, tuple[int, ...]]  # (map, support)
Fit = tuple[list[float], float]  # ([a_1, ..., a_k, b], misfit: `affine_fits.affine_fit`)


class MapRows:
    """Rows and affine fits of maps over their supports, cached per canonical state."""

    def __init__(self, ctx: PlanContext, built: Built) -> None:
        self.ctx, self.built = ctx, built
        self._rows: dict[_Key, tuple[tuple, Rows]] = {}
        self._fits: dict[_Key, tuple[tuple, Fit | None]] = {}

    def rows(self, node: IRNode, support: tuple[int, ...]) -> Rows:
        """The map's value at every reachable combination of its support's values, in the values
        the support's categorical readings use (refused where equal numbers disagree)."""
        found, rows = self._cached(self._rows, node, support)
        if not found:
            rows = self._compute(node, support)
            self._rows[(node.index, support)] = (self._canon_tables(support), rows)
        return rows

    def affine_fit(self, node: IRNode, support: tuple[int, ...]) -> Fit | None:
        """([a_1, ..., a_k, b], misfit) of an exact affine map of the support's numbers (misfit:
        a bound on how far a value lies from the form, `affine_fits.affine_fit`), else None."""
        stated = self.stated_fit(node, support)
        if stated is not None:
            return stated
        found, fit = self._cached(self._fits, node, support)
        if found:
            return fit
        rows = self.rows(node, support)
        fit = derived(rows, "affine fit and misfit", lambda: _affine_fit(rows))
        self._fits[(node.index, support)] = (self._canon_tables(support), fit)
        return fit

    def stated_fit(self, node: IRNode, support: tuple[int, ...]) -> Fit | None:
        """`affine_fit` where the map's function states its form (no rows: `opens - closes` of
        two prefix means has 5.6M at N = 256, past MAX_ROWS), else None."""
        if support != node.inputs:
            return None
        declared = declared_affine(node.fn)
        if declared is not None:
            # the compiler's own integer sum (`weighted_counts`): exact by construction, and its
            # rows are a million pairs at N = 256
            return list(declared), 0.0
        inputs = [self.ctx.values(i) for i in support]
        form = known_affine(node.fn, inputs)
        if form is None:
            return None
        misfit = known_misfit(node.fn, form, inputs, self.ctx.values(node.index))
        return (form, misfit) if math.isfinite(misfit) else None

    def _canon_tables(self, support: tuple[int, ...]) -> tuple:
        return tuple(self.built.canon.get(s) for s in support)

    def _cached(self, cache: dict, node: IRNode, support: tuple[int, ...]) -> tuple[bool, Any]:
        hit = cache.get((node.index, support))
        tables = self._canon_tables(support)
        if hit is None or any(a is not b for a, b in zip(hit[0], tables, strict=True)):
            return False, None
        return True, hit[1]

    def analysis_rows(self, node: IRNode, support: tuple[int, ...]) -> AnalysisRows:
        """The rows as the value analysis listed them, before any canonical table: listed once for
        every build (what a planner decides before building readings reads these, not `rows`)."""
        # the same in every build from one value analysis (/tmp/both.rasp at N = 256 plans 7
        # builds, each listing the same 266K rows)
        key = ("map_rows", node.index, support)
        memo = self.ctx.value_sets.memo
        if key not in memo:
            # with what the planners derive from these rows alone (compiler.row_memo)
            memo[key] = (self._reachable(node, support), {})
        rows, shared = memo[key]
        return AnalysisRows(rows, shared)  # (a build's own list)

    def _compute(self, node: IRNode, support: tuple[int, ...]) -> Rows:
        rows = self.analysis_rows(node, support)
        if not any(s in self.built.canon for s in support):
            return rows
        # merged alike in every build whose support's tables are alike (compiler.merged_rows)
        return merged_rows.shared(
            self.ctx.value_sets.memo,
            self.built,
            node.index,
            support,
            lambda: self._merge(node, support, list(rows)),
        )

    def _reachable(self, node: IRNode, support: tuple[int, ...]) -> Rows:
        """The map's value at every reachable combination of its support's values."""
        ctx = self.ctx
        vs = ctx.value_sets
        # The value set lists every output that occurs (`values` enumerates shared sources jointly):
        # a combination of the support's values giving another output never meets (`y - x` over
        # y = 2x and x, at y = 6 and x = 0), so no unit is spent on it.
        occurs = {value_key(v) for v in ctx.values(node.index)}
        try:  # fail fast and located, not after minutes and gigabytes
            combos = input_combinations(support, vs.relation, vs.values, limit=MAX_ROWS)
        except TooManyRows:
            names = ", ".join(f"'{ctx.graph[s].text}'" for s in support)
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.text}' is computed from {names}, whose values combine in more "
                        f"than {MAX_ROWS:,} ways at this maximum length",
                        node.span,
                        "use a smaller maximum length, or compute it from s-ops with fewer "
                        "values (e.g. round a mean before using it)",
                    )
                ]
            ) from None
        outs = ctx.chain_values(node.index, support, combos)  # numbers; None: no value
        if outs is not None:
            rows = [
                (combo, out)
                for combo, out in zip(combos, outs, strict=True)
                if out is not None and value_key(out) in occurs
            ]
        else:  # a map compiler.vector_maps does not compute: one call per row
            chain = ctx.chain_function(node.index, support)
            rows = []
            for combo in combos:
                ok, out = chain(combo)
                if ok and value_key(out) in occurs:
                    rows.append((combo, out))
        return rows

    def _merged(self, node: IRNode, support: tuple[int, ...], rows: Rows) -> Rows:
        """`rows` in the values the support's categorical readings use (the twins met noted)."""
        merged, twins = self._merge(node, support, rows)
        merged_rows.write_twins(self.built, node.index, twins)
        return merged

    def _merge(
        self, node: IRNode, support: tuple[int, ...], rows: Rows
    ) -> tuple[Rows, merged_rows.Twins]:
        """`_merged`'s rows, and the twins to note for the map (`merged_rows.write_twins`; those
        met before a refusal are noted before it is raised)."""
        built = self.built
        twins: merged_rows.Twins = []
        if not rows:
            return [], twins
        # column by column at C speed, each value object's canonical value and key found once
        # (870K rows over a few hundred values per column at N = 24, row by row: 11 s of a 33 s
        # compile). By id: the rows keep every value alive, and `canonical` reads only the
        # support's tables, which this never changes.
        canon_columns, key_columns = [], []
        for s, column in zip(support, zip(*(combo for combo, _ in rows)), strict=True):
            ids = list(map(id, column))
            canon = {i: built.canonical(s, v) for i, v in dict(zip(ids, column)).items()}
            keys = {i: value_key(c) for i, c in canon.items()}
            canon_columns.append(map(canon.__getitem__, ids))
            key_columns.append(list(map(keys.__getitem__, ids)))
        # (no support: every row reads alike, the empty tuple)
        canons = list(zip(*canon_columns)) if support else [()] * len(rows)
        row_keys = list(zip(*key_columns)) if support else [()] * len(rows)
        outs = [out for _, out in rows]
        n = len(rows)
        # each key's first row (the one kept, as filling a dict in row order keeps it), and the
        # rows read alike after it (a few thousand of the 870K), at C speed
        first = dict(zip(reversed(row_keys), range(n - 1, -1, -1)))
        firsts = list(map(first.__getitem__, row_keys))
        for i in compress(range(n), map(ne, firsts, range(n))):
            kept, out = outs[firsts[i]], outs[i]
            if not same_value(kept, out):
                merged_rows.write_twins(built, node.index, twins)  # (as they were met)
                # (which inputs: the support may be the map's sources' sources, and the two
                # numbers may come far apart, tracr's int 0 of a mean of one key and its 0.0)
                where = [self._inputs(support, rows[j][0]) for j in (firsts[i], i)]
                raise CompileError(
                    [
                        Diagnostic(
                            f"'{node.text}' gives {value_repr(kept)} and {value_repr(out)} "
                            f"for inputs that are equal numbers ({where[0]}; {where[1]})",
                            node.span,
                            "a compiled model reads numbers, so 1 and 1.0 cannot lead to different results",
                        )
                    ]
                )
            if value_key(kept) != value_key(out):  # `out` is written as `kept` (Built.canonical)
                twins.append((value_key(out), value_key(kept), kept))
        return list(compress(zip(canons, outs), map(eq, firsts, range(n)))), twins

    def _inputs(self, support: tuple[int, ...], combo: tuple[Atom, ...]) -> str:
        """`name = value` per support node, as a refusal names one row."""
        graph = self.ctx.graph
        return ", ".join(f"{graph[s].name} = {value_repr(v)}" for s, v in zip(support, combo))


def _affine_fit(rows: Rows) -> Fit | None:
    """([a_1, ..., a_k, b], misfit) of an exact affine map of the rows' support values, else
    None."""
    combos = [combo for combo, _ in rows]
    outs = [out for _, out in rows]
    types: set[type] = set(map(type, outs))
    for column in zip(*combos):  # type() per value at C speed: ~N^3/3 rows at N = 128
        types.update(map(type, column))
    if rows and types <= _NUMBER_TYPES:
        return affine_fit(combos, outs)
    return None

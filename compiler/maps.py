"""How a map (a fused chain of elementwise maps) is computed: a free view, a step MLP or a table MLP.

A chain of maps is fused: its *support* is the set of s-ops it is computed from, expanded input by
input while one cheap block can still compute the whole chain (`compiler.map_supports`). One
categorical support is a free view (its one-hot terms regrouped); one numerical support, plus at
most one categorical context, is a step MLP (`map_steps`); several categorical supports are one
table MLP; an exactly affine map of numerical s-ops is a free numerical view. The free views
themselves are `compiler.map_views`'s; this module chooses among the ways.
"""

from __future__ import annotations

import math

from compiler import coarse_steps, map_steps, mlp, piecewise
from compiler.blocks import ONE, Encoded, Encoding, MLPSpec, all_numbers
from compiler.compare_steps import comparison_steps
from compiler.decoded_sums import decoded_sum
from compiler.fits import NoiseError
from compiler.gated_maps import GatedMaps
from compiler.graph import IRNode, Op
from compiler.known_sums import known_line
from compiler.linear_steps import affine_plus_sum, linear_steps
from compiler.map_rows import MapRows, Rows
from compiler.map_supports import MAX_FUSED_TABLE, MapSupports
from compiler.map_views import MapViews
from compiler.pick_mlp import plan_pick
from compiler.picks import Pick
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.positional_maps import PositionalMaps
from compiler.readings import decode_numeric, materialise, view_numerical
from compiler.row_memo import derived
from compiler.side_tables import side_table
from compiler.table_columns import needed_columns, projected
from rasp.errors import CompileError, Diagnostic

# A map of a number with `indices` as context tries the index's classes from this many indices
# (the selectors' MIN_CLASSED_VALUES): below it, the index one-hot is narrow anyway.
MIN_INDEX_CLASSES = 32
# From this many positions on, a map of the position and a width that is a step of a line through
# both (`indices > 0.75 * length`) decodes the width for it, a layer more: below, stepped over the
# width's 1/(w+1) with the index one-hot as context is at most 4 times larger (the worth of a
# layer, compiler.model.LAYER_WORTH: 25,255 parameters against 6,612 at N = 100; 43,841 against
# 8,348 at 128).
LINES_MIN_POSITIONS = 128
# A comparison of a number with a categorical s-op of numbers over more combinations than this is
# stepped over their difference (`compare_steps`), not per context value from the rows (1.8M rows
# of `tokens_int > m` over a prefix mean at N = 256: 13 s in Python).
CONTEXT_MAX_ROWS = 100_000


class MapPlanner:
    def __init__(self, ctx: PlanContext, reader: Reader, built: Built) -> None:
        self.ctx, self.reader, self.built = ctx, reader, built
        self.positional = PositionalMaps(ctx, built)
        self.points = MapRows(ctx, built)  # each map's rows and affine fit, computed once
        self.supports = MapSupports(ctx, self.points)
        self.views = MapViews(ctx, reader, built, self.points)  # the free ones
        self.gated = GatedMaps(ctx, reader, built, self.points, self.supports)

    def support(self, index: int) -> tuple[int, ...]:
        """The s-ops map `index` is computed from (`MapSupports.support`)."""
        return self.supports.support(index)

    def plan(self, node: IRNode, encoding: Encoding) -> Encoded:
        """The reading of map `node`, and the blocks that compute it."""
        vals = self.ctx.values(node.index)
        if encoding is Encoding.NUMERICAL and not all_numbers(vals, bools=True):
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.text}' is read as a number but has values {vals[:4]}",
                        node.span,
                    )
                ]
            )
        if isinstance(node.fn, Pick):  # a count over the length per query value (compiler.picks)
            return plan_pick(self.ctx, self.reader, self.built, node, node.fn, encoding)
        if self.ctx.is_positional(node.index):
            embedded = self.positional.embedded(node, encoding)
            if embedded is not None:
                return embedded
        if (
            node.name in self.ctx.options.table_sides
        ):  # a select side snapped (compiler.side_tables)
            return side_table(self.ctx, self.built, node, self._read_rows, encoding)
        g = self.ctx.graph
        direct = tuple(dict.fromkeys(i for i in node.inputs if g[i].op is not Op.CONST))
        line = known_line(self.ctx, self.reader, self.built, node, direct, self.views.fit)
        if line is not None:  # `copy + count`, where the driver asks (compiler.known_sums)
            return self._as(node, line, encoding)
        if len(direct) > 1 and self._numbers(direct, encoding):
            decoded = self._decoded_sum(node, direct, encoding)
            if decoded is not None:  # a * m0 + b * m1, each mean decoded first: where asked
                return decoded
            affine = self.views.affine_view(node, direct, list(direct), [])
            if affine is not None:  # e.g. n_opens - n_closes: free
                return self._as(node, affine, encoding)
        support = self.support(node.index)
        wider = self.supports.sources_of(support)
        if wider != support and not self.supports.cheap(support):
            # `a if a < b else b` over two widths: its support keeps `a < b` as a source (a
            # table over the comparison and both one-hots); from a and b, a few units
            banded = self._piecewise(node, wider, encoding)
            if banded is not None:
                return banded
        if wider != support:
            # `min(frac_a, frac_b)` read as a number, whose support keeps `frac_a < frac_b` (a
            # table over it and both one-hots: 1.0M parameters at N = 16): a kink or two
            kinked = self._kinked(node, wider, encoding)
            if kinked is not None:
                return kinked
        if len(direct) == 2 and len(support) > 2 and not self.supports.cheap(support):
            # `(length - indices + 5) % (b + 1)`: a table over three sources; over the numbers
            # of its two inputs (each computed first), one step per wrap
            banded = self._piecewise(node, direct, encoding)
            if banded is not None:
                return banded
        try:
            out = self._map_over(node, support, encoding, last_resort=True)
        except NoiseError:
            # round(10 * (frac_a - frac_b)) stepped on the difference: float64's 1/4 - 2/4 = -0.25
            # and 4/12 - 7/12 = -0.25000000000000006 round to -2 and -3, and float32 tells them
            # apart on no reading of that one number. Stepped on frac_a with frac_b as context,
            # each pair keeps its own value.
            wider = self.supports.sources_of(support)
            if wider == support:
                raise
            out = self._map_over(node, wider, encoding, last_resort=True)
        assert out is not None  # a last resort always builds
        return out

    def _as(self, node: IRNode, number: Encoded, encoding: Encoding) -> Encoded:
        """The map read as `encoding`, from its free numerical view `number`."""
        if encoding is Encoding.NUMERICAL:
            return number
        x = self.reader.reading(node.index, Encoding.NUMERICAL)
        vals = self.ctx.values(node.index)
        return decode_numeric(self.built, node, x, [(float(v), v) for v in vals], encoding)

    def _map_over(
        self,
        node: IRNode,
        support: tuple[int, ...],
        encoding: Encoding,
        *,
        last_resort: bool,
    ) -> Encoded | None:
        """The map as a function of `support`, if one cheap block computes it (always, if last_resort)."""
        ctx, reader = self.ctx, self.reader
        vals = ctx.values(node.index)
        if not support:
            const = Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=(((ONE, 1.0),),))
            if encoding is Encoding.CATEGORICAL:
                return const
            return view_numerical(node, const, vals)
        numeric = [s for s in support if ctx.is_numeric_source(s)]
        categorical = [s for s in support if s not in numeric]
        sizes = [len(ctx.values(s)) for s in categorical]
        if len(numeric) > 1 or (len(numeric) == 1 and len(categorical) > 1):
            affine = self.views.affine_view(node, support, numeric, categorical)
            if affine is not None and encoding is Encoding.NUMERICAL:
                return affine
            if not last_resort:
                return None
            if len(numeric) == 2 and not categorical:
                compared = comparison_steps(ctx, reader, self.built, node, support, encoding)
                if compared is not None:  # f > g over more combinations than rows are listed
                    return compared
                rows = self.points.rows(node, support)
                linear = linear_steps(ctx, reader, self.built, node, support, rows, encoding)
                if linear is not None:  # frac_a > frac_b: a step of frac_a - frac_b
                    return linear
                coarse = coarse_steps.coarse_steps(  # rows again: a reading built since may merge
                    ctx,
                    reader,
                    self.built,
                    node,
                    support,
                    self.points.rows(node, support),
                    encoding,
                )
                if coarse is not None:
                    return coarse
                banded = self._piecewise(node, support, encoding)
                if banded is not None:  # min(w1, w2): affine on either side of w1 = w2
                    return banded
                kinked = self._kinked(node, support, encoding)
                if kinked is not None:  # max(frac_a, glob_a): glob_a + relu(frac_a - glob_a)
                    return kinked
                contextual = self._context_steps(node, support, encoding)
                if contextual is not None:
                    return contextual
        elif len(categorical) > 1 and math.prod(sizes) > MAX_FUSED_TABLE and not last_resort:
            return None
        if (
            len(numeric) == 1
            and len(categorical) == 1
            and ctx.graph[categorical[0]].op is Op.INDICES
            and sizes[0] >= MIN_INDEX_CLASSES
        ):
            # past the rows a map lists, `indices < m` over a mean of positions: a step of their
            # difference (the coarse steps below read every row)
            compared = comparison_steps(ctx, reader, self.built, node, support, encoding)
            if compared is not None:
                return compared
            # `-1 if indices == 0 else place`: the index matters only through a few classes;
            # stepped with N index contexts the MLP would read the N-wide one-hot
            coarse = coarse_steps.coarse_steps(
                ctx, reader, self.built, node, support, self.points.rows(node, support), encoding
            )
            if coarse is not None:
                return coarse
            banded = self._piecewise(node, support, encoding)
            if banded is not None:  # (indices + 1) % length: a few units over two numbers
                return banded
            if ctx.max_len >= LINES_MIN_POSITIONS or not reader.reads_frac(numeric[0]):
                rows = self.points.rows(node, support)
                linear = linear_steps(ctx, reader, self.built, node, support, rows, encoding)
                if linear is not None:  # indices > 0.75 * length: a step of indices - 0.75·length
                    return linear
        if len(numeric) == 1 and len(categorical) == 1:
            # tokens_int > a prefix mean of them: a step of their difference
            compared = comparison_steps(
                ctx, reader, self.built, node, support, encoding, min_rows=CONTEXT_MAX_ROWS
            )
            if compared is not None:
                return compared
        if len(numeric) == 1 and len(categorical) > 1 and math.prod(sizes) <= MAX_FUSED_TABLE:
            # `-f if tokens == "a" else (1 if indices > 0 else f)`: affine in f for each pair of
            # context values, one gated unit per reachable pair (compiler.gates)
            gated = self.gated.over_contexts(node, support, numeric[0], categorical, encoding)
            if gated is not None:
                return gated
        if len(numeric) == 1 and len(categorical) == 1:
            swapped = self.gated.over_category(node, support, numeric[0], categorical[0], encoding)
            if swapped is not None:
                return swapped
        one_block = (not numeric and len(categorical) == 1) or (
            len(numeric) == 1 and len(categorical) <= 1
        )
        read = categorical if one_block else support
        if not numeric and len(categorical) > 1:
            # only the sources the outputs depend on (compiler.table_columns), decided on the
            # analysis' rows before any reading is built for a source the table would not read
            # (not this build's `rows`: the readings may merge values, and they would be listed
            # again); `projected` checks the choice on the rows the readings give
            listed = self.points.analysis_rows(node, support)
            needed = derived(listed, "needed columns", lambda: needed_columns(listed, len(support)))
            read = [support[c] for c in needed]
        readings, rows = self._read_rows(node, support, read)
        if len(numeric) == 1 and len(categorical) <= 1:  # (it drops the rows below itself)
            return map_steps.map_steps(
                ctx, reader, self.built, node, support, numeric[0], rows, encoding
            )
        table = list(rows)  # pairs, not a dict: (1,) and (1.0,) are different rows
        if len(read) < len(support):
            fewer = projected(rows, [support.index(s) for s in read])
            if fewer is None:  # (the readings built since merged values that disagree)
                read = support
                readings, rows = self._read_rows(node, support, read)
                table = list(rows)
            else:
                table = fewer
        if not numeric and len(read) == 1:
            return self.views.regrouped(node, read[0], table, encoding)
        out = materialise(self.built, node, encoding, vals)
        spec: MLPSpec | None = None
        try:
            spec = mlp.table_mlp(
                readings,
                table,
                out,
                op=node.text,
                name=node.name,
                exact=self.built.exact,
                clamp=ctx.options.clamped_tables,
            )
        except CompileError as too_large:  # steps over the index may still fit
            refusal = too_large
        steps = self._index_steps(node, support, rows, out)
        if steps is not None and (spec is None or steps.hidden < spec.hidden):
            spec = steps
        if spec is None:
            raise refusal
        self.built.add_mlp(spec)
        return out

    def _read_rows(
        self, node: IRNode, support: tuple[int, ...], read: list[int] | tuple[int, ...]
    ) -> tuple[list[Encoded], Rows]:
        """The categorical readings of `read` (of `support`) and the map's rows over `support`."""
        ctx = self.ctx
        # Readings first: a categorical reading decides which values it distinguishes (canonical).
        readings = [self.reader.reading(s, Encoding.CATEGORICAL) for s in read]
        rows = self.points.rows(node, support)
        # A value the value analysis lists but the s-op's own reading, built from its exact
        # points, rules out (`a = v0 == v0` is True only) never occurs: no row for it (its
        # one-hot was looked up, and the table refused as broken: `tokens if a else t`)
        lacking = [
            (support.index(s), r)
            for s, r in zip(read, readings, strict=True)
            if not all(map(r.has, ctx.values(s)))
        ]
        if lacking:
            rows = [row for row in rows if all(r.has(row[0][k]) for k, r in lacking)]
        return readings, rows

    def _piecewise(
        self, node: IRNode, support: tuple[int, ...], encoding: Encoding
    ) -> Encoded | None:
        """The map as a few units over its two whole-number sources' numbers (`piecewise`)."""
        rows = lambda: self.points.rows(node, support)  # noqa: E731 (again after a reading is built)
        return piecewise.banded_map(
            self.ctx, self.reader, self.built, node, support, rows, encoding
        )

    def _kinked(self, node: IRNode, support: tuple[int, ...], encoding: Encoding) -> Encoded | None:
        """A number that is one of its two numerical sources plus a function of their
        difference or sum (`linear_steps.affine_plus_sum`), or None."""
        ctx = self.ctx
        if encoding is not Encoding.NUMERICAL or len(support) != 2:
            return None
        if not all(ctx.is_numeric_source(s) for s in support):
            return None
        try:
            rows = self.points.rows(node, support)
        except CompileError:  # past the rows a map lists: not this form (`(a + b) / 2 - 1`)
            return None
        return affine_plus_sum(ctx, self.reader, self.built, node, support, rows)

    def _index_steps(
        self, node: IRNode, support: tuple[int, ...], rows: Rows, out: Encoded
    ) -> MLPSpec | None:
        """A map of `indices` and one other categorical s-op as a step MLP over the index number
        with the other as context, or None where that is not such a map or does not fit. Over
        (token, index), a digit of a sort key's rank changes every 10 or 100 positions: a few
        steps, where a table spends a unit per (token, index) pair (tracr's `make_sort` at N =
        256: six digit maps of 768 units each)."""
        g = self.ctx.graph
        if len(support) != 2 or [g[s].op is Op.INDICES for s in support].count(True) != 1:
            return None
        xi = 0 if g[support[0]].op is Op.INDICES else 1
        context = self.reader.reading(support[1 - xi], Encoding.CATEGORICAL)
        index = map_steps.XView(self.reader.reading(support[xi], Encoding.NUMERICAL), float, None)
        try:
            return map_steps.context_steps(node, index, xi, context, rows, out, self.built)
        except CompileError:
            return None

    def _numbers(self, direct: tuple[int, ...], encoding: Encoding) -> bool:
        """Whether an affine view of `direct` may be tried: each a numerical source, or (for a
        number wanted, `length - indices` copied as one number) indices beside at least one."""
        numeric = [self.ctx.is_numeric_source(i) for i in direct]
        if all(numeric):
            return True
        g = self.ctx.graph
        return (
            encoding is Encoding.NUMERICAL
            and any(numeric)
            and all(ok or g[i].op is Op.INDICES for ok, i in zip(numeric, direct, strict=True))
        )

    def _decoded_sum(
        self, node: IRNode, direct: tuple[int, ...], encoding: Encoding
    ) -> Encoded | None:
        """The map as a view of its means' terms, each mean decoded first (compiler.decoded_sums),
        where the driver asks for it (`BuildOptions.decoded_sums`); else None."""
        if node.name not in self.ctx.options.decoded_sums or encoding is not Encoding.NUMERICAL:
            return None
        fit = self.views.fit(node, direct)
        if fit is None:
            return None
        return decoded_sum(self.ctx, self.reader, self.built, node, direct, fit)

    def _context_steps(self, node: IRNode, support: tuple[int, ...], encoding: Encoding) -> Encoded:
        """A map of two numerical s-ops whose joint table is too big (`length * mean`, the
        original's `count`): the one with fewer values is read categorically as the context of a
        step MLP over the other, O(values) wide instead of O(product)."""
        sizes = [len(self.ctx.values(s)) for s in support]
        x_src = support[0] if sizes[0] >= sizes[1] else support[1]
        # The context's reading first: it decides which values it distinguishes (canonical).
        self.reader.reading(support[1] if x_src == support[0] else support[0], Encoding.CATEGORICAL)
        rows = self.points.rows(node, support)
        # Gated where no map reads it (`q * length`: 2 units per length, where steps over a
        # prefix mean at N = 16 summed activations of hundreds whose float32 error broke the
        # output's snap: a one-hot output of 2.8M parameters). A map read by another map
        # (`c / length > 0.5`) is not: it is stepped over both from their sources where its
        # steps are not proved, in fewer layers.
        return map_steps.map_steps(
            self.ctx,
            self.reader,
            self.built,
            node,
            support,
            x_src,
            rows,
            encoding,
            gates=node.index not in self.ctx.graph.read_by_maps(),
        )

"""Maps computed by step MLPs over one numerical reading (`step_mlp.numeric_mlp`).

- `map_steps`: a map of one numerical source, with at most one categorical context (thresholds per
  context value); exactly affine in the source, it is a free numerical view instead.
- `coarse_steps` (compiler.coarse_steps) builds on these: a map of two numerical sources where one
  matters only through a few classes of its values.

`rows` are the map's reachable points, (support values, value), from `map_rows.MapRows`.

A width or the length is stepped on its head's reading 1/(w+1), which needs no decoding layer. Its
steps there are 1/(w(w+1)) apart, which float32 stops resolving at a few hundred; then the map is
stepped on the decoded whole number w instead (one more MLP, exact at every length the decode is).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler import step_mlp
from compiler.affine_fits import affine_points_misfit
from compiler.bit_gates import bit_gated_parts
from compiler.blocks import (
    ONE,
    Atom,
    Dim,
    Encoded,
    Encoding,
    MLPSpec,
    sort_values,
    value_key,
)
from compiler.decoded_sums import term_mlp
from compiler.fits import merge_per_context, merge_points
from compiler.gates import gated_affine
from compiler.graph import IRNode, Op
from compiler.interpolate import context_interpolation_mlp, interpolation_mlp
from compiler.numeric import ErrorBound, rounding_error
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import decode_numeric, materialise
from compiler.row_memo import derived, rows_having
from rasp.errors import CompileError

Rows = list[tuple[tuple[Atom, ...], Atom]]


@dataclass(frozen=True)
class XView:
    """A numerical source as a step MLP reads it: the number, where each value sits on it, and the
    number's float32 error (None: its own rounding only)."""

    x: Encoded
    at: Callable[[Atom], float]
    error: float | ErrorBound | None


def view_of(ctx: PlanContext, reader: Reader, src: int, decoded: bool) -> XView:
    """Numeric source `src` as a step MLP reads it: a width's 1/(w+1) unless `decoded`."""
    if decoded and reader.reads_frac(src):  # the whole number, decoded by its own step MLP (exact)
        return XView(reader.reading(src, Encoding.NUMERICAL), float, None)
    # (whether src is read as a fraction is fixed per plan: asked once, not at each of the
    # 911K points of /tmp/both.rasp's steps at N = 256)
    at = _fraction if reader.reads_frac(src) else float
    return XView(reader.number(src), at, ctx.x_error(src))


def decoded_mean(ctx: PlanContext, reader: Reader, built: Built, node: IRNode, src: int) -> XView:
    """Mean `src` read by map `node` as the number its decoded one-hot writes
    (`BuildOptions.decoded_factors`, compiler.decoded_factors): one unit per value, at most one
    on (`decoded_sums.term_mlp`), so the number errs by its grid's rounding alone, not by the
    one-hot's columns' error summed, nor by the head's; and by a float64 twin's column (1/3
    written as 0.33333333333333337)."""
    cat = reader.reading(src, Encoding.CATEGORICAL)  # the mean's step MLP into its one-hot
    term, spec, largest = term_mlp(node, 0, cat, 1.0)
    built.add_mlp(spec)
    built.bounds[Dim(term.name)] = largest
    twins = max(
        (abs(float(u) - float(built.canonical(src, u))) for u in ctx.values(src)), default=0.0
    )
    number = Encoded(
        term.name,
        Encoding.NUMERICAL,
        ctx.values(src),
        number=((Dim(term.name), 1.0),),
        misfit=largest * 2.0**-52 + twins,
    )
    return XView(number, float, None)


def _fraction(w: Atom) -> float:
    """Where a width w sits on its head's 1/(w+1) (`Reader.x_of`)."""
    return 1.0 / (w + 1)  # type: ignore[operator]


def fraction_then_decoded(
    ctx: PlanContext, reader: Reader, sources: tuple[int, ...], build: Callable[[bool], Encoded]
) -> Encoded:
    """`build(False)`, reading widths as fractions; where float32 cannot resolve their steps, or
    the driver asks for decoded widths (`ctx.options.fractions` off), `build(True)` on the decoded widths.
    `build` adds its blocks only once it has succeeded."""
    fractions = any(reader.reads_frac(s) for s in sources)
    if fractions and not ctx.options.fractions:
        return build(True)
    try:
        return build(False)
    except CompileError:
        if not fractions:
            raise
    return build(True)


def map_steps(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    x_src: int,
    rows: Rows,
    encoding: Encoding,
    *,
    gates: bool = True,
) -> Encoded:
    """A map of one numerical source (and at most one categorical context): one step MLP, or
    gated units where it is affine in the number for each context value (`gates`: may be)."""

    def build(decoded: bool) -> Encoded:
        source = ctx.graph[x_src]
        if (
            node.name in ctx.options.decoded_factors
            and source.op is Op.AGGREGATE
            and ctx.is_mean(source)
        ):
            view = decoded_mean(ctx, reader, built, node, x_src)
        else:
            view = view_of(ctx, reader, x_src, decoded)
        return _map_steps(
            ctx, built, reader, node, support, support.index(x_src), view, rows, encoding, gates
        )

    return fraction_then_decoded(ctx, reader, (x_src,), build)


def _map_steps(
    ctx: PlanContext,
    built: Built,
    reader: Reader,
    node: IRNode,
    support: tuple[int, ...],
    xi: int,
    view: XView,
    rows: Rows,
    encoding: Encoding,
    gates: bool,
) -> Encoded:
    x = view.x
    if len(support) == 1:
        points = [(view.at(c[0]), v) for c, v in rows]
        affine = affine_points_misfit(points) if encoding is Encoding.NUMERICAL else None
        if affine is not None:  # e.g. 2 * mean: a free numerical view
            (a, b), misfit = affine
            number = tuple((d, a * c) for d, c in x.number) + ((ONE, b),)
            misfit += abs(a) * x.misfit  # (the line misses the values; x its own)
            values = ctx.values(node.index)
            return Encoded(node.name, Encoding.NUMERICAL, values, number=number, misfit=misfit)
        if encoding is Encoding.NUMERICAL:
            return steps_or_interpolation(
                built, node, view.x, view.error, points, chained=ctx.options.chained_lines
            )
        return decode_numeric(built, node, x, points, encoding, view.error)
    context = reader.reading(support[1 - xi], Encoding.CATEGORICAL)
    # The value analysis may list a context value the context's own reading, built from its
    # exact points, proved never occurs (`v0 == v0` is True only, where the analysis pairs v0's
    # values independently): such rows never occur either (their one-hot was a KeyError).
    if not all(map(context.has, ctx.values(support[1 - xi]))):
        rows = rows_having(rows, 1 - xi, context.has)
    if (
        node.name in ctx.options.decoded_factors and encoding is Encoding.NUMERICAL
    ):  # whole slopes: a unit per bit, in three MLPs (compiler.bit_gates)
        parts = bit_gated_parts(x, view.at, xi, context, rows, op=node.text, name=node.name)
        if parts is not None:
            specs, number, misfit = parts
            for spec, part in specs:
                built.add_mlp(spec)
                built.bounds[Dim(part.name)] = max(abs(float(v)) for v in part.values)
            values = ctx.values(node.index)
            return Encoded(node.name, Encoding.NUMERICAL, values, number=number, misfit=misfit)
    out = materialise(built, node, encoding, ctx.values(node.index))
    gated = None
    if (
        gates and ctx.options.gates and encoding is Encoding.NUMERICAL
    ):  # affine per context: a few units
        gated = gated_affine(x, view.at, xi, [context], rows, out, op=node.text, name=node.name)
    if gated is None and encoding is Encoding.NUMERICAL:
        gated = _context_steps_or_interpolation(
            node, view, xi, context, rows, out, built, ctx.options.chained_lines
        )
    built.add_mlp(gated or context_steps(node, view, xi, context, rows, out, built))
    return out


def _context_steps_or_interpolation(
    node: IRNode,
    view: XView,
    xi: int,
    context: Encoded,
    rows: Rows,
    out: Encoded,
    built: Built,
    chained: bool = False,
) -> MLPSpec:
    """`context_steps`, or the interpolation per context value (`q * q if tokens == "a" else
    q`) where that errs less or the steps are refused (not yet added). `chained`: the line
    takes x's written error (`with_written_error`)."""
    merged = _merged_per_context(node, view, xi, rows)
    top = max(abs(p) for _, pts in merged for p, _ in pts)
    bound = _input_error(view.error, top, view.x)
    # the gates' weights multiply the context's own error into the line's output, where the
    # steps' pairs cancel it (`any_negative` over a balance with the other balance's `< 0` as
    # context, at N = 64: a line of slope 64 gated by 2.02 carried 0.096 into a mean that the
    # next step weighs by 256; the steps, 0.0007)
    # (counted where the map takes two values, all jumps, which the steps write exactly: for a
    # smooth map per context, `q * q * length` at N = 16, the estimate would lose a line the
    # certifier proves, 30K parameters, to steps whose snap fails, 6.5M)
    # (once per value analysis: mixed seed 1820297 scanned a map's rows in each build)
    two = derived(rows, ("two values",), lambda: len({value_key(v) for _, v in rows}) <= 2)
    noise = written_noise(built, context) if two else 0.0
    line = _or_none(
        lambda: context_interpolation_mlp(
            view.x,
            context,
            merged,
            out,
            op=node.text,
            name=node.name,
            x_error=with_written_error(bound, built, view.x) if chained else bound,
            context_noise=noise,
        )
    )
    return _less_error(
        line,
        lambda exact: context_steps(node, view, xi, context, rows, out, built, exact=exact),
        built,
    )


def steps_or_interpolation(
    built: Built,
    node: IRNode,
    x: Encoded,
    x_error: float | ErrorBound | None,
    points: list[tuple[float, Atom]],
    out: Encoded | None = None,
    chained: bool = False,
) -> Encoded:
    """A numerical function of the number `x` (`points`: its reachable (x, value) pairs), written
    to `out` (default: the node's own number): a step MLP, or the interpolation through its points
    where that errs less (a smooth map of a mean, whose steps' activations add up) or the steps
    are refused. `chained`: the line takes x's written error (`with_written_error`)."""
    merged = merge_points(node, points)
    if out is None:
        out = materialise(built, node, Encoding.NUMERICAL, sort_values(v for _, v in merged))
    bound = _input_error(x_error, max(abs(p) for p, _ in merged), x)
    common = {"op": node.text, "name": out.name}
    line_error = with_written_error(bound, built, x) if chained else bound
    line = _or_none(lambda: interpolation_mlp(x, merged, out, x_error=line_error, **common))
    built.add_mlp(
        _less_error(
            line,
            lambda exact: step_mlp.numeric_mlp(
                x, merged, out, x_error=x_error, exact=exact, **common
            ),
            built,
        )
    )
    return out


def _input_error(error: float | ErrorBound | None, top: float, x: Encoded) -> ErrorBound:
    """A reading's error as an ErrorBound (None: x's own rounding, as `numeric_mlp` takes it)."""
    if error is None:
        return ErrorBound(rounding_error(top, len(x.number)))
    return error if isinstance(error, ErrorBound) else ErrorBound(float(error))


def _less_error(
    line: MLPSpec | None, steps: Callable[[set[Dim]], MLPSpec], built: Built
) -> MLPSpec:
    """The interpolation `line` where its output errs less than the steps' (built by `steps`
    with the set of dims they prove exact) or the steps are refused; else the steps. Exact steps
    (whole numbers in the float32 integer band) err by nothing and are kept."""
    exact = set(built.exact)  # what the steps prove exact counts only if they are kept
    try:
        stepped = steps(exact)
    except CompileError:
        if line is None:
            raise
        return line
    if (
        line is not None
        and line.notes["output_error_bound"] < stepped.notes["output_error_bound"]
        and not set(stepped.out_dims) <= exact
    ):
        return line
    built.exact.update(exact)
    return stepped


def written_noise(built: Built, reading: Encoded) -> float:
    """An estimate of the float32 error on any one value of a categorical `reading`: its terms'
    weights times the output error bound of the MLP that writes each of their dims (0 for the
    embeddings' exact columns)."""
    errors = _written_errors(built)
    return max(
        (sum(abs(w) * errors.get(dim, 0.0) for dim, w in terms) for terms in reading.one_hot),
        default=0.0,
    )


def _written_errors(built: Built) -> dict[Dim, float]:
    """Each dim an MLP writes: that MLP's output error bound."""
    errors: dict[Dim, float] = {}
    for spec in built.mlps:
        bound = float(spec.notes.get("output_error_bound", 0.0))
        for dim in spec.out_dims:
            errors[dim] = max(errors.get(dim, 0.0), bound)
    return errors


def with_written_error(bound: ErrorBound, built: Built, x: Encoded) -> ErrorBound:
    """`bound`, x's error as an interpolation through x's points takes it: plus the output error
    of the MLPs that write x's number. An interpolation passes its input's error on times its
    slope, so a chain of them compounds, which x's own rounding hides: `(x * t + n) % 4` five
    times over a width (defs 2044093 at N = 8) grew 0.003 to 7,330 against a snap of 0.001,
    where the steps write each value afresh (tests/compiler/test_interpolation_chains.py)."""
    errors = _written_errors(built)
    written = sum(abs(w) * errors.get(dim, 0.0) for dim, w in x.number)
    return ErrorBound(bound.absolute + written, bound.relative) if written else bound


def _or_none(build: Callable[[], MLPSpec | None]) -> MLPSpec | None:
    """An interpolation, or None where it is too large to build (the steps' refusal stands)."""
    try:
        return build()
    except CompileError:
        return None


def _merged_per_context(
    node: IRNode, view: XView, xi: int, rows: Rows
) -> list[tuple[Atom, list[tuple[float, Atom]]]]:
    """`merge_per_context` of the rows' points per context value, for a numerical output: found
    once per value analysis for its own rows (compiler.row_memo; `view.at` is a module's function,
    the same in every build, and `node` only names a refusal, which is not kept)."""
    return derived(
        rows,
        ("merged per context", xi, view.at),
        lambda: merge_per_context(node, _per_context(view, xi, rows), None)[0],
    )


def _per_context(view: XView, xi: int, rows: Rows) -> list[tuple[Atom, list[tuple[float, Atom]]]]:
    """Each value of the context (support position 1 - xi) with its points (x on `view`, value)."""
    per_context: dict[tuple[str, Any], tuple[Atom, list[tuple[float, Atom]]]] = {}
    for combo, v in rows:
        c = combo[1 - xi]
        per_context.setdefault(value_key(c), (c, []))[1].append((view.at(combo[xi]), v))
    return list(per_context.values())


def context_steps(
    node: IRNode,
    view: XView,
    xi: int,
    context: Encoded,
    rows: Rows,
    out: Encoded,
    built: Built,
    *,
    exact: set[Dim] | None = None,
) -> MLPSpec:
    """The step MLP of a map of two s-ops, stepped on `view` (support position `xi`) with the
    other's categorical reading `context` setting each step's threshold (not yet added). The
    dims it proves exact go into `exact` (default: `built.exact`)."""
    if out.is_categorical:
        merged, canon = merge_per_context(node, _per_context(view, xi, rows), out.values)
    else:
        merged, canon = _merged_per_context(node, view, xi, rows), None
    spec = step_mlp.numeric_mlp(
        view.x,
        [],
        out,
        op=node.text,
        name=node.name,
        context=context,
        context_points=merged,
        x_error=view.error,
        exact=built.exact if exact is None else exact,
    )
    if canon is not None:  # the values its one-hot uses, for the maps that read it
        built.canon[node.index] = canon
    return spec

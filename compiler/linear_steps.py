"""A map of two numerical s-ops that depends on them only through x - y (or x + y): one step MLP
over that sum, a free view of both readings. Or, for a number, one of them plus such a function
(`affine_plus_sum`): max(x, y) = y + relu(x - y).

`frac_a > frac_b` over two prefix means: each mean takes about N^2/2 values, and stepped on one
with the other as a categorical context the MLP needs a unit pair per value of both (4.0M
parameters at N = 40). The comparison is a step of frac_a - frac_b at 0: one unit pair, reading
two residual dimensions. Comparisons (`<`, `==`, `>=`, ...) and any function of a difference or
a sum qualify; the map is checked at every reachable combination of the two values, and where two
combinations whose sums float32 cannot tell apart give different values, it does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from compiler import map_steps
from compiler.affine_fits import row_misfit, sum_misfit
from compiler.blocks import Atom, Dim, Encoded, Encoding, all_numbers, value_key
from compiler.fits import FLOAT64_NOISE
from compiler.graph import IRNode
from compiler.map_steps import Rows
from compiler.numeric import ErrorBound, rounding_error
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import decode_numeric
from compiler.row_memo import derived
from compiler.separating_lines import separating_coefficients
from rasp.atoms import same_value
from rasp.errors import CompileError

# x - y first: comparisons are its steps
COEFFICIENTS = ((1.0, -1.0), (1.0, 1.0))


def linear_steps(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    rows: Rows,
    encoding: Encoding,
) -> Encoded | None:
    """The map as a step MLP over a·x + b·y (`COEFFICIENTS`), or None where it is no function of
    such a sum that float32 resolves. Widths are first read as their heads' 1/(w+1) (a comparison
    of widths is a comparison of those, reversed), then decoded."""
    if len(support) != 2 or not rows:
        return None
    # what the rows alone decide is found once per value analysis (compiler.row_memo): that
    # `m * indices` is no function of a sum took ~1 s in each of three builds at N = 32
    found = derived(rows, "linear columns", lambda: _columns(rows))
    if found is None:
        return None
    columns, outputs, out_ids = found
    fractions = any(reader.reads_frac(s) for s in support)
    # widths as fractions first (no decoding MLP), unless the driver asks for decoded ones
    for decoded in (False, True) if ctx.options.fractions or not fractions else (True,):
        if decoded and not fractions:
            break
        # where each value sits on its reading, before any reading is built (decoding a width
        # adds an MLP: only for a sum the map is a function of)
        frac = tuple(not decoded and reader.reads_frac(s) for s in support)
        at = [
            1.0 / (column + 1.0) if f else column for f, column in zip(frac, columns, strict=True)
        ]
        seps = lambda at=at: _separating(at, out_ids)  # noqa: E731 (only past COEFFICIENTS)
        for coef in _coefficients(lambda f=frac, s=seps: derived(rows, ("lines", f), s)):
            points = derived(
                rows,
                ("sum points", frac, coef),
                lambda at=at, coef=coef: _function_of_sum(at, coef, out_ids, outputs),
            )
            if points is None:
                continue
            views = [map_steps.view_of(ctx, reader, s, decoded) for s in support]
            x = sum_view(node, views, coef, points)
            biggest = [float(np.abs(a).max()) for a in at]
            canon = built.canon.get(node.index)
            error = sum_error(views, coef, biggest)
            if ctx.options.written_sums:  # (compiler.written_sums: the driver's last build)
                error = map_steps.with_written_error(error, built, x)
            try:
                return decode_numeric(built, node, x, points, encoding, error, resolved=True)
            except CompileError:  # steps too close for float32 at these errors, or too many
                # whose activations add up past exact: another sum, or none; the values this
                # attempt made canonical are not the reading built
                if canon is None:
                    built.canon.pop(node.index, None)
                else:
                    built.canon[node.index] = canon
    return None


# the part of a map that is one of its inputs: max(x, y) - y and min(x, y) - x are functions of
# x - y (none: |x - y| is one, where the map's support kept `x > y` as a source)
AFFINE_PARTS = ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0))
_NUMBERS_OR_BOOLS = frozenset({int, float, bool})
# a function of the sum taking at most this many values is tried first: its steps are exact
FEW_STEP_VALUES = 8


def affine_plus_sum(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    rows: Rows,
) -> Encoded | None:
    """A numerical map of two numbers that is one of them plus a function g of x - y or x + y
    (`max(frac_a, frac_b)` = frac_b + relu(frac_a - frac_b)): g is one MLP over the sum (an
    interpolation: a kink or two, `map_steps.steps_or_interpolation`) writing its own number,
    and the map is a free view of that number and the input's. None where it is no such map
    (or a width is read as its 1/(w+1), which is not its number)."""
    if len(support) != 2 or not rows or any(reader.reads_frac(s) for s in support):
        return None
    # from the rows alone: found once per value analysis for its rows (compiler.row_memo)
    sums = derived(rows, "affine plus sum points", lambda: _sum_points(rows))
    if sums is None:
        return None
    at, values, found = sums
    for part, coef, points in found:
        views = [map_steps.view_of(ctx, reader, s, False) for s in support]
        x = sum_view(node, views, coef, points)
        biggest = [float(np.abs(a).max()) for a in at]
        name = f"{node.name}.rest"
        rest_values = tuple(sorted({v for _, v in points}))
        out = Encoded.materialised_numerical(name, rest_values)
        try:
            g = map_steps.steps_or_interpolation(
                built,
                node,
                x,
                sum_error(views, coef, biggest),
                points,
                out,
                chained=ctx.options.chained_lines,
            )
        except CompileError:
            continue
        built.bounds[Dim(name)] = max(abs(v) for v in rest_values)
        terms: dict[Dim, float] = {}
        for a, view in zip(part, views, strict=True):
            for d, c in view.x.number:
                terms[d] = terms.get(d, 0.0) + a * c
        for d, c in g.number:
            terms[d] = terms.get(d, 0.0) + c
        number = tuple((d, c) for d, c in terms.items() if c != 0.0)
        # the values are part·(x, y) + rest up to float64's rounding of rest (and the views' own
        # misses): carried, as an affine fit's misfit
        rows_at = np.stack([at[0], at[1], values - part[0] * at[0] - part[1] * at[1]], axis=1)
        misfit = row_misfit(
            np.concatenate([rows_at, np.ones((len(values), 1))], axis=1),
            np.array([part[0], part[1], 1.0, 0.0]),
            values,
        )
        misfit += sum(abs(a) * view.x.misfit for a, view in zip(part, views, strict=True))
        misfit += g.misfit
        vals = ctx.values(node.index)
        return Encoded(node.name, Encoding.NUMERICAL, vals, number=number, misfit=misfit)
    return None


SumPoints = list[tuple[tuple[float, float], tuple[float, float], list[tuple[float, float]]]]


def _sum_points(rows: Rows) -> tuple[list[np.ndarray], np.ndarray, SumPoints] | None:
    """The rows' two numbers and outputs as arrays (read-only: shared), and each (affine part,
    sum) whose rest is a function of the sum taking two values or more, with its points, in the
    order `affine_plus_sum` tries them; None where a value is not a number."""
    if not _numbers(rows, outputs=True):
        return None
    at = [_column(rows, k) for k in range(2)]  # [rows] each
    values = np.fromiter((float(v) for _, v in rows), dtype=np.float64, count=len(rows))
    found = []
    for part, coef in _parts_and_sums():
        rest = values - part[0] * at[0] - part[1] * at[1]  # [rows]: g(sum) where it is a map
        points = _function_points(0.0 + coef[0] * at[0] + coef[1] * at[1], rest)
        if points is not None and len({v for _, v in points}) >= 2:
            found.append((part, coef, points))
    # a rest of a few values first, a few exact step pairs: `(x + y) % 2` less its sum is one
    # step at 2, where the map itself takes ~N^2 values and its interpolation is steep at the
    # wrap (that slope multiplies the sum's error: not proved at N = 32); else the order above
    # (|x - y| interpolates in one kink, less x - y it would take as many values)
    found.sort(key=lambda f: min(len({v for _, v in f[2]}), FEW_STEP_VALUES + 1))
    for array in (*at, values):
        array.flags.writeable = False
    return at, values, found


def _parts_and_sums() -> Iterator[tuple[tuple[float, float], tuple[float, float]]]:
    """(affine part, sum) pairs to try: each of AFFINE_PARTS over each sum, and the sum itself
    as the part (`(x + y) % 2` is x + y less a step of it)."""
    for part in AFFINE_PARTS:
        for coef in COEFFICIENTS:
            yield part, coef
    for coef in COEFFICIENTS:
        yield coef, coef


def _function_points(sums: np.ndarray, rest: np.ndarray) -> list[tuple[float, float]] | None:
    """The distinct (sum, rest) points where `rest` is a function of the sum (sums and rests
    float64 rounding alone may tell apart count as one), else None."""
    order = np.lexsort((rest, sums))
    s, r = sums[order], rest[order]
    same_sum = np.diff(s) <= FLOAT64_NOISE * np.maximum(1.0, np.abs(s[1:]))
    same_rest = np.abs(np.diff(r)) <= FLOAT64_NOISE * np.maximum(1.0, np.abs(r[1:]))
    if (same_sum & ~same_rest).any():
        return None
    keep = np.concatenate(([True], ~same_sum))
    return list(zip(s[keep].tolist(), r[keep].tolist(), strict=True))


def _coefficients(
    separating: Callable[[], list[tuple[float, float]]],
) -> Iterator[tuple[float, float]]:
    """COEFFICIENTS, then, for a map of two values, the lines that separate them
    (`separating_lines`: `indices > 0.75 * length` over indices - 0.75·length), found only
    where no sum in COEFFICIENTS did."""
    yield from COEFFICIENTS
    for coef in separating():
        if coef not in COEFFICIENTS:
            yield coef


def _separating(at: list[np.ndarray], out_ids: np.ndarray) -> list[tuple[float, float]]:
    return separating_coefficients(at[0], at[1], out_ids)


def _columns(rows: Rows) -> tuple[list[np.ndarray], list[Atom], np.ndarray] | None:
    """Both support values of every row as floats ([rows] each), the distinct outputs and each
    row's index among them; None where a support value is not a number."""
    if not _numbers(rows):
        return None
    outputs, out_ids = _output_ids(rows)
    return [_column(rows, k) for k in range(2)], outputs, out_ids


def _function_of_sum(
    at: list[np.ndarray], coef: tuple[float, float], out_ids: np.ndarray, outputs: list[Atom]
) -> list[tuple[float, Atom]] | None:
    """The distinct (sum, value) points where the map is a function of coef·at, else None."""
    points = _points(0.0 + coef[0] * at[0] + coef[1] * at[1], out_ids, outputs)
    return points if a_function(points) else None


def _numbers(rows: Rows, outputs: bool = False) -> bool:
    """Whether every support value (and with `outputs`, every output) of the rows is a number or
    a bool, their types found at C speed (value by value, as before: a tenth of a 26 s compile
    at N = 8, a max over a mean of prefix means)."""
    values = chain.from_iterable(map(itemgetter(0), rows))
    if outputs:
        values = chain(values, map(itemgetter(1), rows))
    if set(map(type, values)) <= _NUMBERS_OR_BOOLS:
        return True
    # a subclass of a number's type: judged one value at a time
    combos = map(itemgetter(0), rows)
    return all(all_numbers(combo, bools=True) for combo in combos) and (
        not outputs or all_numbers([out for _, out in rows], bools=True)
    )


def _column(rows: Rows, k: int) -> np.ndarray:
    return np.fromiter((float(combo[k]) for combo, _ in rows), dtype=np.float64, count=len(rows))


def _output_ids(rows: Rows) -> tuple[list[Atom], np.ndarray]:
    """The distinct outputs (by value and type) and each row's index among them."""
    ids: dict[tuple[str, Any], int] = {}
    outputs: list[Atom] = []
    at = np.empty(len(rows), dtype=np.float64)
    for r, (_, out) in enumerate(rows):
        key = value_key(out)
        if key not in ids:
            ids[key] = len(outputs)
            outputs.append(out)
        at[r] = ids[key]
    return outputs, at


def _points(sums: np.ndarray, out_ids: np.ndarray, outputs: list[Atom]) -> list[tuple[float, Atom]]:
    """The distinct (sum, value) points, in the order the rows first give them: a map of two
    means has ~N^3/3 rows (641K at N = 128) but far fewer distinct sums."""
    _, first = np.unique(np.stack([sums, out_ids], axis=1), axis=0, return_index=True)
    first.sort()
    return [
        (s, outputs[int(i)])
        for s, i in zip(sums[first].tolist(), out_ids[first].tolist(), strict=True)
    ]


def a_function(points: list[tuple[float, Atom]]) -> bool:
    """Whether sums that float64 rounding alone may have told apart give one value (a step MLP
    merges them; the map must not care which it reads)."""
    ordered = sorted(points, key=lambda p: p[0])
    for (x0, v0), (x1, v1) in zip(ordered, ordered[1:]):
        if x1 - x0 <= FLOAT64_NOISE * max(1.0, abs(x1)) and not same_value(v0, v1):
            return False
    return True


def sum_view(
    node: IRNode,
    views: list[map_steps.XView],
    coef: tuple[float, ...],
    points: list[tuple[float, Atom]],
) -> Encoded:
    """a·x + b·y read from both readings' dimensions (no block computes it)."""
    terms: dict[Dim, float] = {}
    for a, view in zip(coef, views, strict=True):
        for d, c in view.x.number:
            terms[d] = terms.get(d, 0.0) + a * c
    number = tuple((d, c) for d, c in terms.items() if c != 0.0)
    values = tuple(sorted({x for x, _ in points}))
    # the points' sums are float64's: a·x + b·y up to its rounding, and the views' own misses
    misfit = sum_misfit(coef, [[view.at(v) for v in view.x.values] for view in views], values)
    misfit += sum(abs(a) * view.x.misfit for a, view in zip(coef, views, strict=True))
    return Encoded(f"{node.name}.sum", Encoding.NUMERICAL, values, number=number, misfit=misfit)


def sum_error(
    views: list[map_steps.XView], coef: tuple[float, ...], biggest: list[float]
) -> ErrorBound:
    """|float32 sum - exact sum|: each reading's error times its coefficient, and the rounding of
    the sum's own terms, as large as the readings' largest values (they may cancel)."""
    total, magnitude, n_terms = 0.0, 0.0, 0
    for a, view, top in zip(coef, views, biggest, strict=True):
        error = view.error
        if error is None:
            own = rounding_error(top, len(view.x.number))
        elif isinstance(error, ErrorBound):
            own = error.absolute + error.relative * top
        else:
            own = float(error)
        total += abs(a) * own
        magnitude += abs(a) * top
        n_terms += len(view.x.number)
    return ErrorBound(total + rounding_error(magnitude, n_terms))

"""A map of two whole numbers that is affine on each of a few bands of one integer direction:
one MLP of a few units, however many values its inputs take.

`(indices + 1) % length` is indices + 1 where length - indices - 1 >= 1 and 0 where it is 0; the
distance to the nearer end, `indices if indices < length - indices - 1 else length - indices - 1`,
is affine on either side of 2·indices - length + 1 = 0. Stepped over one number with the other's
one-hot as context, such maps take a unit pair per value of the context and read its N-wide
one-hot: N^2 parameters (775K at N = 256). Here, with s = a·x + b·y (a, b whole numbers, at most
2) and the map equal to an affine g_j on the j-th band of s (bands starting at t_2 < ... < t_p),

    f = g_1 + sum_j h_j · [s >= t_j],  h_j = g_j - g_{j-1},

and with S = s - t + 1/2 (whole s: |S| >= 1/2, the step's margin) each term is

    h · [s >= t] = relu(h - lo + M·S) - relu(M·S) + lo · (relu(K·S + 1) - relu(K·S))

where lo is h's least value on the band's side and M is large enough that the first unit is off
below it. Every affine form has dyadic coefficients, so pre-activations are exact multiples of a
power of 2 at exact inputs; the certifier bounds what the inputs' own errors do.

A categorical output is built where every band is constant (`indices < length / 2`): the terms
then write one-hot differences instead of numbers. A numerical map may be a sum of banded
components: `(indices + 2) % length` wraps twice at length 1, `(indices + 5) % length` is one step
per wrap, each its own direction. Finding the bands is `compiler.bands`; this module plans and
builds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from compiler.bands import Band, Banded, Bands, Rows, fit
from compiler.blocks import ONE, Atom, Encoded, Encoding, MLPDomain, MLPSpec, is_number, value_key
from compiler.bounds import dyadic_exponent
from compiler.graph import IRNode, Op
from compiler.mlp import MAX_MLP_PAIRS, Builder, Output, exact_reading, linear
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.positional import FLOAT32_WHOLE
from compiler.readings import materialise

# From this many positions on, a map of the position and a width (or the length) that is affine on a
# few bands decodes the width for it, a layer more (`banded_map`).
BANDS_MIN_POSITIONS = 64
MARGIN = 4.0  # every unit's pre-activation is at least this far from 0 at exact inputs
K = 8.0  # a step's slope in S: K/2 = MARGIN
EXACT_CHUNK = 2**20  # points x units per chunk of `_exact`'s products


def banded_map(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    rows: Callable[[], Rows],
    encoding: Encoding,
) -> Encoded | None:
    """The map as one MLP over the numbers of its two whole-number sources, affine on each of a
    few bands of one direction, or None where it is not such a map (`rows()`: its reachable
    points, by `map_rows.MapRows`). A width is decoded to its whole number for it (an MLP, where it
    was read as 1/(w+1)): with the position as the other source, a layer more than a step MLP over
    the width's 1/(w+1) with the index one-hot as context, whose N^2 parameters (17,534 for a
    rotation's query at N = 40, 775K at N = 256) are worth that layer from BANDS_MIN_POSITIONS
    on. (Over two widths, a context is decoded too: no layer more.)"""
    if len(support) != 2 or not all(_whole(ctx.values(s)) for s in support):
        return None  # (before the rows: a map of two means has millions)
    g = ctx.graph
    position = any(g[s].op is Op.INDICES or ctx.is_positional(s) for s in support)
    if position and any(reader.reads_frac(s) for s in support):
        if ctx.max_len < BANDS_MIN_POSITIONS:
            return None
    points = rows()
    found = fit(points)
    if found is None or not builds(found, encoding, len(points)):
        return None  # before any reading is built: a width's decoding MLP would be in vain
    if encoding is Encoding.CATEGORICAL and not one_value_per_band(found, points):
        return None
    readings = (
        reader.reading(support[0], Encoding.NUMERICAL),
        reader.reading(support[1], Encoding.NUMERICAL),
    )
    if rows() is not points:  # a reading built since merged values
        points = rows()
        found = fit(points)
        if found is None or not builds(found, encoding, len(points)):
            return None
        if encoding is Encoding.CATEGORICAL and not one_value_per_band(found, points):
            return None
    return _build(built, node, ctx.values(node.index), points, readings, encoding, found)


def _whole(values: Sequence[Atom]) -> bool:
    return all((is_number(v) or isinstance(v, bool)) and float(v).is_integer() for v in values)


def builds(found: Banded, encoding: Encoding, points: int) -> bool:
    """Whether `found` builds an output of this encoding over `points` reachable inputs: a
    categorical one needs one component whose every band is constant (its terms write one-hot
    differences), and the units (at most 4 per band start, 1 per component and the constant's)
    must be within the pairs the certifier checks (a width modulo a width wraps N times)."""
    units = 1 + sum(1 + 4 * (len(c.bands) - 1) for c in found)
    if points * units > MAX_MLP_PAIRS:
        return False
    if encoding is Encoding.NUMERICAL:
        return True
    return len(found) == 1 and all(b.coef[0] == 0.0 and b.coef[1] == 0.0 for b in found[0].bands)


def one_value_per_band(found: Banded, rows: Rows) -> bool:
    """Whether each band of a categorical build holds one value, by type too: a band of 1 and
    1.0 would write 1.0's points to 1's column, which the maps reading it do not expect."""
    component = found[0]
    starts = np.array([b.start for b in component.bands[1:]])
    keys = [value_key(b.value) for b in component.bands]
    a, b = component.direction
    return all(
        value_key(v) == keys[int(np.searchsorted(starts, a * combo[0] + b * combo[1], "right"))]
        for combo, v in rows
    )


def _build(
    built: Built,
    node: IRNode,
    values: tuple[Atom, ...],
    rows: Rows,
    readings: tuple[Encoded, Encoded],
    encoding: Encoding,
    found: Banded,
) -> Encoded:
    out = materialise(built, node, encoding, values)
    writer = Output(out)
    xy = np.array([[float(c) for c in combo] for combo, _ in rows], dtype=np.float64)
    x_terms, y_terms = readings[0].number, readings[1].number

    def form(coef: Sequence[float], scale: float = 1.0, shift: float = 0.0) -> dict:
        """scale·(coef[0]·x + coef[1]·y) + shift·one, as W_in terms."""
        return linear(
            (x_terms, scale * coef[0]), (y_terms, scale * coef[1]), (((ONE, 1.0),), shift)
        )

    def row_of(band: Band) -> np.ndarray:  # a constant band's output row
        return writer.encode(band.value if out.is_categorical else band.coef[2])

    units = Builder(len(writer.dims))
    constant = np.zeros(len(writer.dims))
    for component in found:
        constant += _component(units, component, xy, form, row_of)
    if constant.any():
        units.unit({ONE: 1.0}, 0.0, constant)
    notes = {
        "kind": "piecewise",
        "directions": [list(c.direction) for c in found],
        "band_starts": [[b.start for b in c.bands] for c in found],
    }
    domain = MLPDomain(
        readings,
        tuple((float(x), float(y)) for x, y in xy),
        tuple(out_value for _, out_value in rows),
        out,
    )
    spec: MLPSpec = units.spec(node.text, node.name, writer.dims, notes, domain)
    if _exact(spec, readings, xy, built):
        built.exact.update(writer.dims)  # a square read for matching needs no whole-number decode
    built.add_mlp(spec)
    return out


def _component(
    units: Builder,
    found: Bands,
    xy: np.ndarray,
    form: Callable[..., dict],
    row_of: Callable[[Band], np.ndarray],
) -> np.ndarray:
    """Add one banded component's units (g_1, then h_j · [s >= t_j] per band start); returns
    the constant it leaves to the `one` unit."""
    s = xy @ np.array(found.direction, dtype=np.float64)  # [rows]
    direction = (float(found.direction[0]), float(found.direction[1]), 0.0)
    first = found.bands[0]
    if first.coef[:2] == (0.0, 0.0):
        constant = row_of(first)
    else:
        g = xy @ np.array(first.coef[:2]) + first.coef[2]
        low = float(g.min())
        units.unit(form(first.coef, shift=first.coef[2] - low + MARGIN), 0.0, np.ones(1))
        constant = np.array([low - MARGIN])
    for before, band in zip(found.bands, found.bands[1:]):
        # S = s - t + 1/2: whole s, so at least 1/2 from 0 on both sides of the band's start
        on = s >= band.start
        if band.coef[:2] == before.coef[:2]:  # the step of a constant change
            change = row_of(band) - row_of(before)
            _step(units, form(direction, K, K * (0.5 - band.start)), change)
            continue
        h_coef = [p - q for p, q in zip(band.coef, before.coef, strict=True)]
        h = xy @ np.array(h_coef[:2]) + h_coef[2]  # [rows]
        low = float(h[on].min())
        above = float((h[~on] - low).max())
        big = 2.0 ** int(np.ceil(np.log2(max(2.0 * (above + MARGIN), 2.0 * MARGIN))))
        product = form(h_coef, 1.0, h_coef[2] - low)
        for dim, w in form(direction, big, big * (0.5 - band.start)).items():
            product[dim] = product.get(dim, 0.0) + w
        units.unit(product, 0.0, np.ones(1))
        units.unit(form(direction, big, big * (0.5 - band.start)), 0.0, -np.ones(1))
        if low != 0.0:
            _step(units, form(direction, K, K * (0.5 - band.start)), np.array([low]))
    return constant


def _exact(spec: MLPSpec, readings: tuple[Encoded, Encoded], xy: np.ndarray, built: Built) -> bool:
    """Whether the MLP's output is exact in any float32 order: exact inputs, each one dimension,
    and every partial sum of every dot product a multiple of its terms' dyadic grid below 2^24
    of it (products of whole numbers and dyadic weights)."""
    dims = []
    for reading in readings:
        if len(reading.number) != 1 or reading.number[0][1] != 1.0:
            return False
        dims.append(reading.number[0][0])
    if not all(exact_reading(r, built.exact) for r in readings):
        return False
    if set(spec.W_in) - {*dims, ONE}:
        return False
    zero = np.zeros(spec.hidden)
    w_in = np.stack([spec.W_in.get(d, zero) for d in (*dims, ONE)])  # [3, hidden]
    w_in[2] += spec.b_in
    inputs = np.column_stack([xy, np.ones(len(xy))])  # [points, 3]
    grid_in = 2.0 ** int(dyadic_exponent(w_in).max())
    grid = grid_in * 2.0 ** int(dyadic_exponent(spec.W_out).max())
    abs_out = np.abs(spec.W_out)
    # in chunks of points: a remainder's wraps give a thousand units over 65K points at N = 256
    chunk = max(1, EXACT_CHUNK // max(spec.hidden, 1))
    for start in range(0, len(inputs), chunk):
        part = inputs[start : start + chunk]
        if (np.abs(part) @ np.abs(w_in)).max() * grid_in > FLOAT32_WHOLE:
            return False
        active = np.maximum(part @ w_in, 0.0)  # [chunk, hidden]: exact, by the check above
        if (active @ abs_out).max() * grid > FLOAT32_WHOLE:
            return False
    return True


def _step(units: Builder, ks: dict, change: np.ndarray) -> None:
    """change · [S > 0] from K·S: relu(K·S + 1) - relu(K·S), 1 above and 0 below (|K·S| >= K/2)."""
    plus_one = dict(ks)
    plus_one[ONE] = plus_one.get(ONE, 0.0) + 1.0
    units.unit(plus_one, 0.0, change)
    units.unit(ks, 0.0, -change)

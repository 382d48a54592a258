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
then write one-hot differences instead of numbers. A numerical map may be a sum of two banded
components (`fit`): `(indices + 2) % length` wraps twice at length 1. A rotation by more,
`(indices + 5) % length`, is a sum of one step per wrap, each its own direction (`_wraps`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from compiler.blocks import ONE, Atom, Encoded, Encoding, MLPDomain, MLPSpec, is_number
from compiler.bounds import dyadic_exponent
from compiler.graph import IRNode, Op
from compiler.mlp import Builder, Output, exact_reading, linear
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.positional import FLOAT32_WHOLE
from compiler.readings import materialise

# From this many positions on, a map of the position and a width (or the length) that is affine on a
# few bands decodes the width for it, a layer more (`banded_map`).
BANDS_MIN_POSITIONS = 64
# Directions s = a·x + b·y tried, in this order (the fewest bands wins; ties: the first).
DIRECTIONS = ((1, 0), (0, 1), (1, -1), (1, 1), (2, -1), (1, -2), (2, 1), (1, 2))
MAX_BANDS = 4  # more bands: a step MLP over one number does as well
# `fit`'s second try: the first few values of either input left to bands of their own.
EXCEPTION_DIRECTIONS = ((0, 1), (1, 0))
MAX_EXCEPTIONS = 4
# `fit`'s last try, a remainder p % q (`_wraps`): one component per wrap, at most this many.
MAX_WRAPS = 16
# Inputs beyond this: no such map is planned (pre-activations grow as their squares).
MAX_WHOLE = 2**20
GRID = 2**10  # coefficients are multiples of 1/GRID: exact products with whole numbers
MARGIN = 4.0  # every unit's pre-activation is at least this far from 0 at exact inputs
K = 8.0  # a step's slope in S: K/2 = MARGIN
Rows = Sequence[tuple[tuple[Atom, ...], Atom]]


@dataclass(frozen=True)
class Band:
    start: int  # the least s of the band
    coef: tuple[float, float, float]  # the map on the band: coef[0]·x + coef[1]·y + coef[2]
    value: Atom  # the map's value at the band's first row (its value, where it is constant)


@dataclass(frozen=True)
class Bands:
    direction: tuple[int, int]
    bands: tuple[Band, ...]


Banded = tuple[Bands, ...]  # the map is the sum of these components


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
    points, by `maps.MapPlanner`). A width is decoded to its whole number for it (an MLP, where it
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
    if found is None or not builds(found, encoding):
        return None  # before any reading is built: a width's decoding MLP would be in vain
    readings = (
        reader.reading(support[0], Encoding.NUMERICAL),
        reader.reading(support[1], Encoding.NUMERICAL),
    )
    if rows() is not points:  # a reading built since merged values
        points = rows()
        found = fit(points)
        if found is None or not builds(found, encoding):
            return None
    return _build(built, node, ctx.values(node.index), points, readings, encoding, found)


def _whole(values: Sequence[Atom]) -> bool:
    return all((is_number(v) or isinstance(v, bool)) and float(v).is_integer() for v in values)


def builds(found: Banded, encoding: Encoding) -> bool:
    """Whether `found` builds an output of this encoding: a categorical one needs one component
    whose every band is constant (its terms write one-hot differences)."""
    if encoding is Encoding.NUMERICAL:
        return True
    return len(found) == 1 and all(b.coef[0] == 0.0 and b.coef[1] == 0.0 for b in found[0].bands)


def fit(rows: Rows) -> Banded | None:
    """The map as a sum of banded components: bands of one direction (`bands_of`), else bands of
    one direction where the least few values of the position or the length are left out, plus
    bands of that coordinate for what they leave (None: neither). `(indices + 2) % length` wraps
    twice at length 1: no few bands of one direction hold it, but bands of i - length from length
    2 on do, and what they give at length 1 is off by a constant there."""
    arrays = _arrays(rows)
    if arrays is None:
        return None
    xy, f = arrays
    outputs = [out for _, out in rows]
    single = _best_bands(xy, f, outputs)
    if single is not None:
        return (single,)
    for coordinate in EXCEPTION_DIRECTIONS:
        s = xy @ np.array(coordinate, dtype=np.float64)  # [rows]
        for start in np.unique(s)[1 : 1 + MAX_EXCEPTIONS].tolist():
            regular = s >= start
            kept = [out for out, keep in zip(outputs, regular.tolist()) if keep]
            main = _best_bands(xy[regular], f[regular], kept)
            if main is None:
                continue
            rest = f - _evaluate(main, xy)  # 0 where the main bands hold (exact: dyadic)
            if np.any(rest[regular] != 0.0):
                continue
            extra = _bands_along(coordinate, xy, rest, list(rest), MAX_BANDS)
            if extra is not None:
                return (main, extra)
    return _wraps(xy, f)


# The remainders `_wraps` tries, p % q: p = a·x + b·y + c with a, b in {-1, 0, 1} (c found from
# the rows), q = one input + k.
DIVIDENDS = ((1, 0), (0, 1), (-1, 1), (1, -1), (1, 1), (-1, 0), (0, -1))
MODULUS_SHIFTS = (0, 1, -1, 2)
SAMPLE = 4096  # rows a candidate is first checked on (a failed one costs no more)


def _wraps(xy: np.ndarray, f: np.ndarray) -> Banded | None:
    """A remainder p % q (`(indices + 5) % length`, `(length - indices - 16) % (length + 1)`) with p
    and q affine (q >= 1 at every row) as p plus one step per wrap: p - q·floor(p / q), where

        floor(p / q) = sum_{j >= 1} [p - j·q >= 0] - sum_{j >= 1} [-p - (j - 1)·q >= 1]

    (the j-th wrap up, a step of height -q along p - j·q's direction, and down, +q along
    -p - (j - 1)·q's), as many of each as the rows wrap: at most MAX_WRAPS components of two
    bands, however many values x and y take."""
    if not len(f):
        return None
    sample = slice(0, SAMPLE)
    for axis, k in itertools.product((1, 0), MODULUS_SHIFTS):
        q_coef = np.zeros(3)
        q_coef[axis], q_coef[2] = 1.0, float(k)
        q = xy @ q_coef[:2] + q_coef[2]
        if q.min() < 1:
            continue
        row = int(np.argmax(q))  # the largest modulus: c mod q there
        for a, b in DIVIDENDS:
            base = xy[:, 0] * a + xy[:, 1] * b  # [rows]
            c0 = int(f[row] - base[row])
            for c in sorted({c0, c0 - int(q[row]), c0 + int(q[row])}, key=abs):
                if not np.array_equal(np.mod(base[sample] + c, q[sample]), f[sample]):
                    continue
                if not np.array_equal(np.mod(base + c, q), f):
                    continue
                found = _wrap_components(xy, np.array([a, b, c], dtype=np.float64), q_coef)
                if found is not None and np.array_equal(sum(_evaluate(x, xy) for x in found), f):
                    return found
    return None


def _wrap_components(xy: np.ndarray, p_coef: np.ndarray, q_coef: np.ndarray) -> Banded | None:
    p = xy @ p_coef[:2] + p_coef[2]
    q = xy @ q_coef[:2] + q_coef[2]
    wraps = np.floor_divide(p, q)  # [rows]
    ups, downs = int(max(wraps.max(), 0)), int(max(-wraps.min(), 0))
    if ups + downs == 0 or ups + downs > MAX_WRAPS:
        return None  # no wrap (an affine map: found before), or too many steps
    # [p - j·q >= 0] with height -q; [-p - (j - 1)·q >= 1] with height +q
    steps = [(p_coef - j * q_coef, -q_coef) for j in range(1, ups + 1)]
    steps += [(-p_coef - (j - 1) * q_coef - (0, 0, 1), q_coef) for j in range(1, downs + 1)]
    base = p_coef.copy()
    components = []
    for test, height in steps:  # [test >= 0]: along test[:2], from s = -test[2] on
        direction = _direction(test)
        start = int(-test[2])
        s = xy @ np.array(direction, dtype=np.float64)
        if s.min() >= start:
            base = base + height  # on at every row: part of the affine map
            continue
        if s.max() < start:
            continue  # off at every row
        bands = (Band(int(s.min()), (0.0, 0.0, 0.0), 0.0), Band(start, _coef(height), 0.0))
        components.append(Bands(direction, bands))
    return (Bands(_direction(base), (Band(0, _coef(base), 0.0),)), *components)


def _direction(coef: np.ndarray) -> tuple[int, int]:
    return int(coef[0]), int(coef[1])


def _coef(c: np.ndarray) -> tuple[float, float, float]:
    return float(c[0]), float(c[1]), float(c[2])


def _evaluate(found: Bands, xy: np.ndarray) -> np.ndarray:
    """The banded map at every row [rows] (each row's band by its s)."""
    s = xy @ np.array(found.direction, dtype=np.float64)
    starts = np.array([b.start for b in found.bands], dtype=np.float64)
    band = np.clip(np.searchsorted(starts, s, side="right") - 1, 0, len(starts) - 1)
    coef = np.array([b.coef for b in found.bands])[band]  # [rows, 3]
    return coef[:, 0] * xy[:, 0] + coef[:, 1] * xy[:, 1] + coef[:, 2]


def _arrays(rows: Rows) -> tuple[np.ndarray, np.ndarray] | None:
    """(xy [rows, 2], f [rows]) as float64, or None where the inputs are not whole numbers (at
    most MAX_WHOLE) or a value is not a number."""
    if not rows:
        return None
    if not all(is_number(v) or isinstance(v, bool) for combo, out in rows for v in (*combo, out)):
        return None
    xy = np.array([[float(c) for c in combo] for combo, _ in rows], dtype=np.float64)
    if xy.shape[1] != 2 or not np.all(xy == np.round(xy)) or np.abs(xy).max() > MAX_WHOLE:
        return None
    return xy, np.array([float(out) for _, out in rows], dtype=np.float64)


def bands_of(rows: Rows) -> Bands | None:
    """The fewest bands of one direction on which the map is affine (None: more than MAX_BANDS,
    or inputs that are not whole numbers, or outputs that are not numbers)."""
    arrays = _arrays(rows)
    if arrays is None:
        return None
    return _best_bands(*arrays, [out for _, out in rows])


def _best_bands(xy: np.ndarray, f: np.ndarray, outputs: Sequence[Atom]) -> Bands | None:
    best: Bands | None = None
    for direction in DIRECTIONS:
        most = MAX_BANDS if best is None else len(best.bands) - 1
        found = _bands_along(direction, xy, f, outputs, most)
        if found is not None:
            best = found
            if len(found.bands) == 1:
                break
    return best


def _bands_along(
    direction: tuple[int, int],
    xy: np.ndarray,
    f: np.ndarray,
    outputs: Sequence[Atom],
    most: int,
) -> Bands | None:
    """The map's bands along s = a·x + b·y, greedily longest first (optimal: a band's subset is
    affine too), or None beyond `most` bands."""
    if most < 1:
        return None
    s = xy @ np.array(direction, dtype=np.float64)  # [rows]: whole numbers
    order = np.argsort(s, kind="stable")
    s, xy, f = s[order], xy[order], f[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])  # first row of each value of s
    ends = np.r_[starts[1:], len(s)]
    bands: list[Band] = []
    first = 0
    while first < len(starts):
        if len(bands) == most:
            return None

        def fit(last: int, first: int = first) -> tuple[float, float, float] | None:
            lo, hi = starts[first], ends[last]
            return _exact_fit(xy[lo:hi], f[lo:hi])

        coef = fit(first)
        if coef is None:
            return None  # not affine even on one line of s
        good, bad, step = first, None, 1
        while bad is None and good < len(starts) - 1:  # gallop, then bisect
            probe = min(good + step, len(starts) - 1)
            got = fit(probe)
            if got is None:
                bad = probe
            else:
                good, coef, step = probe, got, step * 2
        while bad is not None and bad - good > 1:
            mid = (good + bad) // 2
            got = fit(mid)
            if got is None:
                bad = mid
            else:
                good, coef = mid, got
        bands.append(Band(int(s[starts[first]]), coef, outputs[int(order[starts[first]])]))
        first = good + 1
    return Bands(direction, tuple(bands))


def _exact_fit(xy: np.ndarray, f: np.ndarray) -> tuple[float, float, float] | None:
    """Dyadic (a, b, c) with a·x + b·y + c == f at every row, exactly; the fewest non-zero
    coefficients first (rows on one line leave the fit free: the plainest is kept)."""
    ones = np.ones(len(f))
    for used in ((), (0,), (1,), (0, 1)):
        design = np.column_stack([xy[:, k] for k in used] + [ones])  # [rows, len(used) + 1]
        sol, *_ = np.linalg.lstsq(design, f, rcond=None)
        sol = np.round(sol * GRID) / GRID
        if np.abs(sol).max() > MAX_WHOLE or not np.array_equal(design @ sol, f):
            continue
        coef = [0.0, 0.0, float(sol[-1])]
        for k, value in zip(used, sol[:-1], strict=True):
            coef[k] = float(value)
        return coef[0], coef[1], coef[2]
    return None


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
    if (np.abs(inputs) @ np.abs(w_in)).max() * grid_in > FLOAT32_WHOLE:
        return False
    active = np.maximum(inputs @ w_in, 0.0)  # [points, hidden]: exact, by the check above
    grid = grid_in * 2.0 ** int(dyadic_exponent(spec.W_out).max())
    return bool((active @ np.abs(spec.W_out)).max() * grid <= FLOAT32_WHOLE)


def _step(units: Builder, ks: dict, change: np.ndarray) -> None:
    """change · [S > 0] from K·S: relu(K·S + 1) - relu(K·S), 1 above and 0 below (|K·S| >= K/2)."""
    plus_one = dict(ks)
    plus_one[ONE] = plus_one.get(ONE, 0.0) + 1.0
    units.unit(plus_one, 0.0, change)
    units.unit(ks, 0.0, -change)

"""Gated units per bit of a whole-number slope: `n * x` over a decoded mean x with the context n
(`BuildOptions.decoded_factors`, compiler.decoded_factors).

compiler.gates writes g_u(x) = a_u x + b_u with a unit per context value u, whose output sums
them: the certifier bounds a float32 sum by its number of terms times its magnitude, so 25 units
summing to 552 (`length * mean` at N = 24) err by 0.0013, more than the output snap's margin
(0.00104), though one unit is on. Where every slope a_u and every constant left over is a whole
number, this writes them in binary: for each sign and bit j, one unit

    relu(x + t - B (1 - [c in S_j]))    with output weight +-2^j,

S_j the context values whose |a_u| has bit j, t a whole number with x + t >= 1 at every x and
B = (the largest x) + t + 1: at c in S_j its pre-activation is x + t >= 1, elsewhere at most -1,
so every ReLU decision has a margin of 1, and the units on sum to a_u (x + t). The constant
k_u = b_u - a_u t left is a whole number, written the same way by units relu(2 [c in S] - 1)
of weight +-2^j beside the most common one (on `one`). A few units for 24 lengths, and
`bit_gated_parts` writes them as three MLPs of a dimension each (the two largest bits, the
other bits, the constants), the map the free view of their sum: each sum has a few terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from compiler.blocks import ONE, Atom, Dim, Encoded, MLPDomain, MLPSpec, Terms
from compiler.gates import Fits, Rows, context_fits
from compiler.mlp import Builder, Output, check_size, linear

# the largest |slope| or |constant| / MARGIN written in bits (float32 holds them exactly)
MAX_WHOLE = 2**20
# the gated units' ReLU margin, and the grid of the constants (1/16 instead erred more: 0.00108
# against 0.00098 at mixed seed 2197809, N = 24)
MARGIN = 1.0


@dataclass(frozen=True)
class _Unit:
    terms: dict[Dim, float]
    bias: float
    weight: float
    members: frozenset[int]  # the context values (by position) where it is on
    gated: bool  # on: weight * (x + t); else weight


def bit_gated_parts(
    x: Encoded,
    at: Callable[[Atom], float],
    xi: int,
    context: Encoded,
    rows: Rows,
    *,
    op: str,
    name: str,
) -> tuple[list[tuple[MLPSpec, Encoded]], Terms, float] | None:
    """The bit-gated units (module doc) of a map of the number x (at support position `xi`, read
    on `x` at `at(value)`) and one categorical `context`, `rows` its reachable points, as up to
    three MLPs, each writing a dimension of its own (the gated
    units of the two largest bits, the other gated units, the constants): the certifier bounds
    each MLP's sum by its own terms, and the map is the free view of their sum, which the
    reader's sum bounds by three terms. Their specs and readings, the sum's terms and its
    misfit; None where compiler.gates' units do not apply, or a slope or a constant is no whole
    number."""
    found = _units(x, at, xi, context, rows)
    if found is None:
        return None
    fits, units, t = found
    gated = sorted((u for u in units if u.gated), key=lambda u: -abs(u.weight))
    groups = [gated[:2], gated[2:], [u for u in units if not u.gated]]
    points = [(ci, *c, x_) for ci, (c, pts, _) in enumerate(fits) for x_, _ in pts]
    parts: list[tuple[MLPSpec, Encoded]] = []
    for k, group in enumerate(g for g in groups if g):
        values = [sum(_value(u, ci, x_, t) for u in group) for ci, *_, x_ in points]
        part = Encoded.materialised_numerical(f"{name}.bits{k}", tuple(sorted(set(values))))
        spec = _spec(op, part.name, group, x, context, [p[1:] for p in points], tuple(values), part)
        parts.append((spec, part))
    largest = max((abs(float(v)) for _, pts, _ in fits for _, v in pts), default=0.0)
    # (each part's value is float64's sum of its units', off the program's by a few roundings)
    misfit = 8 * largest * 2.0**-52
    return parts, tuple((Dim(part.name), 1.0) for _, part in parts), misfit


def _value(unit: _Unit, ci: int, x: float, t: float) -> float:
    if ci not in unit.members:
        return 0.0
    return unit.weight * (x + t) if unit.gated else unit.weight


def _units(
    x: Encoded, at: Callable[[Atom], float], xi: int, context: Encoded, rows: Rows
) -> tuple[Fits, list[_Unit], float] | None:
    """The fits per context value, the units (module doc) and the shift t; None where a slope or
    a constant is no whole number, or compiler.gates' units do not apply."""
    fits = context_fits(rows, xi, at)
    if fits is None:
        return None
    every_x = [x_ for _, pts, _ in fits for x_, _ in pts]
    # x + t >= MARGIN at every x, t on the constants' grid; off, x + t - big <= -MARGIN
    t = max(0.0, math.ceil((MARGIN - min(every_x)) / MARGIN) * MARGIN)
    big = max(every_x) + t + MARGIN
    # per context value (by position: 1 and True are two values), its one-hot, a_u and k_u
    slopes = [(context.one_hot[context.index_of(c[0])], a, b - a * t) for c, _, (a, b) in fits]
    if not all(_whole(a) and _whole(k / MARGIN) for _, a, k in slopes):
        return None
    units: list[_Unit] = []
    for weight, members in _bits([a for _, a, _ in slopes]):
        gate = [(slopes[i][0], big) for i in members]
        terms = linear((x.number, 1.0), *gate, (((ONE, 1.0),), t - big))
        units.append(_Unit(terms, 0.0, weight, frozenset(members), True))
    # a constant shared by several context values on `one` (else none: a unit fewer to sum)
    ((common, times),) = Counter(k for _, _, k in slopes).most_common(1)
    common = common if times > 1 else 0.0
    if common != 0.0:
        units.append(_Unit({ONE: 1.0}, 0.0, common, frozenset(range(len(slopes))), False))
    for weight, members in _bits([(k - common) / MARGIN for _, _, k in slopes]):
        on = linear(*((slopes[i][0], 2.0) for i in members))
        units.append(_Unit(on, -1.0, weight * MARGIN, frozenset(members), False))
    if not units:
        return None
    return fits, units, t


def _spec(
    op: str,
    name: str,
    units: list[_Unit],
    x: Encoded,
    context: Encoded,
    points: list[tuple[Atom, ...]],
    outputs: tuple[Atom, ...],
    out: Encoded,
) -> MLPSpec:
    builder = Builder(1)
    for u in units:
        builder.unit(u.terms, u.bias, np.array([u.weight]))
    width = len(x.number) + len(context.dims()) + 1
    check_size(op, "bit-gated", len(points), len(units), width)
    domain = MLPDomain((context, x), tuple(points), outputs, out)
    notes = {"kind": "bit-gated", "units": len(units)}
    return builder.spec(op, name, Output(out).dims, notes, domain)


def _whole(v: float) -> bool:
    return float(v).is_integer() and abs(v) <= MAX_WHOLE


def _bits(values: list[float]) -> Iterator[tuple[float, list[int]]]:
    """Per sign and bit j, (+-2^j, the positions of the whole numbers with that sign and bit)."""
    for sign in (1, -1):
        mags = [(i, int(abs(v))) for i, v in enumerate(values) if v * sign > 0]
        for j in range(max((m for _, m in mags), default=0).bit_length()):
            members = [i for i, m in mags if m >> j & 1]
            if members:
                yield float(sign * 2**j), members

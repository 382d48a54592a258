"""Maps that are affine in one number for each value of a categorical context: gated units.

`f if indices > 0 else 0`, `f if tokens == "a" else 0` or `f + (1 if tokens == "a" else 0)` over
a fraction f are stepped over f's values with the context setting each step's threshold: a unit
pair per change of the output, 8.1M parameters at N = 64 (f takes ~N^2/3 values). For each context
value u the map is g_u(x) = a_u x + b_u on the numbers x it meets there, and

- where a_u = 0, the constant b_u is one unit relu(2 [c == u] - 1), 1 at u and 0 elsewhere
  (the constant most context values share is one unit on `one`, the others differ from it);
- else one unit relu(g_u(x) - lo_u + 1 - B_u (1 - [c == u])), with lo_u the least g_u there and
  B_u = (the largest g_u(x) at any reachable x) - lo_u + 2: at u its pre-activation is
  g_u(x) - lo_u + 1 >= 1, elsewhere at most -1, so every ReLU decision has a margin of 1; the
  lo_u - 1 it leaves out is part of u's constant.

The output is the sum, g_c(x) at context c: at most two units per context value, whatever the
number of x's values. It is a number with the reading's error times |a_u|, where steps write exact
values: the certifier judges it, and the driver builds steps instead (`BuildOptions.gates` off)
where it does not prove the gated model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from compiler.affine_fits import affine_points
from compiler.blocks import ONE, Atom, Encoded, MLPDomain, MLPSpec, Terms, is_number, value_key
from compiler.mlp import Builder, Output, check_size, linear
from compiler.row_memo import derived

# Gated units replace a step MLP where some context value's output changes at least this often
# (fewer steps are as small, and their outputs exact).
MIN_STEPS = 8

Rows = list[tuple[tuple[Atom, ...], Atom]]


# per context value: its values, its (x, output) points and the affine fit (a, b) of them
Fits = list[tuple[tuple[Atom, ...], list[tuple[float, Atom]], tuple[float, float]]]


def context_fits(rows: Rows, xi: int, at: Callable[[Atom], float]) -> Fits | None:
    """The affine fit of the map in its number (at support position `xi`, read at `at(value)`)
    for each value of the other positions, or None where gated units do not apply: an output is
    not a number, some context value's map is not affine, or every one changes fewer than
    MIN_STEPS times (steps are then as small, and exact). Found once per value analysis for
    its own rows (compiler.row_memo; `at` is a module's function, the same in every build)."""
    return derived(rows, ("context fits", xi, at), lambda: _context_fits(rows, xi, at))


def _context_fits(rows: Rows, xi: int, at: Callable[[Atom], float]) -> Fits | None:
    if not rows or not all(is_number(v) and not isinstance(v, bool) for _, v in rows):
        return None
    if not all(is_number(combo[xi]) or isinstance(combo[xi], bool) for combo, _ in rows):
        return None  # a tracr mean's default None among the number's values: no x to fit
    per_context: dict[tuple, tuple[tuple[Atom, ...], list[tuple[float, Atom]]]] = {}
    for combo, v in rows:
        c = combo[:xi] + combo[xi + 1 :]
        key = tuple(map(value_key, c))
        per_context.setdefault(key, (c, []))[1].append((float(at(combo[xi])), v))
    if max(len({value_key(v) for _, v in pts}) - 1 for _, pts in per_context.values()) < MIN_STEPS:
        return None
    fits: Fits = []
    for c, pts in per_context.values():
        fit = affine_points(pts)
        if fit is None:
            return None
        fits.append((c, pts, fit))
    return fits


def gated_affine(
    x: Encoded,
    at: Callable[[Atom], float],
    xi: int,
    contexts: Sequence[Encoded],
    rows: Rows,
    out: Encoded,
    *,
    op: str,
    name: str,
) -> MLPSpec | None:
    """The gated MLP of a map of a number and categorical contexts (module doc), `rows` its
    reachable points: the number at support position `xi`, read on `x` at `at(value)`, and the
    contexts' values, in order, at the other positions. With several contexts a context value is
    a tuple of theirs, and a unit's gate reads the sum of their one-hot terms (on only where all
    hold). None where some context value's map is not affine in the number, every one changes
    fewer than MIN_STEPS times, or an output is not a number."""
    fits = context_fits(rows, xi, at)
    if fits is None:
        return None
    every_x = np.array(sorted({x_ for _, pts, _ in fits for x_, _ in pts}), dtype=np.float64)
    m = len(contexts)
    units = Builder(1)
    constants: list[tuple[list[tuple[Terms, float]], float]] = []  # per context value
    for c, pts, (a, b) in fits:
        hots = [(e.one_hot[e.index_of(u)], 1.0) for e, u in zip(contexts, c, strict=True)]
        constant = b
        if a != 0.0:
            low = min(a * x_ + b for x_, _ in pts)
            high = float((a * every_x + b).max())
            big = high - low + 2.0
            # g(x) - low + 1 - big * m + big * (sum of the contexts' [c_j == u_j])
            gate = [(terms, big) for terms, _ in hots]
            shift = b - low + 1.0 - big * m
            units.unit(linear((x.number, a), *gate, (((ONE, 1.0),), shift)), 0.0, np.ones(1))
            constant = low - 1.0
        constants.append((hots, constant))
    # the most common constant on a `one` unit, the others' differences from it per context
    # value, each on a unit relu(2 * (sum of [c_j == u_j]) - (2m - 1)): 1 where all hold, else off
    common = Counter(k for _, k in constants).most_common(1)[0][0]
    if common != 0.0:
        units.unit({ONE: 1.0}, 0.0, np.array([common]))
    for hots, constant in constants:
        if constant != common:
            every = linear(*((terms, 2.0) for terms, _ in hots))
            units.unit(every, 1.0 - 2.0 * m, np.array([constant - common]))
    if not units.biases:
        return None  # every output 0: a view would do (not reached: 0 changes no times)
    points = [(*c, x_) for c, pts, _ in fits for x_, _ in pts]
    width = len(x.number) + sum(len(e.dims()) for e in contexts) + 1
    check_size(op, "gated", len(points), len(units.biases), width)
    outputs = tuple(v for _, pts, _ in fits for _, v in pts)
    domain = MLPDomain((*contexts, x), tuple(points), outputs, out)
    notes = {"kind": "gated", "contexts": len(fits)}
    return units.spec(op, name, Output(out).dims, notes, domain)

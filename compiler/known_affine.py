"""Maps whose function says it is affine: their form without evaluating them on every row.

A map's affine fit (`map_rows`, `number_views`) evaluates it on every reachable combination of its
inputs' values and fits a form to them: the difference of two prefix means, the paper's
`pair_balance`, has ~N^3/3 of them (5.6M at N = 256), past the planner's guard, so a free
numerical view was refused as too many combinations. Some functions state their form:

- RASP's `+` and `-` of two s-ops, unary `-` and `+`, `+ - *` with a number constant, and `/`
  by a power of two (`(a + b) / 2`);
- tracr's `LinearSequenceMap(fst, snd, a, b)` (its lowered function carries `affine`).

(The compiler's own weighted sums declare theirs too: `weighted_counts.declared_affine`.)

On number inputs (no string concatenates, no None) each is its form exactly, up to the one float64
rounding of Python's own operation (and a tracr output's rounding to 12 digits), as the fit
allows. A form is given only where the fit would find the same one: coefficients on the fit's
2^-20 grid (`x + 0.1` is not affine to the fit either), finite inputs, as many coefficients as
the map has inputs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from compiler.blocks import Atom
from compiler.rounded import unrounded
from rasp import arithmetic
from rasp import operators as ops
from rasp.tracr.functions import TracrFn

# the fit's grid (compiler.affine_fits.exact_affine_fit rounds its coefficients to it)
_GRID = 2**20

# (fn, inputs' template positions) -> coefficients of the s-op inputs and of the constant
_TWO_SOPS = {arithmetic.plus: (1.0, 1.0), operator.sub: (1.0, -1.0)}
_UNARY = {operator.neg: -1.0, operator.pos: 1.0}


def known_affine(fn: object, input_values: Sequence[Sequence[Atom]]) -> list[float] | None:
    """[a_1, ..., a_k, b] of a map whose function states its affine form (module doc), where
    every input value is a finite number; None for any other map (the caller fits its rows)."""
    if not all(finite_number(v) for vals in input_values for v in vals):
        return None
    form = _form(unrounded(fn), len(input_values))
    if form is None or len(form) != len(input_values) + 1 or not all(map(_on_grid, form)):
        return None
    return form


def states_form(fn: object, arity: int) -> bool:
    """Whether map function `fn` of `arity` inputs states an affine form (on number inputs:
    `known_affine` gives it where every value is a finite number)."""
    form = _form(unrounded(fn), arity)
    return form is not None and len(form) == arity + 1 and all(map(_on_grid, form))


def _form(fn: object, arity: int) -> list[float] | None:
    if isinstance(fn, TracrFn):
        if fn.affine is None or len(fn.affine) != arity + 1:
            return None
        return [float(c) for c in fn.affine]
    if not isinstance(fn, ops.Lifted):
        return None
    positions, template = fn.positions, fn.template
    if len(template) == 2 and len(positions) == 2 and fn.fn in _TWO_SOPS:
        a, b = _TWO_SOPS[fn.fn]
        return [a, b, 0.0]
    if len(template) == 1 and positions == (0,) and fn.fn in _UNARY:
        return [_UNARY[fn.fn], 0.0]
    if len(template) != 2 or len(positions) != 1:
        return None
    (at,) = positions
    constant = template[1 - at]
    if not finite_number(constant):
        return None
    c = float(constant)
    if fn.fn is arithmetic.plus:
        return [1.0, c]
    if fn.fn is operator.sub:
        return [1.0, -c] if at == 0 else [-1.0, c]  # x - c, c - x
    if fn.fn is arithmetic.times:
        return [c, 0.0]
    if fn.fn is operator.truediv and at == 0 and c != 0 and math.frexp(c)[0] in (0.5, -0.5):
        return [1.0 / c, 0.0]  # x / 2^k: exactly x * 2^-k (a power of two divides exactly)
    return None


def finite_number(value: object) -> bool:
    """An int, float or bool that float64 holds exactly and is finite (no None, string, NaN)."""
    if type(value) is float:
        return math.isfinite(value)
    return type(value) in (int, bool) and abs(value) < 2**53  # type: ignore[arg-type]


def _on_grid(c: float) -> bool:
    return math.isfinite(c) and float(c * _GRID).is_integer()


def known_misfit(
    fn: object,
    form: Sequence[float],
    input_values: Sequence[Sequence[Atom]],
    output_values: Sequence[Atom],
) -> float:
    """A bound on |fn(x) - form(x)| (exact arithmetic) where `form` is `known_affine(fn, ...)`:
    Python's one float64 operation rounds its result (2^-53 relative), and a tracr output map
    rounds it to 12 significant digits (`compiler.rounded`: 5e-12 relative). 0 where neither can
    change it: every input and coefficient on one dyadic grid whose sums float64 holds exactly,
    and (rounded) every output a whole number of at most 12 digits."""
    outputs = [abs(float(v)) for v in output_values if finite_number(v)]
    if len(outputs) != len(output_values):
        return math.inf  # (a None or a non-number: no bound; not a form known_affine gives)
    top = max(outputs, default=0.0)
    rounded = unrounded(fn) is not fn
    # every term a·x lies on the grid 2^-(coefficients' grid + inputs' grid), and so does b
    input_grid = 0
    size = abs(form[-1])
    for a, vals in zip(form, input_values, strict=False):  # (the last coefficient: b)
        xs = [float(v) for v in vals]
        input_grid = max(input_grid, max((_grid(x) for x in xs), default=0))
        size += abs(a) * max((abs(x) for x in xs), default=0.0)
    grid = max((_grid(c) for c in form), default=0) + input_grid
    exact = grid <= 60 and math.ldexp(max(size, top), grid) < 2.0**52
    if exact and (not rounded or all(x.is_integer() and x < 1e12 for x in outputs)):
        return 0.0
    relative = 2.0**-52 + (5e-12 * (1 + 2.0**-40) if rounded else 0.0)
    return relative * max(top, size) + 2.0**-1074


def _grid(x: float) -> int:
    """The least k >= 0 with x * 2^k whole (99 beyond 60, or not finite)."""
    if not math.isfinite(x):
        return 99
    m, e = math.frexp(abs(x))
    if m == 0.0:
        return 0
    k = 0
    while m != math.floor(m) and k <= 113:
        m *= 2.0
        k += 1
    return max(0, k - e) if k - e <= 60 else 99

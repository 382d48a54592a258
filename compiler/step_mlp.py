"""Step MLPs: a piecewise-constant function of one numerical reading, exact at every reachable x.

A step pair relu(D) - relu(D - 1) is exactly 0 where D <= 0 at every evaluation order, and 1 up to
the two units' independent rounding of D where D >= 1 (the two dot products may be summed in
different orders, so their difference is not exactly 1); reachable inputs keep D far from (0, 1).
With a categorical context, each pair serves every context value, its threshold linear in the
context one-hot. A step whose dot product has two non-zero products is computed in the float32
integer band (one addition: the same integer in every order). docs/compiler-weights.md has the
proofs; `numeric.check_steps_resolvable` refuses a step float32 cannot resolve."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from compiler import build_memo
from compiler.blocks import (
    ONE,
    Atom,
    Dim,
    Encoded,
    MLPDomain,
    MLPSpec,
    Terms,
    value_key,
)
from compiler.mlp import EMBEDDED, Builder, Output, check_size, dyadic, linear
from compiler.numeric import (
    SAFETY_FACTOR,
    STEP_SHARPNESS,
    ErrorBound,
    check_steps_resolvable,
    preactivation_rounding,
    rounding_error,
    step_margin,
)
from rasp.errors import CompileError, Diagnostic

__all__ = ["numeric_mlp"]

# A step MLP of this many units or more is kept for the program's other builds (compiler.build_memo):
# its build costs many times the key spelling its inputs
SHARED_MIN_UNITS = 32


@dataclass(frozen=True)
class _Step:
    """The output changes from `before` to `after` where x crosses t, the midpoint of two reachable
    x values `gap` apart."""

    t: float
    gap: float
    change: tuple  # hashable: (before, after) value keys, or the numerical difference
    before: Atom
    after: Atom


@dataclass(frozen=True)
class _Context:
    """The points reachable when the context reading (`terms`, 1 there and 0 elsewhere) holds."""

    terms: Terms
    xs: np.ndarray  # sorted distinct reachable x
    first: Atom  # output at the smallest x
    steps: tuple[_Step, ...]


def _context_of(
    terms: Terms, points: Sequence[tuple[float, Atom]], writer: Output, what: str
) -> _Context:
    by_x: dict[float, Atom] = {}
    for x, v in points:
        x = float(x)
        if not math.isfinite(x):
            raise CompileError(
                [Diagnostic(f"{what}: the value {x!r} cannot be compared in float32")]
            )
        if x in by_x and value_key(by_x[x]) != value_key(v):
            raise ValueError(f"{what}: x = {x!r} maps to both {by_x[x]!r} and {v!r}")
        by_x[x] = v
    if not by_x:
        raise ValueError(f"{what}: no reachable points")
    xs = sorted(by_x)
    steps: list[_Step] = []
    change = writer.change
    for a, b in itertools.pairwise(xs):
        before, after = by_x[a], by_x[b]
        if value_key(before) != value_key(after):
            steps.append(_Step((a + b) / 2, b - a, change(before, after), before, after))
    return _Context(terms, np.array(xs), by_x[xs[0]], tuple(steps))


def numeric_mlp(
    x: Encoded,
    points: Sequence[tuple[float, Atom]],
    out: Encoded,
    *,
    op: str,
    name: str,
    context: Encoded | None = None,
    context_points: Sequence[tuple[Atom, Sequence[tuple[float, Atom]]]] | None = None,
    x_error: float | ErrorBound | None = None,
    context_noise: float = 0.0,
    exact: set[Dim] | None = None,
    sharpness: float | None = None,
) -> MLPSpec:
    """A piecewise-constant function of a numerical reading: one step pair per change of the output.

    With a categorical `context`, the output is a function of (context, x): `context_points` pairs
    each context value c (a list, not a dict: 1 and 1.0 are different columns) with the points
    reachable when context == c, and each step pair serves every context, its threshold
    linear in the context one-hot. `x_error` bounds |float32 x - exact x| (default: the rounding of x
    itself); `context_noise` bounds the noise on the context one-hot. Raises CompileError (without a
    span) when a gap is too small to resolve at these errors. The rounding budget assumes each term
    of the x reading is no bigger than max |x|; a view that cancels large terms (a - b, both large)
    should fold that cancellation error into `x_error`. `sharpness` replaces STEP_SHARPNESS (a
    step's slope is sharpness / gap) and the integer band: an exact whole-number input needs less
    margin, and its pre-activations are exact without the band (compiler.exact_numbers).
    """
    # the build reads of `exact` only the context's dims (`_band_mode`): the alternative builds
    # of a program, which differ elsewhere, share it (compiler.build_memo)
    seen = {d for d in (context.dims() if context is not None else ()) if d in (exact or ())}
    inputs = (x, points, out, op, name, context, context_points, x_error, context_noise)

    def values() -> list[Sequence[Atom]]:  # the values among the inputs, to be plain atoms
        found = [x.values, out.values, [v for _, v in points]]
        if context is not None:
            found += [context.values, [c for c, _ in context_points or ()]]
            found += [[v for _, v in pts] for _, pts in context_points or ()]
        return found

    sizes = (len(points), tuple(len(pts) for _, pts in context_points or ()))
    spec, proves_exact = build_memo.shared(
        ("step mlp", op, name, *sizes),
        (*inputs, sharpness, sorted(seen, key=repr)),
        lambda: _numeric_mlp(*inputs, exact=seen, sharpness=sharpness),
        values,
        lambda built: built[0].hidden >= SHARED_MIN_UNITS,
    )
    if proves_exact and exact is not None:
        exact.update(spec.out_dims)  # integer activations, dyadic rows: exact in any order
    return spec


def _numeric_mlp(
    x: Encoded,
    points: Sequence[tuple[float, Atom]],
    out: Encoded,
    op: str,
    name: str,
    context: Encoded | None,
    context_points: Sequence[tuple[Atom, Sequence[tuple[float, Atom]]]] | None,
    x_error: float | ErrorBound | None,
    context_noise: float,
    *,
    exact: set[Dim],
    sharpness: float | None,
) -> tuple[MLPSpec, bool]:
    """`numeric_mlp`'s spec, and whether it proves its output dims exact (`exact`: the dims of
    the context known exact; it is not changed)."""
    if x.is_categorical:
        raise ValueError(f"{name}: numeric_mlp needs a numerical reading, got categorical {x.name}")
    writer = Output(out)
    if context is None:
        contexts = [_context_of(((ONE, 1.0),), points, writer, name)]
        domain = MLPDomain(
            (x,), tuple((float(p),) for p, _ in points), tuple(v for _, v in points), out
        )
    else:
        if not context.is_categorical or context_points is None:
            raise ValueError(f"{name}: a context must be categorical and come with context_points")
        contexts = [
            _context_of(context.one_hot[context.index_of(c)], pts, writer, name)
            for c, pts in context_points
        ]
        pairs = [(c, float(p), v) for c, pts in context_points for p, v in pts]
        domain = MLPDomain(
            (context, x), tuple((c, p) for c, p, _ in pairs), tuple(v for *_, v in pairs), out
        )
    max_abs_x = max(float(np.abs(c.xs).max()) for c in contexts)
    if x_error is None:
        x_error = rounding_error(max_abs_x, len(x.number))
    bound = x_error if isinstance(x_error, ErrorBound) else ErrorBound(float(x_error))

    # Steps that change the output by the same delta share units: the k-th such step of every context.
    # Only steps whose gaps are within a factor 2 share: a shared pair takes the smallest member
    # gap's slope, and a steeper slope than a step needs makes its on-side activations (and their
    # float32 rounding) larger.
    kinds = [[(s.change, math.floor(math.log2(s.gap))) for s in ctx.steps] for ctx in contexts]
    n_terms = len(x.number) + max(len(c.terms) for c in contexts) + 1
    # one pair of units per group, one base unit per context: refused before planning them, and
    # before the groups are made (the k-th step of a kind in any context: as many groups of a
    # kind as its most steps in one context; mixed seed 1820297 at N = 7: 64K points refused)
    width = n_terms - 1 + len(writer.dims)
    check_size(op, "step", len(domain.points), 2 * _group_count(kinds) + len(contexts), width)
    groups: dict[tuple[object, ...], dict[int, _Step]] = {}
    for ci, ctx in enumerate(contexts):
        seen: Counter[tuple[object, ...]] = Counter()
        for step, kind in zip(ctx.steps, kinds[ci], strict=True):
            groups.setdefault((*kind, seen[kind]), {})[ci] = step
            seen[kind] += 1
    # In the float32 band D is rounded to an integer (and the weights K + offset to integers): a
    # steeper step keeps reachable inputs clear of that rounding.
    # (an explicit sharpness is for exact whole-number inputs, whose plain dyadic pre-activations
    # are exact already: the band's rounding would eat its smaller margin)
    band = sharpness is None and _band_mode(x, contexts, exact)
    if sharpness is None:
        sharpness = 2 * STEP_SHARPNESS if band else STEP_SHARPNESS
    points = _AllPoints(contexts)
    budget = _ErrorBudget(bound, n_terms, max_abs_x, context_noise, len(contexts))
    units = sorted(
        (
            _plan_unit(m, points, writer, f"{name}: {op}", sharpness, budget)
            for m in groups.values()
        ),
        key=lambda u: (u.falling, u.order),
    )

    b = Builder(len(writer.dims))
    bases = np.array([writer.encode(ctx.first) for ctx in contexts])  # [contexts, outputs]
    tolerance = np.inf
    signs, shifts, biases, outputs = [], [], [], []
    for u in units:
        sign = -1.0 if u.falling else 1.0
        shift = _band_shift(u, points, sign) if band else 0.0
        signs.append(sign)
        shifts.append(shift)
        delta = u.delta
        biases += [-1.0 - shift, -shift]  # relu(D - 1), relu(D)
        outputs += [delta, -delta] if u.falling else [-delta, delta]
        if u.falling:  # [x >= t] = 1 - [x < t]
            bases[list(u.members)] += delta
        tolerance = min(tolerance, (u.margin - budget.rounding(u.slope, u.offsets)) / u.slope)
    if units:
        # D = ±slope·x + offset_c (+ K, taken off again by the bias). With one x dimension and a
        # context of which one dimension is 1, the dot product has two non-zero products: one
        # addition, so every evaluation order computes the same float, and with K putting it in
        # [2**23, 2**24) that float is an integer: both units of the pair see the same integer D,
        # relu(D) - relu(D - 1) is exactly 0 or 1, and the hidden activations add exactly.
        dims, weights = _step_columns(
            x,
            contexts,
            np.array(signs) * np.array([u.slope for u in units]),
            np.array([u.offsets for u in units]) + np.array(shifts)[:, None],
        )
        b.block(dims, weights, biases, outputs, times=2)  # both units of a pair
    _add_bases(b, bases, contexts)
    total = _max_activation_sum(units, bases, points)
    # Where a pair is on, its two units round D independently: the pair writes delta times
    # 1 +- 2·rounding. The sum over hidden units adds its own rounding.
    pair_error = sum(
        2 * budget.rounding(u.slope, u.offsets) * float(np.abs(u.delta).max()) for u in units
    )
    notes = {
        "kind": "steps",
        "pairs": len(units),
        "x_tolerance": float(tolerance / SAFETY_FACTOR),
        "max_activation_sum": total,
        "output_error_bound": pair_error + rounding_error(total, len(b.biases)),
    }
    spec = b.spec(op, name, writer.dims, notes, domain)
    return spec, band and dyadic(spec)


def _group_count(kinds: Sequence[Sequence[tuple[object, ...]]]) -> int:
    """How many groups `_numeric_mlp` makes of the steps of these kinds (one list per context)."""
    most: dict[tuple[object, ...], int] = {}
    for per_context in kinds:
        for kind, count in Counter(per_context).items():
            most[kind] = max(most.get(kind, 0), count)
    return sum(most.values())


def _step_columns(
    x: Encoded, contexts: Sequence[_Context], slopes: np.ndarray, offsets: np.ndarray
) -> tuple[list[Dim], np.ndarray]:
    """Each step pair's column, as `linear((x.number, slope), *((c.terms, offset_c) ...))` gives
    it, for all pairs at once: the dims in the order it lists them, and [dims, pairs] weights,
    each the same float64 sum in the same order (`slopes` [pairs], `offsets` [pairs, contexts],
    the band's K already added)."""
    parts = [(x.number, slopes)] + [(c.terms, offsets[:, i]) for i, c in enumerate(contexts)]
    row: dict[Dim, int] = {}
    for terms, _ in parts:
        for dim, _ in terms:
            row.setdefault(dim, len(row))
    weights = np.zeros((len(row), len(slopes)))
    for terms, scale in parts:
        for dim, coef in terms:
            weights[row[dim]] += scale * coef
    return list(row), weights


def _band_mode(x: Encoded, contexts: Sequence[_Context], exact: set[Dim]) -> bool:
    """Whether a step's dot product has at most two non-zero products (x's one dimension and the
    hot context dimension, or `one`): then it is computed with a single addition."""
    if len(x.number) != 1 or x.number[0][0] == ONE:
        return False
    # The context's weight is K + offset (about 2**23): only an exact context (the embedding's
    # one-hots, or `one`) keeps K·noise from swamping D.
    return all(
        all(c == 1.0 and (d == ONE or d.name in EMBEDDED or d in exact) for d, c in ctx.terms)
        for ctx in contexts
    )


def _band_shift(u: _Unit, points: _AllPoints, sign: float) -> float:
    """K: puts D + K in [2**23, 2**24) at every reachable input whose D is above -2**21 (0 when
    their span does not fit)."""
    pre = sign * u.slope * points.xs + u.offsets[points.owner]  # [P]
    # Far below the threshold (D < -2^21) a unit is off whatever D's rounding: relu gives an
    # exact 0 there, so only the inputs above need the band (a steep step's far side need not fit).
    low, high = max(float(pre.min()), -(2.0**21)), float(pre.max())
    if high - low >= 2.0**22:
        return 0.0
    return 2.0**23 + 16.0 - math.floor(low)


@dataclass(frozen=True)
class _Unit:
    """One step pair: D = ±slope·x + sum_c offsets[c]·context_c; off for D <= 0, on for D >= 1."""

    delta: np.ndarray  # [outputs]
    slope: float
    falling: bool
    offsets: np.ndarray  # [contexts]
    members: tuple[int, ...]
    min_gap: float
    margin: float  # smallest distance of D from the band (0, 1) at a reachable input
    order: float


class _AllPoints:
    """Every reachable (context, x) at once: xs [P], owner [P] (context index), per-context ranges."""

    def __init__(self, contexts: Sequence[_Context]) -> None:
        self.xs = np.concatenate([c.xs for c in contexts])
        self.owner = np.concatenate([np.full(len(c.xs), i) for i, c in enumerate(contexts)])
        self.low = np.array([c.xs[0] for c in contexts])
        self.high = np.array([c.xs[-1] for c in contexts])


@dataclass(frozen=True)
class _ErrorBudget:
    """What a step's pre-activation must absorb: the input's error, the integer band's rounding and
    the context one-hot's noise."""

    x_error: ErrorBound
    n_terms: int
    max_abs_x: float
    context_noise: float
    n_contexts: int

    def rounding(self, slope: float, offsets: np.ndarray) -> float:
        noise = self.context_noise * float(np.abs(offsets).sum())
        magnitude = slope * self.max_abs_x + float(np.abs(offsets).max(initial=0.0)) + 1.0
        return preactivation_rounding(self.n_terms, magnitude) + noise

    def rounding_at(
        self, slope: float, offsets: np.ndarray, xs: np.ndarray, owner: np.ndarray
    ) -> np.ndarray:
        """`rounding` at each reachable point [P]: D's size there, not its largest anywhere (a
        step near 1/1024 rounds as a number of that size, not as one near 1)."""
        noise = self.context_noise * float(np.abs(offsets).sum())
        magnitude = slope * np.abs(xs) + np.abs(offsets)[owner] + 1.0
        return preactivation_rounding(self.n_terms, magnitude) + noise


def _plan_unit(
    members: dict[int, _Step],
    points: _AllPoints,
    writer: Output,
    what: str,
    sharpness: float,
    budget: _ErrorBudget,
) -> _Unit:
    min_gap = min(s.gap for s in members.values())
    slope = sharpness / min_gap
    ids = np.array(list(members))
    ts = np.array([s.t for s in members.values()])
    # Choose the direction whose on-side activations are smaller.
    falling = bool(np.max(ts - points.low[ids]) < np.max(points.high[ids] - ts))
    sign = -1.0 if falling else 1.0
    margin = step_margin(slope, min_gap)
    # Contexts without this step keep D <= -margin at every reachable x; members cross at t.
    offsets = -sign * slope * (points.low if falling else points.high) - margin
    offsets[ids] = -sign * slope * ts + 0.5
    pre = sign * slope * points.xs + offsets[points.owner]  # [P]
    # the refusal first: where float32 cannot resolve the step (x near 2e15, 0.5 apart), float64
    # cannot place it either, and the check below was an internal error, not that refusal
    check_steps_resolvable(
        min_gap,
        budget.x_error,
        points.xs,
        np.maximum(-pre, pre - 1.0),  # each point's distance from the band (0, 1)
        slope,
        budget.rounding_at(slope, offsets, points.xs, points.owner),
        what=what,
        sizes=f"slope {slope:.3g}, {budget.n_contexts} context value(s)",
    )
    true_margin = float(np.min(np.maximum(-pre, pre - 1.0)))
    if true_margin < margin - 1e-6 * (1.0 + abs(margin)):
        raise ValueError("internal: a step threshold falls too close to a reachable value")
    step = next(iter(members.values()))
    delta = writer.encode(step.after) - writer.encode(step.before)
    return _Unit(delta, slope, falling, offsets, tuple(members), min_gap, margin, float(ts.mean()))


def _add_bases(b: Builder, bases: np.ndarray, contexts: Sequence[_Context]) -> None:
    """The output at the bottom of each context's range (plus the falling deltas): the most common
    row on a `one` unit, the others on one unit per context value."""
    keyed = Counter(tuple(row.tolist()) for row in bases)
    common = np.array(max(keyed, key=lambda k: keyed[k]))
    if common.any():
        b.unit({ONE: 1.0}, 0.0, common)
    for ctx, row in zip(contexts, bases):
        if not np.array_equal(row, common):
            b.unit(linear((ctx.terms, 2.0)), -1.0, row - common)


def _max_activation_sum(units: Sequence[_Unit], bases: np.ndarray, points: _AllPoints) -> float:
    """max over reachable inputs of sum_j |h_j| * max|W_out[j]|: below 2**24, integer outputs are exact."""
    total = (
        np.array([float(np.abs(row).max(initial=0.0)) for row in bases])[points.owner] + 1.0
    )  # [P]
    for u in units:
        pre = (-u.slope if u.falling else u.slope) * points.xs + u.offsets[points.owner]
        weight = float(np.abs(u.delta).max())
        total += weight * (np.maximum(pre, 0.0) + np.maximum(pre - 1.0, 0.0))
    return float(total.max())

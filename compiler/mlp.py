"""Exact MLPs in Dim coordinates: lookup tables, numerical step banks, joint (product) one-hots.

Every builder returns out = relu(resid·W_in + b_in)·W_out, exact on every reachable input:

- A table unit fires for one tuple of categorical values: relu(2·sum of its k one-hots - (2k-1)) is
  exactly 1 on the tuple and exactly 0 elsewhere (a partial match gives <= -1); one-hot noise below
  1/(2k) keeps the other units at exactly 0.
- A step pair relu(D) - relu(D - 1) is exactly 0 where D <= 0 at every evaluation order, and 1 up to
  the two units' independent rounding of D where D >= 1 (the two dot products may be summed in
  different orders, so their difference is not exactly 1); reachable inputs keep D far from (0, 1).

Outputs are a base value (a constant `one` unit, or one unit per context value) plus deltas, so units
are only spent where the output changes. docs/compiler-weights.md has the proofs."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

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

__all__ = ["joint_mlp", "numeric_mlp", "table_mlp"]


class _Builder:
    """Accumulates hidden units: W_in columns (dim -> weight), biases and output rows."""

    def __init__(self, n_out: int) -> None:
        self.n_out = n_out
        self.columns: list[dict[Dim, float]] = []
        self.biases: list[float] = []
        self.outputs: list[np.ndarray] = []

    def unit(self, terms: Mapping[Dim, float], bias: float, output: np.ndarray) -> None:
        self.columns.append(dict(terms))
        self.biases.append(bias)
        self.outputs.append(np.asarray(output, dtype=float))

    def spec(
        self, op: str, name: str, out_dims: tuple[Dim, ...], notes: dict, domain: MLPDomain
    ) -> MLPSpec:
        hidden = len(self.biases)
        w_in: dict[Dim, np.ndarray] = {}
        for j, column in enumerate(self.columns):
            for dim, w in column.items():
                if w != 0.0:
                    w_in.setdefault(dim, np.zeros(hidden))[j] += w
        w_out = np.array(self.outputs).reshape(hidden, self.n_out)
        biases = np.array(self.biases, dtype=float)
        return MLPSpec(op, name, w_in, biases, w_out, out_dims, notes, domain)


def _linear(*parts: tuple[Terms, float]) -> dict[Dim, float]:
    """sum of scale * reading, as dim -> weight."""
    acc: dict[Dim, float] = {}
    for terms, scale in parts:
        for dim, coef in terms:
            acc[dim] = acc.get(dim, 0.0) + scale * coef
    return acc


class _Output:
    """How an output value is written: a one-hot row or one number."""

    def __init__(self, out: Encoded) -> None:
        self.out = out
        self.column = {value_key(v): k for k, v in enumerate(out.values)}
        if out.is_categorical:
            self.dims = tuple(_single_dim(t, out.name) for t in out.one_hot)
        else:
            self.dims = (_single_dim(out.number, out.name),)

    def encode(self, v: Atom) -> np.ndarray:
        if self.out.is_categorical:
            row = np.zeros(len(self.dims))
            row[self.column[value_key(v)]] = 1.0
            return row
        if isinstance(v, bool | int | float):
            return np.array([float(v)])
        raise ValueError(f"{self.out.name}: output value {v!r} is not a number")

    def change(self, before: Atom, after: Atom) -> tuple:
        """A hashable key for the output row difference `encode(after) - encode(before)`."""
        if self.out.is_categorical:
            return (value_key(before), value_key(after))
        return (float(self.encode(after)[0] - self.encode(before)[0]),)


def _single_dim(terms: Terms, what: str) -> Dim:
    if len(terms) != 1 or terms[0][1] != 1.0:
        raise ValueError(
            f"{what} must be written to a single materialised dimension, got {terms!r}"
        )
    return terms[0][0]


def _most_common(values: Sequence[Atom]) -> Atom:
    counts = Counter(value_key(v) for v in values)
    best = max(counts, key=lambda k: counts[k])
    return next(v for v in values if value_key(v) == best)


def table_mlp(
    inputs: Sequence[Encoded],
    table: Mapping[tuple, Atom] | Sequence[tuple[tuple, Atom]],
    out: Encoded,
    *,
    op: str,
    name: str,
    exact: set[Dim] | None = None,
) -> MLPSpec:
    """A lookup table over categorical readings: the most common output as a base, one unit per
    reachable tuple whose output differs from it.

    `table` maps tuples of input values to the output value; pass it as a list of (tuple, value)
    pairs when the inputs hold values that Python's dict would merge (1, 1.0 and True).
    """
    items = list(table.items()) if isinstance(table, Mapping) else list(table)
    if not items:
        raise ValueError(f"{name}: empty table")
    writer = _Output(out)
    base = _most_common([v for _, v in items])
    base_row = writer.encode(base)
    b = _Builder(len(writer.dims))
    if base_row.any():
        b.unit({ONE: 1.0}, 0.0, base_row)
    k = len(inputs)
    columns = [{value_key(v): enc.one_hot[j] for j, v in enumerate(enc.values)} for enc in inputs]
    for tup, result in items:
        if value_key(result) == value_key(base):
            continue
        try:
            parts = [(col[value_key(v)], 2.0) for col, v in zip(columns, tup)]
        except KeyError as missing:
            raise ValueError(
                f"{name}: table row {tup!r} holds a value its reading lacks"
            ) from missing
        b.unit(_linear(*parts), -(2.0 * k - 1.0), writer.encode(result) - base_row)
    notes = {
        "kind": "table",
        "inputs": [e.name for e in inputs],
        "rows": len(items),
        "onehot_noise_tolerated": 1 / (2 * k),
    }
    domain = MLPDomain(
        tuple(inputs), tuple(tuple(t) for t, _ in items), tuple(v for _, v in items), out
    )
    spec = b.spec(op, name, writer.dims, notes, domain)
    # exact 0/1 inputs give integer activations: exact outputs where the output rows are dyadic
    if exact is not None and all(exact_reading(e, exact) for e in inputs) and _dyadic(spec):
        exact.update(writer.dims)
    return spec


def joint_mlp(
    inputs: Sequence[Encoded],
    tuples: Sequence[tuple],
    out_name: str,
    *,
    op: str,
    exact: set[Dim] | None = None,
) -> tuple[MLPSpec, Encoded]:
    """A product one-hot `out_name:(v1, v2, ...)` over the reachable tuples of several readings."""
    unique: dict[tuple, tuple] = {}
    for t in tuples:
        unique.setdefault(tuple(value_key(v) for v in t), tuple(t))
    values = tuple(unique.values())
    out = Encoded.materialised_categorical(out_name, values)
    spec = table_mlp(inputs, [(t, t) for t in values], out, op=op, name=out_name, exact=exact)
    return spec, out


# ----------------------------------------------------------------------------------------------
# Numerical step banks


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
    terms: Terms, points: Sequence[tuple[float, Atom]], writer: _Output, what: str
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
    for a, b in itertools.pairwise(xs):
        before, after = by_x[a], by_x[b]
        if value_key(before) != value_key(after):
            steps.append(_Step((a + b) / 2, b - a, writer.change(before, after), before, after))
    return _Context(terms, np.array(xs), by_x[xs[0]], tuple(steps))


def numeric_mlp(
    x: Encoded,
    points: Sequence[tuple[float, Atom]],
    out: Encoded,
    *,
    op: str,
    name: str,
    context: Encoded | None = None,
    context_points: Mapping[Atom, Sequence[tuple[float, Atom]]] | None = None,
    x_error: float | ErrorBound | None = None,
    context_noise: float = 0.0,
    exact: set[Dim] | None = None,
) -> MLPSpec:
    """A piecewise-constant function of a numerical reading: one step pair per change of the output.

    With a categorical `context`, the output is a function of (context, x): `context_points[c]` are
    the points reachable when context == c, and each step pair serves every context, its threshold
    linear in the context one-hot. `x_error` bounds |float32 x - exact x| (default: the rounding of x
    itself); `context_noise` bounds the noise on the context one-hot. Raises CompileError (without a
    span) when a gap is too small to resolve at these errors. The rounding budget assumes each term
    of the x reading is no bigger than max |x|; a view that cancels large terms (a - b, both large)
    should fold that cancellation error into `x_error`.
    """
    if x.is_categorical:
        raise ValueError(f"{name}: numeric_mlp needs a numerical reading, got categorical {x.name}")
    writer = _Output(out)
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
            for c, pts in context_points.items()
        ]
        pairs = [(c, float(p), v) for c, pts in context_points.items() for p, v in pts]
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
    groups: dict[tuple[object, ...], dict[int, _Step]] = {}
    for ci, ctx in enumerate(contexts):
        seen: Counter[tuple[object, ...]] = Counter()
        for step in ctx.steps:
            kind = (step.change, math.floor(math.log2(step.gap)))
            groups.setdefault((*kind, seen[kind]), {})[ci] = step
            seen[kind] += 1
    n_terms = len(x.number) + max(len(c.terms) for c in contexts) + 1
    # In the float32 band D is rounded to an integer (and the weights K + offset to integers): a
    # steeper step keeps reachable inputs clear of that rounding.
    band = _band_mode(x, contexts, exact or set())
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

    b = _Builder(len(writer.dims))
    bases = np.array([writer.encode(ctx.first) for ctx in contexts])  # [contexts, outputs]
    tolerance = np.inf
    for u in units:
        sign = -1.0 if u.falling else 1.0
        shift = _band_shift(u, points, sign) if band else 0.0
        # D = ±slope·x + offset_c (+ K, taken off again by the bias). With one x dimension and a
        # context of which one dimension is 1, the dot product has two non-zero products: one
        # addition, so every evaluation order computes the same float, and with K putting it in
        # [2**23, 2**24) that float is an integer: both units of the pair see the same integer D,
        # relu(D) - relu(D - 1) is exactly 0 or 1, and the hidden activations add exactly.
        terms = _linear(
            (x.number, sign * u.slope),
            *((c.terms, float(off) + shift) for c, off in zip(contexts, u.offsets)),
        )
        delta = u.delta
        b.unit(terms, -1.0 - shift, delta if u.falling else -delta)  # relu(D - 1)
        b.unit(terms, -shift, -delta if u.falling else delta)  # relu(D)
        if u.falling:  # [x >= t] = 1 - [x < t]
            bases[list(u.members)] += delta
        tolerance = min(tolerance, (u.margin - budget.rounding(u.slope, u.offsets)) / u.slope)
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
    if band and exact is not None and _dyadic(spec):
        exact.update(writer.dims)  # integer activations, dyadic rows: exact in any order
    return spec


def _dyadic(spec: MLPSpec) -> bool:
    rows = np.asarray(spec.W_out, dtype=np.float64) * 2.0**16
    return bool(np.array_equal(rows, np.round(rows)))


def exact_reading(enc: Encoded, exact: set[Dim]) -> bool:
    return all(d == ONE or d.name in _EMBEDDED or d in exact for d in enc.dims())


def _band_mode(x: Encoded, contexts: Sequence[_Context], exact: set[Dim]) -> bool:
    """Whether a step's dot product has at most two non-zero products (x's one dimension and the
    hot context dimension, or `one`): then it is computed with a single addition."""
    if len(x.number) != 1 or x.number[0][0] == ONE:
        return False
    # The context's weight is K + offset (about 2**23): only an exact context (the embedding's
    # one-hots, or `one`) keeps K·noise from swamping D.
    return all(
        all(c == 1.0 and (d == ONE or d.name in _EMBEDDED or d in exact) for d, c in ctx.terms)
        for ctx in contexts
    )


_EMBEDDED = ("tokens", "indices")


def _band_shift(u: _Unit, points: _AllPoints, sign: float) -> float:
    """K: puts D + K in [2**23, 2**24) at every reachable input (0 when the span does not fit)."""
    pre = sign * u.slope * points.xs + u.offsets[points.owner]  # [P]
    low, high = float(pre.min()), float(pre.max())
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


def _plan_unit(
    members: dict[int, _Step],
    points: _AllPoints,
    writer: _Output,
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
    true_margin = float(np.min(np.maximum(-pre, pre - 1.0)))
    if true_margin < margin - 1e-6 * (1.0 + abs(margin)):
        raise ValueError("internal: a step threshold falls too close to a reachable value")
    check_steps_resolvable(
        min_gap,
        budget.x_error,
        points.xs,
        np.maximum(-pre, pre - 1.0),  # each point's distance from the band (0, 1)
        slope,
        budget.rounding(slope, offsets),
        what=what,
        sizes=f"slope {slope:.3g}, {budget.n_contexts} context value(s)",
    )
    step = next(iter(members.values()))
    delta = writer.encode(step.after) - writer.encode(step.before)
    return _Unit(
        delta, slope, falling, offsets, tuple(members), min_gap, margin, float(ts.mean())
    )


def _add_bases(b: _Builder, bases: np.ndarray, contexts: Sequence[_Context]) -> None:
    """The output at the bottom of each context's range (plus the falling deltas): the most common
    row on a `one` unit, the others on one unit per context value."""
    keyed = Counter(tuple(row.tolist()) for row in bases)
    common = np.array(max(keyed, key=lambda k: keyed[k]))
    if common.any():
        b.unit({ONE: 1.0}, 0.0, common)
    for ctx, row in zip(contexts, bases):
        if not np.array_equal(row, common):
            b.unit(_linear((ctx.terms, 2.0)), -1.0, row - common)


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

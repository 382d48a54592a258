"""Interpolating MLPs: a numerical function of one numerical reading, linear between its points.

f(x) = f(x_0) + sum_k c_k relu(x - x_k), with a kink at each reachable x_k where the slope changes
by c_k, passes through every reachable point (x_j, f(x_j)). No unit decides anything: a unit whose
kink is x_j is 0 at x_j in exact arithmetic, and ReLU is 1-Lipschitz, so whatever the float32
error e of its input, it writes at most |e| off. The output's error is then about
sum_k |c_k| (|x's error| + rounding), the function's total curvature times the input error,
instead of a step bank's sum over its steps of activations that grow with their distance from the
threshold (`step_mlp`): a smooth map of a mean (`q * q`) stays within its output's snap where the
steps did not. A jump (close x, far f) makes a steep slope that amplifies the input's error: there
the steps win, and `map_steps` keeps the one with the smaller error bound.

The certifier checks such a part as continuous (compiler.certify_mlp): every unit's error is
carried to the output, none is a decision.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from compiler.blocks import ONE, Atom, Encoded, MLPDomain, MLPSpec
from compiler.mlp import Builder, Output, check_size, linear
from compiler.numeric import ErrorBound, preactivation_rounding, rounding_error

__all__ = ["context_interpolation_mlp", "interpolation_mlp"]

# slopes this close (relative) are one slope: their difference is float64's rounding of the points
SLOPE_NOISE = 1e-10


@dataclass(frozen=True)
class _Line:
    """The interpolant of one set of points: y0 at the first x, then a slope change at each kink."""

    xs: np.ndarray  # [m] sorted distinct reachable x
    ys: np.ndarray  # [m]
    at: np.ndarray  # [k] the x of each kink
    kinks: np.ndarray  # [k] the slope change there (the first: the first slope)


def _line(points: Sequence[tuple[float, Atom]]) -> _Line | None:
    """None where the points are no function of finite numbers (a value not a number, x twice)."""
    if not points or not all(isinstance(v, bool | int | float) for _, v in points):
        return None
    order = sorted(points, key=lambda p: float(p[0]))
    xs = np.array([float(p) for p, _ in order])  # [m]
    ys = np.array([float(v) for _, v in order])  # [m]
    if len(np.unique(xs)) != len(xs) or not (np.isfinite(xs).all() and np.isfinite(ys).all()):
        return None
    slopes = _without_noise(np.diff(ys) / np.diff(xs))  # [m - 1]: slope on [x_k, x_k+1]
    kinks = np.diff(slopes, prepend=0.0)  # [m - 1]: slope change at x_k (x_0: the first slope)
    if not np.isfinite(kinks).all():
        return None
    used = np.flatnonzero(kinks)
    return _Line(xs, ys, xs[used], kinks[used])


def _without_noise(slopes: np.ndarray) -> np.ndarray:
    """`slopes` with each one within float64 noise (SLOPE_NOISE relative) of the one before kept
    equal to it: points on a line computed in float64 (`round(n * k / n)` at x = k / n) give
    slopes that differ in their last bits, and a kink each. The line then misses a point by at
    most SLOPE_NOISE times its slope times the x range (the certifier counts what it misses)."""
    out = slopes.copy()
    for k in range(1, len(out)):
        if abs(out[k] - out[k - 1]) <= SLOPE_NOISE * max(abs(out[k]), abs(out[k - 1])):
            out[k] = out[k - 1]
    return out


def interpolation_mlp(
    x: Encoded,
    points: Sequence[tuple[float, Atom]],
    out: Encoded,
    *,
    op: str,
    name: str,
    x_error: ErrorBound,
) -> MLPSpec | None:
    """The piecewise-linear interpolant of `points` (distinct x, numerical values) on reading `x`,
    written to the numerical `out`; None where it cannot be one (fewer than two points, a value
    that is not a finite number). Its notes carry `output_error_bound`, the builder's estimate
    of its float32 error (the certifier proves the real one)."""
    if x.is_categorical or out.is_categorical or len(points) < 2:
        return None
    line = _line(points)
    if line is None:
        return None
    writer = Output(out)
    check_size(op, "interpolation", len(points), len(line.kinks) + 1, len(x.number) + 1)
    b = Builder(1)
    if line.ys[0] != 0.0:
        b.unit({ONE: 1.0}, 0.0, np.array([line.ys[0]]))
    terms = linear((x.number, 1.0))
    for x_k, c_k in zip(line.at, line.kinks, strict=True):
        b.unit(terms, -float(x_k), np.array([c_k]))
    pairs = sorted(points, key=lambda p: float(p[0]))
    domain = MLPDomain((x,), tuple((float(p),) for p, _ in pairs), tuple(v for _, v in pairs), out)
    notes = {
        "kind": "interpolation",
        "kinks": len(line.kinks),
        "output_error_bound": _error_bound(line, x_error, len(x.number), 0.0),
    }
    return b.spec(op, name, writer.dims, notes, domain, continuous=True)


def context_interpolation_mlp(
    x: Encoded,
    context: Encoded,
    context_points: Sequence[tuple[Atom, Sequence[tuple[float, Atom]]]],
    out: Encoded,
    *,
    op: str,
    name: str,
    x_error: ErrorBound,
    context_noise: float = 0.0,
) -> MLPSpec | None:
    """`interpolation_mlp` per value c of the categorical `context` (`context_points`: c and the
    points reachable where context == c): c's kinks are gated by its one-hot, relu(x - x_k - B·(1 -
    [c])) with B = the largest reachable x - x_k plus 1, so that every other context's x leaves
    the unit at most -1 (surely off); c's first value is written by relu(2·[c] - 1). None where a
    context's points are no function of finite numbers."""
    if x.is_categorical or out.is_categorical or not context.is_categorical:
        return None
    lines: list[_Line] = []
    for _, pts in context_points:
        line = _line(pts)
        if line is None:
            return None
        lines.append(line)
    if not lines:
        return None
    top = max(float(line.xs.max()) for line in lines)
    writer = Output(out)
    n_points = sum(len(pts) for _, pts in context_points)
    units = sum(len(line.kinks) + 1 for line in lines) + 1
    check_size(op, "interpolation", n_points, units, len(x.number) + len(context.one_hot) + 1)
    b = Builder(1)
    common = Counter(float(line.ys[0]) for line in lines).most_common(1)[0][0]
    if common != 0.0:
        b.unit({ONE: 1.0}, 0.0, np.array([common]))
    worst = 0.0
    for (c, _), line in zip(context_points, lines, strict=True):
        hot = context.one_hot[context.index_of(c)]
        if line.ys[0] != common:
            b.unit(linear((hot, 2.0)), -1.0, np.array([line.ys[0] - common]))
        gate = np.maximum(top - line.at, 0.0) + 1.0  # [k]: B per kink
        for x_k, c_k, big in zip(line.at, line.kinks, gate, strict=True):
            b.unit(linear((x.number, 1.0), (hot, float(big))), -float(x_k + big), np.array([c_k]))
        noise = context_noise * float(gate.max(initial=0.0))
        worst = max(worst, _error_bound(line, x_error, len(x.number) + len(hot), noise))
    pairs = [(c, float(p), v) for c, pts in context_points for p, v in pts]
    domain = MLPDomain(
        (context, x), tuple((c, p) for c, p, _ in pairs), tuple(v for *_, v in pairs), out
    )
    notes = {"kind": "interpolation", "kinks": units, "output_error_bound": worst}
    return b.spec(op, name, writer.dims, notes, domain, continuous=True)


def _error_bound(line: _Line, x_error: ErrorBound, n_terms: int, noise: float) -> float:
    """An estimate of the output's float32 error at the worst reachable point: each unit that
    may be on carries its input's error and rounding times |c_k|; the output sum rounds."""
    xs, at, kinks = line.xs, line.at, np.abs(line.kinks)
    reach = float(np.abs(xs).max() + np.abs(at).max(initial=0.0)) + 2.0
    e = x_error.at(xs) + preactivation_rounding(n_terms, reach) + noise  # [m]
    # units that may be on at x: kinks at or below x + e (`at` is sorted)
    on = np.searchsorted(at, xs + e, side="right")  # [m]
    weight = np.concatenate([[0.0], np.cumsum(kinks)])  # [units + 1]: prefix sums
    moment = np.concatenate([[0.0], np.cumsum(kinks * at)])
    carried = weight[on] * e  # [m]
    activations = (xs + e) * weight[on] - moment[on] + abs(float(line.ys[0]))  # sum |c_k| h_k
    return float((carried + rounding_error(1.0, len(kinks) + 1) * activations).max())

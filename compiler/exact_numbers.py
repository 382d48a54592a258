"""Whole numbers written exactly by step MLPs, however large the accumulation: for matching.

Matching (compiler.addressing) scores -c (q - k)^2 and needs each side's number and square as exact
whole numbers in every evaluation order. A step MLP's pairs write exact 0/1 steps where their
pre-activations are exact, but the MLP's output is a float32 sum over its hidden units of
activation x output weight, and an activation grows with the input's distance from the unit's
threshold: a square over 0..510 sums terms up to 2^28, where float32 rounds. `integer_parts` splits
the function into parts, each the steps of a range of thresholds, halving a range until its MLP's
sum of |activation x weight| stays below 2^23 at every reachable input; each part is an ordinary
step MLP writing a dimension of its own (every partial sum a whole number below 2^24, exact in any
order), and the number is the sum of the parts' dimensions (a vector reading: each value sets each
part's dimension to an exact whole number).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compiler import step_mlp
from compiler.blocks import ONE, Atom, Dim, Encoded, Encoding, MLPSpec
from compiler.mlp import EMBEDDED
from rasp.errors import CompileError, Diagnostic

# A part's sum of |activation x output weight| stays below this at every reachable input.
GROUP_LIMIT = 2.0**23
# Step sharpness on an exact whole-number input: its reachable values are whole numbers, so a
# margin of 1/2 around each threshold (the band's rounding there is about 1e-4) suffices and keeps
# activations half as large as the default's.
EXACT_INPUT_SHARPNESS = 2.0


def exact_whole_input(x: Encoded, exact: set[Dim]) -> bool:
    """Whether a numerical reading is a whole-number combination of dimensions holding exact
    whole numbers (the embedding's, or ones a step MLP writes exactly)."""
    return (
        bool(x.number)
        and all(
            float(c) == int(c) and (d == ONE or d.name in EMBEDDED or d in exact)
            for d, c in x.number
        )
        and all(float(v) == int(v) for v in x.values)
    )  # type: ignore[arg-type]


def integer_parts(
    x: Encoded,
    points: Sequence[tuple[float, Atom]],
    function: Callable[[Atom], int],
    *,
    name: str,
    op: str,
    x_error: object = None,
    exact: set[Dim],
) -> tuple[list[MLPSpec], Encoded]:
    """Step MLPs that write the whole number `function(v)` at each reachable point (x, v) as the
    sum of their outputs, as few as keep each one's accumulation exact. Returns them and the vector
    reading of what they write: value v sets each part's dimension to a whole number. `x_error` as
    for `step_mlp.numeric_mlp`."""
    order = sorted(range(len(points)), key=lambda k: float(points[k][0]))
    xs = [float(points[k][0]) for k in order]
    ys = [function(points[k][1]) for k in order]
    sharpness = EXACT_INPUT_SHARPNESS if exact_whole_input(x, exact) else None

    def part(lo: int, hi: int, dim: Dim) -> MLPSpec:
        # the steps between sorted points lo..hi; the first part carries f at the bottom too
        base = 0 if lo == 0 else ys[lo]
        writes = [ys[min(max(k, lo), hi)] - base for k in range(len(xs))]
        out = Encoded(
            dim.name, Encoding.NUMERICAL, tuple(dict.fromkeys(writes)), number=((dim, 1.0),)
        )
        return step_mlp.numeric_mlp(
            x,
            list(zip(xs, writes, strict=True)),
            out,
            op=op,
            name=dim.name,
            x_error=x_error,  # type: ignore[arg-type]
            sharpness=sharpness,
        )

    ranges = [(0, len(xs) - 1)]
    built: dict[tuple[int, int, str], MLPSpec] = {}

    def specs_of(ranges: list[tuple[int, int]]) -> list[MLPSpec]:
        names = [name] if len(ranges) == 1 else [f"{name}.{k}" for k in range(len(ranges))]
        for (lo, hi), dim_name in zip(ranges, names, strict=True):
            if (lo, hi, dim_name) not in built:
                built[lo, hi, dim_name] = part(lo, hi, Dim(dim_name))
        return [built[lo, hi, n] for (lo, hi), n in zip(ranges, names, strict=True)]

    while True:
        specs = specs_of(ranges)
        heavy = {
            k
            for k, spec in enumerate(specs)
            if spec.notes["max_activation_sum"] >= GROUP_LIMIT and ranges[k][1] - ranges[k][0] > 1
        }
        if not heavy:
            break
        ranges = [
            piece
            for k, (lo, hi) in enumerate(ranges)
            for piece in (
                [(lo, (lo + hi) // 2), ((lo + hi) // 2, hi)] if k in heavy else [(lo, hi)]
            )
        ]
    heavy = [spec for spec in specs if spec.notes["max_activation_sum"] >= GROUP_LIMIT]
    if heavy:  # a single step whose own sum reaches the limit: float32 may round it
        raise CompileError(
            [
                Diagnostic(
                    f"{op}: a step of {name} cannot be written exactly in float32 (its activations "
                    f"times its weight reach {heavy[0].notes['max_activation_sum']:.3g})"
                )
            ]
        )
    dims = tuple(spec.out_dims[0] for spec in specs)
    # value v: each part's whole number there (each part's domain lists the sorted points)
    at = {k: i for i, k in enumerate(order)}
    rows = tuple(
        tuple((d, _written(spec, at[k])) for d, spec in zip(dims, specs, strict=True))
        for k in range(len(points))
    )
    return specs, Encoded(name, Encoding.VECTOR, tuple(v for _, v in points), one_hot=rows)


def _written(spec: MLPSpec, at: int) -> float:
    """What a part writes at the `at`-th smallest x (its domain lists the points in that order)."""
    assert spec.domain is not None  # numeric_mlp always describes its domain
    return float(spec.domain.outputs[at])  # type: ignore[arg-type]

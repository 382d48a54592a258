"""Readings every planner makes: a node's own dimensions, a number decoded into them, a free view.

- `materialise`: the node gets dimensions of its own (one per value, or one number), with bounds.
- `decode_numeric`: a step MLP turns a numerical reading into the node's materialised reading; read
  categorically, equal numbers (1 and 1.0, or float64 noise apart) share one column (`Built.canon`).
- `view_numerical`: a categorical reading seen as a number (sum of value x one-hot), free.
"""

from __future__ import annotations

from typing import Any

from compiler import numeric, step_mlp
from compiler.blocks import (
    Atom,
    Dim,
    Encoded,
    Encoding,
    MLPSpec,
    is_number,
    sort_values,
    value_key,
)
from compiler.fits import merge_per_context, merge_points, nearest_merged
from compiler.graph import IRNode
from compiler.plan_state import Built
from rasp.errors import CompileError, Diagnostic


def materialise(built: Built, node: IRNode, encoding: Encoding, vals: tuple[Atom, ...]) -> Encoded:
    if encoding is Encoding.CATEGORICAL:
        out = Encoded.materialised_categorical(node.name, vals)
        built.bound_one_hot(out)
        return out
    out = Encoded.materialised_numerical(node.name, vals)
    built.bounds[Dim(node.name)] = max((abs(float(v)) for v in vals), default=1.0)
    return out


def decode_numeric(
    built: Built,
    node: IRNode,
    x: Encoded,
    points: list[tuple[float, Atom]],
    encoding: Encoding,
    x_error: float | numeric.ErrorBound | None = None,
    *,
    resolved: bool = False,
) -> Encoded:
    """A step MLP from the numerical reading `x` to the node's own reading; `points` are the
    reachable (x, value) pairs. `resolved`: CompileError where the MLP's own output error bound
    reaches half the distance between two values it writes (no reader could tell them apart)."""
    merged = merge_points(node, points)
    # A number is read back as one value: 1 and 1.0 (equal numbers) share one one-hot column.
    canon: dict[tuple[str, Any], Atom] | None = None
    if encoding is Encoding.CATEGORICAL:
        # each point's value -> the value of the merged point nearest its x
        # (each value's first merged point by index: one value_key per point, not three, over
        # the 2M points of /tmp/both.rasp's builds at N = 256)
        written_keys = [value_key(w) for _, w in merged]
        first: dict[tuple[str, Any], int] = {}
        twice = False  # a value written in two columns
        for key, i in zip(
            map(value_key, (v for _, v in points)), nearest_merged(merged, points), strict=True
        ):
            twice |= written_keys[first.setdefault(key, i)] != written_keys[i]
        canon = {key: merged[i][1] for key, i in first.items()}
        if twice:
            # 4.0 merged into 4 at one x (1.333 * 3) and alone at another (2.0 * 2): a reader
            # of the one-hot, told 4.0 is the column 4, had no row for the column 4.0 (certified
            # and wrong there). Equal numbers are then one value first, as per context (or the
            # map is refused where float64 twins still land in two columns).
            ((_, merged),), canon = merge_per_context(node, [(None, points)], ())
    out = materialise(built, node, encoding, sort_values(v for _, v in merged))
    if canon is not None:
        built.canon[node.index] = canon
    spec = step_mlp.numeric_mlp(
        x,
        merged,
        out,
        op=node.text,
        name=node.name,
        x_error=x_error,
        exact=built.exact,
    )
    if resolved:
        _check_resolved(spec, out, node)
    built.add_mlp(spec)
    return out


def _check_resolved(spec: MLPSpec, out: Encoded, node: IRNode) -> None:
    """CompileError where `spec`'s output error bound (its notes) is half the smallest distance
    between two values of `out` or more: thousands of steps over a long sum (`(a + 13) % (b + 1)`
    at N = 64 stepped over a.frac - (b + 1): 4,090 pairs whose activations add up to 7.4e8, an
    error of 3.7e5 on values 1 apart) are resolved one by one and still write nothing exact."""
    bound = float(spec.notes.get("output_error_bound", 0.0))
    if out.is_categorical:
        half_gap = 0.5
    else:
        numbers = sorted({float(v) for v in out.values})
        gaps = [b - a for a, b in zip(numbers, numbers[1:])]
        half_gap = min(gaps) / 2 if gaps else float("inf")
    if bound >= half_gap:
        raise CompileError(
            [
                Diagnostic(
                    f"{node.text}: its steps write {node.shown} with float32 error up to "
                    f"{bound:.3g}, its values {2 * half_gap:.3g} apart",
                    node.span,  # (with a note at each call of the def that made it)
                )
            ]
        )


def view_numerical(node: IRNode, cat: Encoded, values: tuple[Atom, ...]) -> Encoded:
    """The categorical reading `cat` of a node whose values are `values`, read as a number."""
    terms: dict[Dim, float] = {}
    reachable = {value_key(v) for v in values}
    for v, hot in zip(cat.values, cat.one_hot):
        if not (is_number(v) or isinstance(v, bool)) and value_key(v) not in reachable:
            continue  # a column the reading has but the node never takes (a select never true)
        for d, c in hot:
            terms[d] = terms.get(d, 0.0) + float(v) * c
    # Columns of value 0 add nothing: left out, a one-hot's other columns need not be laid out
    # (`indicator(indices == 0)` read as a number is the `indices:0` column alone, not N columns).
    number = tuple((d, c) for d, c in terms.items() if c != 0.0)
    return Encoded(node.name, Encoding.NUMERICAL, values, number=number)

"""`f > g` of two numerical s-ops with too many value combinations to list: steps over f - g.

`linear_steps` steps a comparison of two numbers over their difference, found from the map's
rows: every reachable combination of the two values. Two prefix means meet in ~N^3/3 of them
(5.6M at N = 256), past `map_rows.MAX_ROWS`, so `f > g` was refused while `d = f - g; d > 0`
compiled (327 parameters): there the difference is its own s-op, whose value analysis enumerates
the combinations on arrays. Here the same, for RASP's comparison operators of two s-ops: for
finite numbers (ints below 2^53, no bools), `a OP b` is exactly `(a - b) OP 0` (IEEE subtraction
is 0 only where a == b and keeps the sign; an int converts to float exactly), so the points are
the distinct differences, computed per position on arrays, each with its comparison to 0.
Used only where the rows are too many (below that, `linear_steps` decides, as before).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import numpy as np

from compiler import map_steps
from compiler.blocks import Atom, Encoded, Encoding
from compiler.combos import MAX_CODES
from compiler.graph import IRNode
from compiler.linear_steps import a_function, sum_error, sum_view
from compiler.map_rows import MAX_ROWS
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import decode_numeric
from compiler.relations import combination_count
from rasp import operators as ops
from rasp.errors import CompileError

# RASP's comparison operators, and the same comparison of an array against 0
_COMPARISONS: dict[Callable[[Atom, Atom], bool], Callable[[np.ndarray], np.ndarray]] = {
    operator.gt: lambda d: d > 0,
    operator.ge: lambda d: d >= 0,
    operator.lt: lambda d: d < 0,
    operator.le: lambda d: d <= 0,
    operator.eq: lambda d: d == 0,
    operator.ne: lambda d: d != 0,
}
_EXACT = 2**53  # ints below this convert to float64 exactly


def comparison_steps(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    encoding: Encoding,
) -> Encoded | None:
    """Comparison map `node` of its two numerical inputs as steps over their difference, where
    their value combinations are more than MAX_ROWS; None where it is no such comparison, the
    differences are too many to list, or float32 cannot resolve the steps."""
    against_zero = _comparison(node)
    vs = ctx.value_sets
    if (
        against_zero is None
        or len(support) != 2
        or support != node.inputs
        or combination_count(support, vs.relation, vs.values) <= MAX_ROWS
        or not all(_finite(v) for s in support for v in vs.values[s])
    ):
        return None
    differences = _differences(ctx, support)
    if differences is None:
        return None
    outputs = against_zero(differences)  # [P] the comparison, exactly as Python gives it
    occurs = set(ctx.values(node.index))
    points = [
        (d, o) for d, o in zip(differences.tolist(), outputs.tolist(), strict=True) if o in occurs
    ]
    if not points or not a_function(points):
        return None
    biggest = [max(abs(float(v)) for v in vs.values[s]) for s in support]
    # each number at its value (a width decoded first, not read as its head's 1/(w+1)); built
    # only now that the steps are known to be a function of the difference
    views = [map_steps.view_of(ctx, reader, s, True) for s in support]
    view = sum_view(node, views, (1.0, -1.0), points)
    canon = built.canon.get(node.index)
    try:
        return decode_numeric(
            built, node, view, points, encoding, sum_error(views, (1.0, -1.0), biggest)
        )
    except CompileError:  # steps float32 cannot resolve: the rows' refusal stands
        if canon is None:
            built.canon.pop(node.index, None)
        else:
            built.canon[node.index] = canon
        return None


def _comparison(node: IRNode) -> Callable[[np.ndarray], np.ndarray] | None:
    fn = node.fn
    if not isinstance(fn, ops.Lifted) or len(fn.template) != 2 or fn.positions != (0, 1):
        return None
    return _COMPARISONS.get(fn.fn)


def _finite(value: Atom) -> bool:
    if type(value) is float:
        return math.isfinite(value)
    return type(value) is int and abs(value) < _EXACT


def _differences(ctx: PlanContext, support: tuple[int, ...]) -> np.ndarray | None:
    """The distinct float64 differences x - y of the two sources' values at one position [P];
    None where more than MAX_CODES would be listed."""
    vs = ctx.value_sets
    first, second = (vs.relation[s] for s in support)
    pairs: list[tuple[tuple[Atom, ...], tuple[Atom, ...]]]
    if first is not None and second is not None:
        pairs = list({(id(a), id(second[p])): (a, second[p]) for p, a in first.items()}.values())
    elif first is not None:
        pairs = [(a, vs.values[support[1]]) for a in {id(a): a for a in first.values()}.values()]
    elif second is not None:
        pairs = [(vs.values[support[0]], b) for b in {id(b): b for b in second.values()}.values()]
    else:
        pairs = [(vs.values[support[0]], vs.values[support[1]])]
    if sum(len(a) * len(b) for a, b in pairs) > MAX_CODES:
        return None
    parts = [
        np.subtract.outer(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)).ravel()
        for a, b in pairs
    ]
    return np.unique(np.concatenate(parts))

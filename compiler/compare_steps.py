"""`f > g` of two numerical s-ops with too many value combinations to list: steps over f - g.

`linear_steps` steps a comparison of two numbers over their difference, found from the map's
rows: every reachable combination of the two values. Two prefix means meet in ~N^3/3 of them
(5.6M at N = 256), past `map_rows.MAX_ROWS`, so `f > g` was refused while `d = f - g; d > 0`
compiled (327 parameters): there the difference is its own s-op, whose value analysis enumerates
the combinations on arrays. Here the same, for RASP's comparison operators of two s-ops: for
finite numbers (ints below 2^53, no bools), `a OP b` is exactly `(a - b) OP 0` (IEEE subtraction
is 0 only where a == b and keeps the sign; an int converts to float exactly), so the points are
the distinct differences, computed per position on arrays, each with its comparison to 0.
Used only where the rows are too many (below that, `linear_steps` decides, as before), and for a
number against a categorical s-op of numbers past `maps.CONTEXT_MAX_ROWS` (`tokens_int > m` over a
prefix mean m: stepped per token from 1.8M rows at N = 256, 13 s in Python). Past the
value analysis's own table limit (44M pairs at N = 512), `compiler.comparisons` gives the
comparison's values from the sets' extremes. A comparison whose distinct differences are more
than MAX_DIFFERENCES (a prefix mean against a suffix mean at N = 256) is still refused.
"""

from __future__ import annotations

import numpy as np

from compiler import map_steps
from compiler.blocks import Atom, Encoded, Encoding
from compiler.combos import MAX_CODES
from compiler.comparisons import against_zero, comparison_of, finite_numbers
from compiler.graph import IRNode
from compiler.linear_steps import a_function, sum_error, sum_view
from compiler.map_rows import MAX_ROWS
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import decode_numeric
from compiler.relations import combination_count
from rasp.errors import CompileError

# distinct differences listed at most (an MLP point each: the certifier checks every one)
MAX_DIFFERENCES = 1_000_000
# pairs of values subtracted at most, position set by position set
MAX_PAIRS = 400_000_000


def comparison_steps(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    encoding: Encoding,
    *,
    min_rows: int | None = None,
) -> Encoded | None:
    """Comparison map `node` of its two inputs' numbers as steps over their difference, where
    their value combinations are more than `min_rows` (None: MAX_ROWS); None where it is no such
    comparison, the differences are too many to list, or float32 cannot resolve the steps."""
    op = comparison_of(node.fn)
    vs = ctx.value_sets
    if (
        op is None
        or len(support) != 2
        or support != node.inputs
        or combination_count(support, vs.relation, vs.values)
        <= (MAX_ROWS if min_rows is None else min_rows)
        or not all(finite_numbers(vs.values[s]) for s in support)
    ):
        return None
    differences = _differences(ctx, support)
    if differences is None:
        return None
    outputs = against_zero(op)(differences)  # [P] the comparison, exactly as Python gives it
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


def _differences(ctx: PlanContext, support: tuple[int, ...]) -> np.ndarray | None:
    """The distinct float64 differences x - y of the two sources' values at one position [P],
    sorted; None where more than MAX_DIFFERENCES, or more than MAX_PAIRS pairs to subtract."""
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
    if sum(len(a) * len(b) for a, b in pairs) > MAX_PAIRS:
        return None
    found = np.zeros(0)
    batch: list[np.ndarray] = []
    size = 0
    for a, b in pairs:  # unique per set pair, merged in batches: memory stays near the answer
        outer = np.subtract.outer(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64))
        batch.append(np.unique(outer))
        size += batch[-1].size
        if size > MAX_CODES:
            found = np.unique(np.concatenate([found, *batch]))
            batch, size = [], found.size
            if found.size > MAX_DIFFERENCES:
                return None
    found = np.unique(np.concatenate([found, *batch]))
    return None if found.size > MAX_DIFFERENCES else found

"""A division whose denominator is 0 up to float64 rounding, named in a refusal (compiler.refusals).

The value analysis pairs the values of a map's inputs as far as it knows them, often each with
each. Where a denominator computed from two means is 0 in exact arithmetic at some pair,
float64 may leave a few units in the last place instead (0.4 - 1.4 + 1 is 1.1e-16): the
analysis then lists a quotient near 10^16, and every decision after it fails with a margin of 0
(numeric fuzz seed 2202510 at N = 12, where no input reaches that pair). The certificate's own
refusal says only "a snap margin of 0"; this says which division, at which pair, and why.
Only messages depend on it: which programs compile does not.
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any

from compiler.graph import Graph, IRNode, Op
from compiler.twin_gaps import ROUNDING
from compiler.values import infer_values
from rasp.errors import CompileError, Diagnostic, RaspError
from rasp.operators import Lifted
from rasp.seqvalues import value_repr

# the operators that refuse a zero divisor (their second argument)
_DIVISIONS = (operator.truediv, operator.floordiv, operator.mod)
# at most this many value tuples tried for a witness pair (519 * 49 at N = 12 for seed 2202510)
MAX_TUPLES = 200_000
# a denominator's inputs, through maps: at most this many s-ops whose values are paired
MAX_LEAVES = 3


def rounded_zero(graph: Graph, reach: Mapping[str, Any] | None) -> Diagnostic | None:
    """A located diagnostic for the first division in `graph` whose denominator's value set holds
    a number that is 0 up to float64 rounding at some tuple of the values it is computed from
    (one such tuple named); None where there is none, or the model's reach (its vocabulary and
    maximum length) is not at hand."""
    divisions = [(node, d) for node in graph.nodes if (d := _denominator(node)) is not None]
    if not divisions or reach is None:
        return None
    try:
        vocab = [ast.literal_eval(t) for t in reach["tokens"]]
        values = infer_values(graph, vocab, int(reach["max_len"]))
    except (KeyError, TypeError, ValueError, SyntaxError, CompileError, RaspError):
        return None  # (no message is better than a wrong one)
    for node, index in divisions:
        den = graph[index]
        found = _witness(graph, den, values.values)
        if found is not None:
            return _diagnostic(graph, node, den, *found)
    return None


def _denominator(node: IRNode) -> int | None:
    """The graph index of a division's denominator where it is an s-op (not a constant)."""
    fn = node.fn
    if node.op is not Op.MAP or not isinstance(fn, Lifted) or fn.fn not in _DIVISIONS:
        return None
    if 1 not in fn.positions:
        return None
    return node.inputs[fn.positions.index(1)]


def _leaves(graph: Graph, index: int) -> list[int]:
    """The s-ops a map is computed from through maps (each once, first met first: each map once
    too, as a chain of maps read twice over, `x = x + x`, would be 2^k paths)."""
    is_map = [node.op is Op.MAP for node in graph.nodes]
    return [i for i in graph.first_visits(index, is_map.__getitem__) if not is_map[i]]


def _evaluate(graph: Graph, index: int, at: Mapping[int, Any]) -> Any:
    node = graph[index]
    if index in at:
        return at[index]
    if node.fn is None:  # (a MAP: every other node is a leaf, in `at`)
        raise TypeError(f"{node.name} is no map")
    return node.fn(*(_evaluate(graph, i, at) for i in node.inputs))


def _tiny(v: Any, scale: float) -> bool:
    """Whether `v` is a nonzero number no larger than float64 rounding leaves of numbers of
    magnitude `scale` (a few units in the last place)."""
    if type(v) is not float or v == 0 or not math.isfinite(v):
        return False
    return abs(v) <= ROUNDING * max(1.0, scale)


def _witness(
    graph: Graph, den: IRNode, sets: Sequence[Sequence[Any]]
) -> tuple[dict[int, Any], float] | None:
    """Values of the denominator's leaves at which it is a rounding-sized nonzero number that
    its value set holds, and that number."""
    held = sets[den.index]
    scale = max((abs(v) for v in held if type(v) in (int, float)), default=1.0)
    if not any(_tiny(v, scale) for v in held):
        return None
    leaves = _leaves(graph, den.index)
    if den.op is not Op.MAP or len(leaves) > MAX_LEAVES:
        return None
    if math.prod(len(sets[i]) for i in leaves) > MAX_TUPLES:
        return None
    for combo in itertools.product(*(sets[i] for i in leaves)):
        at = dict(zip(leaves, combo, strict=True))
        try:
            v = _evaluate(graph, den.index, at)
        except (ArithmeticError, TypeError, ValueError, RaspError):
            continue
        magnitude = max((abs(x) for x in combo if type(x) in (int, float)), default=1.0)
        if _tiny(v, magnitude) and v in held:
            return at, v
    return None


def _label(node: IRNode) -> str:
    return node.name if node.named else node.text


def _diagnostic(
    graph: Graph, division: IRNode, den: IRNode, at: dict[int, Any], v: float
) -> Diagnostic:
    pair = ", ".join(f"{_label(graph[i])} = {value_repr(x)}" for i, x in at.items())
    names = " and ".join(_label(graph[i]) for i in at)
    return Diagnostic(
        f"the division '{division.text}' has a denominator that is 0 up to float64 rounding: "
        f"at {pair}, '{den.text}' is {v:.3g} in float64 where the same numbers in exact "
        f"arithmetic may give 0, and dividing by it multiplies the numerator by {1 / v:.3g}: "
        "values no float32 model tells apart",
        division.span,
        f"the value analysis pairs the values of {names} as far as it knows them and cannot "
        "tell that no input reaches this pair; if none does, compute the denominator from s-ops "
        "whose sums are exact in float64 (counts or whole numbers rather than means), so that "
        "its zero is an exact 0, which the analysis leaves out as no value",
    )

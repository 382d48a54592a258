"""RASP's comparison operators of two s-ops, recognised from a map's function, and their values
over two sets of numbers without enumerating the pairs.

For finite numbers (ints below 2^53, no bools) `a OP b` is exactly `(a - b) OP 0`: IEEE
subtraction gives 0 only where a == b and keeps the sign, and an int converts to float exactly.
`compiler.compare_steps` steps such a comparison over the difference; here the value analysis
finds which of True and False occur at a position from the sets' extremes (and, for `==` and
`!=`, their intersection), where the pairs are too many to list (two prefix means at N = 512:
44M).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

import numpy as np

from compiler.blocks import Atom
from rasp import operators as ops

_AGAINST_ZERO: dict[Callable[[Atom, Atom], bool], Callable[[np.ndarray], np.ndarray]] = {
    operator.gt: lambda d: d > 0,
    operator.ge: lambda d: d >= 0,
    operator.lt: lambda d: d < 0,
    operator.le: lambda d: d <= 0,
    operator.eq: lambda d: d == 0,
    operator.ne: lambda d: d != 0,
}
_EXACT = 2**53  # ints below this convert to float64 exactly


def comparison_of(fn: object) -> Callable[[Atom, Atom], bool] | None:
    """The Python comparison a map of two s-ops applies (`x > y`: operator.gt), else None."""
    if not isinstance(fn, ops.Lifted) or len(fn.template) != 2 or fn.positions != (0, 1):
        return None
    return fn.fn if fn.fn in _AGAINST_ZERO else None


def against_zero(op: Callable[[Atom, Atom], bool]) -> Callable[[np.ndarray], np.ndarray]:
    """`op` of a difference against 0, on an array: `(a - b) OP 0`, which is `a OP b`."""
    return _AGAINST_ZERO[op]


def finite_numbers(values: Sequence[Atom]) -> bool:
    """Whether every value is a finite float or an int float64 holds exactly (no bool)."""
    for v in values:
        if type(v) is float:
            if not math.isfinite(v):
                return False
        elif type(v) is not int or abs(v) >= _EXACT:
            return False
    return True


def outcomes(op: Callable[[Atom, Atom], bool], a: Sequence[Atom], b: Sequence[Atom]) -> list[bool]:
    """Which of False and True `op(x, y)` gives for some x in `a` and y in `b` (both non-empty
    sets of finite numbers), from their extremes, without the pairs."""
    if op in (operator.eq, operator.ne):
        meet = bool(set(a) & set(b))  # equal by value: 1 == 1.0, with equal hashes
        differ = len(set(a) | set(b)) > 1
        true, false = (meet, differ) if op is operator.eq else (differ, meet)
    else:
        lo_a, hi_a, lo_b, hi_b = min(a), max(a), min(b), max(b)
        true = op(hi_a, lo_b) if op in (operator.gt, operator.ge) else op(lo_a, hi_b)
        false = not op(lo_a, hi_b) if op in (operator.gt, operator.ge) else not op(hi_a, lo_b)
    return [v for v, occurs in ((False, false), (True, true)) if occurs]

"""A map applied to many argument tuples at once, in numpy, with Python's exact results.

The value analysis and the map planners apply a map to every combination of its inputs' values
that meet: ~N^3/3 pairs for a difference of two prefix means (5.6M at N = 256), a few microseconds
each through the interpreter's function. An operator's map (`rasp.operators.Lifted`) on numbers
is computed here on float64 columns instead, where that is provably what Python computes:

- every argument is a bool, an int of magnitude below 2^53 (converted to float64 exactly) or a
  finite float, and every int result stays below 2^53 (so float64 holds it exactly);
- `+ - * /`, comparisons and `%` are IEEE operations on those exact values, as Python's are on
  ints that fit a float (its true division of two such ints divides their floats, correctly
  rounded) and on floats (`%` takes fmod and moves a remainder of the wrong sign by the divisor,
  as numpy's `remainder` does, and a zero remainder takes the divisor's sign);
- `round` is half to even (`numpy.rint`); `not`, `and`, `or`, `indicator` and `if` test != 0;
- a result's type follows Python's: bool with bool is int under `+ - *`, int with float is
  float, `/` always gives a float, comparisons give bools, `round` an int;
- a division or remainder by zero is Python's ZeroDivisionError: no value (as `apply_map` says);
- a string (a token) takes part in `==`, `!=` and as a branch of `if`, by its text: a string
  never equals a number;
- tracr's `LinearSequenceMap` (its lowered function's `affine` factors: the same products and
  sum), and a tracr output map's rounding to 12 digits (`compiler.rounded`, once per distinct
  result).

Anything else (another function, another operator on a string, a non-finite number, a result
-0.0 or NaN whose key would not say which it is) returns None, and the caller applies the map one
tuple at a time, as before. tests/compiler/test_vector_maps.py compares both ways on generated maps and values.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.rounded import Rounded, round_float
from rasp import arithmetic, lookups
from rasp import operators as ops
from rasp.tracr.functions import TracrFn

EXACT_INT = float(2**53)  # ints below this (in magnitude) are exact in float64

# kinds of a column's entries, ordered so that the wider of two numeric kinds is their max; a
# string's `num` is its number in `_STRINGS` (equal strings, equal numbers)
BOOL, INT, FLOAT, STR = 0, 1, 2, 3
_KIND = {bool: BOOL, int: INT, float: FLOAT, str: STR}
_STRINGS: dict[str, int] = {}
_STRING_LIST: list[str] = []


@dataclass(frozen=True)
class Column:
    """Values as float64 `num` and their Python type `kind` (BOOL, INT, FLOAT, STR), `[rows]`
    each; `ok` is False where the map has no value (a division by zero)."""

    num: np.ndarray
    kind: np.ndarray
    ok: np.ndarray


def column(values: Sequence[Any]) -> Column | None:
    """`values` as a column, or None where one is neither a string nor a number float64 holds
    exactly."""
    try:
        kind = np.fromiter((_KIND[type(v)] for v in values), dtype=np.int8, count=len(values))
    except KeyError:
        return None
    if (kind == STR).any():
        values = [_string_number(v) if type(v) is str else v for v in values]
    try:
        num = np.array(values, dtype=np.float64) if len(values) else np.zeros(0)
    except OverflowError:  # an int past float64 (10**400): not held exactly either
        return None
    if not np.isfinite(num).all() or (np.abs(num[kind == INT]) >= EXACT_INT).any():
        return None
    return Column(num, kind, np.ones(len(values), dtype=bool))


def _string_number(text: str) -> int:
    number = _STRINGS.get(text)
    if number is None:
        number = _STRINGS[text] = len(_STRING_LIST)
        _STRING_LIST.append(text)
    return number


def broadcast(col: Column, rows: int) -> Column:
    """A one-row column repeated `rows` times (read-only views)."""
    return Column(
        np.broadcast_to(col.num, (rows,)),
        np.broadcast_to(col.kind, (rows,)),
        np.broadcast_to(col.ok, (rows,)),
    )


def plain(col: Column) -> bool:
    """Whether every result is an atom whose key says which it is: no float -0.0 (its key is
    0.0's), NaN or infinity, no int beyond float64's exact range."""
    num, kind, ok = col.num, col.kind, col.ok
    floats = ok & (kind == FLOAT)
    if (floats & ~np.isfinite(num)).any() or (floats & (num == 0) & np.signbit(num)).any():
        return False
    return not (np.abs(num[ok & (kind != FLOAT)]) >= EXACT_INT).any()


def atoms(col: Column) -> list[Any] | None:
    """The column's entries as Python atoms (None where the map has no value); None where a
    float result is -0.0 or NaN (its key would merge or lose it: the caller decides), or
    infinite, or an int result is beyond float64's exact range."""
    if not plain(col):
        return None
    num, kind, ok = col.num, col.kind, col.ok
    floats = ok & (kind == FLOAT)
    out = np.empty(len(num), dtype=object)  # None where not ok
    out[floats] = num[floats].tolist()
    ints = ok & (kind == INT)
    out[ints] = num[ints].astype(np.int64).tolist()
    bools = ok & (kind == BOOL)
    out[bools] = (num[bools] != 0).tolist()
    strings = ok & (kind == STR)
    if strings.any():
        out[strings] = [_STRING_LIST[i] for i in num[strings].astype(np.int64).tolist()]
    return out.tolist()


def apply_columns(fn: Any, args: Sequence[Column]) -> Column | None:
    """`fn` on rows of `args` (one column per s-op input), or None where this module does not
    compute `fn` (see the module's doc): the caller applies it per row then."""
    if isinstance(fn, Rounded):
        got = apply_columns(fn.fn, args)
        return None if got is None else _rounded(got)
    if isinstance(fn, TracrFn):
        return _tracr_linear(fn, args)
    if not isinstance(fn, ops.Lifted):
        return None
    op = _OPS.get(fn.fn)
    if op is None or len(args) != len(fn.positions):
        return None
    full: list[Column | None] = [None] * len(fn.template)
    for position, arg in zip(fn.positions, args, strict=True):
        full[position] = arg
    rows = len(args[0].num) if args else 1
    for i, value in enumerate(fn.template):
        if i not in fn.positions:
            constant = column([value])
            if constant is None:
                return None
            full[i] = broadcast(constant, rows)
    ok = np.ones(rows, dtype=bool)
    for c in full:
        ok &= c.ok  # type: ignore[union-attr]
    if fn.fn not in _ON_STRINGS and any((c.kind == STR).any() for c in full):  # type: ignore[union-attr]
        return None  # `-`, `<`, `not`, ... on a string: Python's answer is not computed here
    with np.errstate(all="ignore"):
        got = op(*full)
    if got is None:
        return None
    num, kind, defined = got
    out = Column(
        np.asarray(num, dtype=np.float64),
        np.broadcast_to(np.asarray(kind, dtype=np.int8), (rows,)).copy(),
        ok & defined,
    )
    # Python's float operations may give inf where float64's do; an int past 2^53 is no longer
    # the int Python has: either way, the caller decides per row
    held = out.num[out.ok]
    if (
        not np.isfinite(held).all()
        or (np.abs(out.num[out.ok & (out.kind != FLOAT)]) >= EXACT_INT).any()
    ):
        return None
    return out


def _rounded(col: Column) -> Column:
    """`col` with each float to 12 digits (`compiler.rounded`), computed once per distinct one."""
    floats = col.ok & (col.kind == FLOAT)
    if not floats.any():
        return col
    held = col.num[floats]
    # distinct by bits: -0.0 and 0.0 are equal floats but Python keeps them apart
    _, first, inverse = np.unique(held.view(np.int64), return_index=True, return_inverse=True)
    num = col.num.copy()
    num[floats] = np.array([round_float(v) for v in held[first].tolist()])[inverse.ravel()]
    return Column(num, col.kind, col.ok)


def _tracr_linear(fn: TracrFn, args: Sequence[Column]) -> Column | None:
    """tracr's LinearSequenceMap, a·x + b·y, as Python computes it on numbers: the same two
    products and sum in float64 (each exact on ints below 2^53), a float where a factor or an
    argument is one, else an int (a bool counts as 0 or 1); None for any other tracr function."""
    if fn.affine is None or len(args) != 2:
        return None
    a, b, _ = fn.affine
    x, y = args
    if (x.kind == STR).any() or (y.kind == STR).any():
        return None
    with np.errstate(all="ignore"):
        ax, by = a * x.num, b * y.num
        num = ax + by
    kind = np.maximum(np.maximum(x.kind, y.kind), INT)
    if type(a) is float or type(b) is float:
        kind = np.full(len(num), FLOAT, dtype=np.int8)
    ints = kind != FLOAT
    if (np.abs(ax[ints]) >= EXACT_INT).any() or (np.abs(by[ints]) >= EXACT_INT).any():
        return None  # an int product float64 no longer holds exactly: per row
    ok = x.ok & y.ok
    if not np.isfinite(num[ok]).all() or (np.abs(num[ok & ints]) >= EXACT_INT).any():
        return None
    return Column(num, kind.astype(np.int8), ok)


# -- the operators -------------------------------------------------------------------------------
# each takes its argument columns and returns (num, kind, defined) or None

_Result = tuple[np.ndarray, Any, Any] | None
_ALL = True


def _arith(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., _Result]:
    def apply(a: Column, b: Column) -> _Result:
        # bool with bool is an int in Python's + - *
        return fn(a.num, b.num), np.maximum(np.maximum(a.kind, b.kind), INT), _ALL

    return apply


def _divide(a: Column, b: Column) -> _Result:
    return a.num / b.num, FLOAT, b.num != 0


def _remainder(a: Column, b: Column) -> _Result:
    return np.remainder(a.num, b.num), np.maximum(np.maximum(a.kind, b.kind), INT), b.num != 0


def _compare(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., _Result]:
    def apply(a: Column, b: Column) -> _Result:
        return fn(a.num, b.num).astype(np.float64), BOOL, _ALL

    return apply


def _equal(a: Column, b: Column) -> np.ndarray:
    """Python's ==: strings by their text, numbers by value, a string never equals a number."""
    return (a.num == b.num) & ((a.kind == STR) == (b.kind == STR))


def _negate(a: Column) -> _Result:
    return -a.num, np.maximum(a.kind, INT), _ALL


def _plus_sign(a: Column) -> _Result:
    return a.num, np.maximum(a.kind, INT), _ALL


def _round(a: Column) -> _Result:
    return np.rint(a.num) + 0.0, INT, _ALL  # + 0.0: -0.0 is the int 0


def _truth(a: Column) -> np.ndarray:
    return a.num != 0


def _not(a: Column) -> _Result:
    return (~_truth(a)).astype(np.float64), BOOL, _ALL


def _indicator(a: Column) -> _Result:
    return _truth(a).astype(np.float64), INT, _ALL


def _both(a: Column, b: Column) -> _Result:
    return (_truth(a) & _truth(b)).astype(np.float64), BOOL, _ALL


def _either(a: Column, b: Column) -> _Result:
    return (_truth(a) | _truth(b)).astype(np.float64), BOOL, _ALL


def _is_equal(a: Column, b: Column) -> _Result:
    return _equal(a, b).astype(np.float64), BOOL, _ALL


def _is_not_equal(a: Column, b: Column) -> _Result:
    return (~_equal(a, b)).astype(np.float64), BOOL, _ALL


def _choose(cond: Column, then: Column, orelse: Column) -> _Result | None:
    if (cond.kind == STR).any():
        return None  # a string's truth is its length
    pick = _truth(cond)
    return np.where(pick, then.num, orelse.num), np.where(pick, then.kind, orelse.kind), _ALL


def _equal_indicator(a: Column, b: Column) -> _Result:
    return _equal(a, b).astype(np.float64), INT, _ALL


def _positive(a: Column) -> _Result:
    return (a.num > 0).astype(np.float64), BOOL, _ALL


_OPS: dict[Callable[..., Any], Callable[..., _Result]] = {
    arithmetic.plus: _arith(np.add),
    operator.sub: _arith(np.subtract),
    arithmetic.times: _arith(np.multiply),
    operator.truediv: _divide,
    operator.mod: _remainder,
    operator.eq: _is_equal,
    operator.ne: _is_not_equal,
    operator.lt: _compare(np.less),
    operator.le: _compare(np.less_equal),
    operator.gt: _compare(np.greater),
    operator.ge: _compare(np.greater_equal),
    operator.neg: _negate,
    operator.pos: _plus_sign,
    round: _round,
    ops._not: _not,
    ops._indicator: _indicator,
    ops._both: _both,
    ops._either: _either,
    ops._choose: _choose,
    lookups._equal_indicator: _equal_indicator,
    lookups._positive: _positive,
}
# the operators computed here with strings among their arguments
_ON_STRINGS = {operator.eq, operator.ne, ops._choose, lookups._equal_indicator}

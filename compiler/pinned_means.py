"""Positional means whose selected keys include pinned ones: keys whose value set is one number.

A shifted copy holds its default before the shift (tracr's None stand-in, or a number default):
a prefix mean over it adds those keys' total to every sum, so its values are far fewer than any
mean of the width's values (`MeanValues.means_of`). `pinned_means` answers per (position,
length); `sums_exact` says where float64 adds copies of a number exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from compiler.blocks import Atom, is_number, sort_values
from compiler.graph import IRNode
from compiler.relations import Known

EXACT_SUMS = 2.0**53  # float64 sums of whole numbers below this are exact

# (values, count, node) -> every float64 sum of exactly count values (`MeanValues.sums_of`)
SumsOf = Callable[[Sequence[Atom], int, IRNode], set[float] | None]


def pinned_means(
    known: Known, selector: int, sop: int, node: IRNode, sums_of: SumsOf
) -> Callable[[int, int], tuple[Atom, ...] | None] | None:
    """Where positions decide the selector and `sop` has a relation of numbers that float64 adds
    exactly (`sums_exact_of`: whole numbers, halves, quarters...): (i, n) -> the means of the keys
    selected there, a key whose set is one number adding it to every sum (a shifted copy before
    its shift holds the default: the mean of 28 of them and a bool is not any mean of 29 values);
    None where no selected key's set is one number (`means_of` over the width is as tight).
    Exact sums do not depend on the order of the adds, so each sum is the pinned keys' total plus
    a sum of the others (their sets' union), as the interpreter's sum in key order gives it. Not
    where a sum rounds (0.1, 1/3: the total depends on where the pinned keys fall among the
    others): the caller takes every mean of the width's values."""
    source = known.relation[sop]
    if source is None or not sums_exact_of(known.values[sop], known.n_max):
        return None
    if not any(len(vs) == 1 for vs in source.values()):
        return None  # (cheap: no key is ever pinned)
    rows: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None] = {}
    found: dict[tuple[float, int, tuple[int, ...], int], tuple[Atom, ...]] = {}
    numbered: dict[int, int] = {}  # a set's id -> its number in `sets`
    sets: list[tuple[Atom, ...]] = []

    def at(i: int, n: int) -> tuple[Atom, ...] | None:
        if n not in rows:
            matrix = known.matrix(selector, n)  # known: the selector's widths are
            assert matrix is not None
            at_n = [source[(j, n)] for j in range(n)]
            for vs in at_n:
                if id(vs) not in numbered:
                    numbered[id(vs)] = len(sets)
                    sets.append(vs)
            one = np.array([len(vs) == 1 for vs in at_n])
            value = np.array([float(vs[0]) if len(vs) == 1 else 0.0 for vs in at_n])
            which = np.array([numbered[id(vs)] for vs in at_n])
            rows[n] = (matrix, one, value, which) if one.any() else None
        here = rows[n]
        if here is None:
            return None
        matrix, one, value, which = here
        keys = matrix[i]
        if not (keys & one).any():
            return None
        fixed = float(value[keys & one].sum())  # exact (`sums_exact_of`), in any order
        free = which[keys & ~one]
        ids = tuple(np.unique(free).tolist())
        w = int(keys.sum())
        key = (fixed, len(free), ids, w)
        if key not in found:
            union = sort_values({float(v) for k in ids for v in sets[k]})
            sums = sums_of(union, len(free), node) if len(free) else {0.0}
            found[key] = known.intern([(fixed + a) / w for a in sums or ()])
        return found[key]

    return at


def sums_exact_of(values: Sequence[Atom], n: int) -> bool:
    """Whether float64 adds any `n` or fewer of `values` (repeats allowed) exactly, in any order:
    each is a multiple of 2^-e (e the largest exponent of their denominators, all powers of two),
    and n times the largest in units of 2^-e stays below 2^53, so every partial sum is such a
    multiple that a float64 holds. Whole numbers below EXACT_SUMS / n, and 0.5 or 0.25 among
    them; not 0.1 (3602879701896397 / 2^55: three of them round) nor bools (a bool among numbers
    is averaged otherwise)."""
    ratios = []
    for v in values:
        if not is_number(v):
            return False
        try:
            as_float = float(v)
        except OverflowError:
            return False
        if as_float != v or not math.isfinite(as_float):
            return False  # (an int float64 rounds)
        ratios.append(as_float.as_integer_ratio())
    e = max((d.bit_length() - 1 for _, d in ratios), default=0)
    top = max((abs(m) << (e - (d.bit_length() - 1)) for m, d in ratios), default=0)
    return top * n < EXACT_SUMS


def sums_exact(value: Atom, n: int) -> bool:
    """Whether adding up to `n` copies of `value` one by one in float64 is exact, so that their
    mean is `float(value)` itself: every partial sum j * value (j <= n) must be a float64, which
    holds where value's odd significand times n stays below 2^53 (whole numbers below EXACT_SUMS
    / n, and 1.5 or 2.25 too, not 0.1: sum([0.1] * 3) / 3 is 0.10000000000000002). Not -0.0:
    the sum starts at the int 0, and 0 + -0.0 is 0.0."""
    try:
        as_float = float(value)
    except OverflowError:
        return False
    if as_float != value or not math.isfinite(as_float * n):
        return False
    numerator = abs(as_float.as_integer_ratio()[0])
    if numerator == 0:
        return math.copysign(1.0, as_float) > 0
    odd = numerator >> ((numerator & -numerator).bit_length() - 1)
    return odd * n < EXACT_SUMS


def copy_means(values: Sequence[Atom], n: int) -> list[float] | None:
    """The means of 2..n copies of each of `values` (numbers), as the interpreter computes them
    (one add at a time from 0, then a division): `float(v)` itself where `sums_exact`, else each
    count's too (ten copies of a third average to 0.33333333333333337). The copies of one number
    in its other forms (7 and 7.0) add up to these floats too. An int's copies the interpreter
    sums exactly: as float64s in one product (|v| * n below 2^53: `float(v)`), else as Python
    ints, whose sum k * v rounds to a float before the division (`rasp.sops`: 8943887316608867
    nine times averages to 8943887316608868.0), so each count's `float(k * v) / k` is here too;
    so for an int no float64 holds (past 2^53), whose copies a float column adds as float(v).
    None where a value is not finite, or a float differs from itself (nan)."""
    found: list[float] = []
    for v in values:
        as_float = float(v)  # type: ignore[arg-type]
        whole = isinstance(v, int) and not isinstance(v, bool)
        if not math.isfinite(as_float) or (as_float != v and not whole):
            return None
        if as_float == v:  # (of an int's copies: the ints add up exactly)
            found.append(as_float)
        if sums_exact(v, n):
            continue
        total = 0 + as_float  # from 0, as the interpreter adds: -0.0 gives 0.0
        for k in range(2, n + 1):
            total = total + as_float
            found.append(total / k)
            if whole:
                found.append(float(k * v) / k)  # type: ignore[operator]
    return found

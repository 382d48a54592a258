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
    """Where positions decide the selector and `sop` has a relation of whole numbers: (i, n)
    -> the means of the keys selected there, a key whose set is one number adding it to every
    sum (a shifted copy before its shift holds the default: the mean of 28 of them and a bool
    is not any mean of 29 values); None where no selected key's set is one number (`means_of`
    over the width is as tight). Whole numbers sum exactly in any order, so each sum is the
    pinned keys' total plus a sum of the others (their sets' union)."""
    source = known.relation[sop]
    if source is None or not all(
        is_number(v) and float(v).is_integer() and abs(v) * known.n_max < EXACT_SUMS
        for v in known.values[sop]
    ):
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
        fixed = float(value[keys & one].sum())  # whole numbers: exact
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

"""Per-position output grids: the denominators a numerical output decodes with.

A mean of whole numbers over a selection whose width depends on the position alone
(`aggregate(select(indices, indices, <=), x)`: exactly i + 1 keys at position i) is at position i a
multiple of 1/(i+1). Listed together, the values of every position lie far closer than float32
resolves (254/255 and 255/256 differ by 1.5e-5, less than twice the error of a mean over 256
keys), but at one position they are 1/(i+1) apart. The file then gives one denominator per
position (`output.denominators`, format version 4) and the runtime decodes position i as
round(x * d_i) / d_i: a margin of 1/(2 d_i) instead of half the smallest gap of the whole list.

The denominators come from the value analysis's per-(position, length) relation, so every value the
output can take at position i is on its grid (up to float64 noise: the interpreter's mean of
floats may differ from k/d in the last bit, which outputs compared by value ignore).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, is_number
from compiler.fits import FLOAT64_NOISE
from compiler.relations import Relation

# A grid finer than this is no grid: its margin would be below float32's reach anyway.
MAX_DENOMINATOR = 1 << 20
MAX_OUTPUT_VALUES = 10_000  # a numerical output lists its values (for snapping) up to this many


def output_grid(
    relation: Relation | None, values: Sequence[Atom], max_len: int
) -> tuple[int, ...] | None:
    """The per-position denominators a numerical output decodes with, or None where listing its
    `values` (noise twins merged) separates them at least as well: a grid is used only where it is
    coarser than the list's smallest gap, or the list would be too long to write."""
    denominators = output_denominators(relation, max_len)
    if denominators is None:
        return None
    numbers = np.unique(np.array([float(v) for v in values if is_number(v)], dtype=np.float64))
    if len(numbers) <= MAX_OUTPUT_VALUES:
        smallest_gap = float(np.diff(numbers).min()) if len(numbers) > 1 else math.inf
        if smallest_gap >= 1 / max(denominators):
            return None
    return denominators


def output_denominators(relation: Relation | None, max_len: int) -> tuple[int, ...] | None:
    """d_i for program positions 0..max_len-1 such that every value the output can take at
    position i (any length) is k / d_i for a whole k; None where there is no relation, a value is
    not a number, or no denominator up to MAX_DENOMINATOR fits. A grid of whole numbers only
    (every d_i = 1) is None too: listed values snap those as well."""
    if relation is None:
        return None
    sets_at: list[dict[int, tuple[Atom, ...]]] = [{} for _ in range(max_len)]
    distinct: dict[int, tuple[Atom, ...]] = {}
    for (i, _n), values in relation.items():
        sets_at[i][id(values)] = values  # interned tuples: each distinct set once per position
        distinct[id(values)] = values
    floats: set[float] = set()
    for values in distinct.values():
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return None  # a decoded number cannot tell a bool from 0/1; strings: no grid
            if isinstance(v, float):
                floats.add(v)
    if not floats:
        return None  # whole numbers only: every d_i would be 1
    found = denominators_of(np.array(sorted(floats), dtype=np.float64))
    if (found == 0).any():
        return None
    denominator_of = dict(zip(sorted(floats), found.tolist(), strict=True))
    out: list[int] = []
    for sets in sets_at:
        d = 1
        for values in sets.values():
            for v in values:
                if isinstance(v, float):
                    d = math.lcm(d, denominator_of[v])
        if d > MAX_DENOMINATOR:
            return None
        out.append(d)
    return tuple(out) if any(d > 1 for d in out) else None


def denominators_of(values: np.ndarray) -> np.ndarray:
    """Per value, the least denominator q <= MAX_DENOMINATOR of a fraction p / q equal to it up to
    float64 noise (relative: 1e-12 is no noisy 0), or 0 where there is none; [P] int64.

    The continued-fraction convergents of all values at once: the fraction a mean k / w rounds
    to is one of them, with the least denominator that reaches it."""
    v = values.astype(np.float64)  # [P]
    tol = FLOAT64_NOISE * np.abs(v)
    found = np.zeros(v.shape, dtype=np.int64)
    done = ~np.isfinite(v)
    x = np.where(done, 0.0, v)
    h_prev, h = np.zeros_like(v), np.ones_like(v)  # numerators of the last two convergents
    k_prev, k = np.ones_like(v), np.zeros_like(v)  # denominators
    for _ in range(64):  # a float64 has at most about 40 terms
        a = np.floor(x)
        h_prev, h = h, a * h + h_prev
        k_prev, k = k, a * k + k_prev
        hit = ~done & (k <= MAX_DENOMINATOR) & (np.abs(h / np.maximum(k, 1) - v) <= tol)
        found[hit] = k[hit].astype(np.int64)
        rest = x - a
        done |= hit | (k > MAX_DENOMINATOR) | (rest == 0)
        if done.all():
            break
        x = np.where(done, 0.0, 1.0 / np.where(done, 1.0, rest))
    return found

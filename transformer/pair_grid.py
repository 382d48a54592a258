"""A per-(position, length) output grid (format version 10): `output.pair_denominators` lists
max_len (max_len + 1) / 2 denominators, position i of an input of length n reading entry
n (n - 1) / 2 + i. The decoder reads them from a `[(max_len + 1) * max_len]` table, row n holding
length n's positions, indexed by length * max_len + position (1 past the input's end and in row
0, which padding and empty rows read)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def pair_width(denominators: Sequence[int]) -> int:
    """max_len, from the grid's max_len (max_len + 1) / 2 entries."""
    return (math.isqrt(8 * len(denominators) + 1) - 1) // 2


def pair_table(denominators: Sequence[int]) -> np.ndarray:
    """The flat float64 table `[(max_len + 1) * max_len]` the decoder indexes (module doc)."""
    width = pair_width(denominators)
    table = np.ones((width + 1, width), dtype=np.float64)
    for n in range(1, width + 1):
        table[n, :n] = denominators[n * (n - 1) // 2 : n * (n + 1) // 2]
    return table.reshape(-1)

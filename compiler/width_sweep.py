"""A selector's widths at every length 1..N from its cases at N alone, for prefix-stable selectors.

Where a selector's cases at length n are its cases at N cut to [:n, :n]
(`SelectorCases.prefix_stable`), length n adds one key column and one query row to length n - 1:
the row ranges, whether the rows are decided and whether any key after its query can be selected
follow from that row and column, O(n) per length instead of O(n^2) (sort at N = 1024 spent 7 s of
its 16 s compile on [n, n] arrays built and summed at every length).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from compiler.selector_cases import Cases


@dataclass(frozen=True)
class Sweep:
    """What `values._Inference.selector_widths` records, at every length 1..N."""

    lows: dict[int, np.ndarray]  # n -> [n]: at least how many keys each query selects
    highs: dict[int, np.ndarray]  # n -> [n]: at most
    decided: bool  # every row of every length decided (then lows == highs)
    some_row: bool  # some row of some length decided
    lower: bool  # no query can select a key after it
    diagonal: bool  # each query must select its own key
    least_widths: bool  # every query selects at least one key


def sweep(cases: Cases, n_max: int) -> Sweep:
    """The per-length facts of a prefix-stable selector from its `cases` at length n_max, as the
    per-length loop over `cases` cut to [:n, :n] finds them."""
    can, must = (np.broadcast_to(c, (n_max, n_max)) for c in cases)
    lows: dict[int, np.ndarray] = {}
    highs: dict[int, np.ndarray] = {}
    decided_all, some_row, lower, diagonal, least = True, False, True, True, True
    low, high = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    for n in range(1, n_max + 1):
        j = n - 1  # the new key column and query row
        low = np.append(low + must[:j, j], np.count_nonzero(must[j, :n]))
        high = np.append(high + can[:j, j], np.count_nonzero(can[j, :n]))
        lows[n], highs[n] = low, high
        if decided_all:
            decided_all = np.array_equal(can[j, :n], must[j, :n]) and np.array_equal(
                can[:j, j], must[:j, j]
            )
        some_row = some_row or decided_all or bool((low == high).any())
        lower = lower and not can[:j, j].any()
        diagonal = diagonal and bool(must[j, j])
        least = least and int(low.min()) >= 1
    return Sweep(lows, highs, decided_all, some_row, lower, diagonal, least)

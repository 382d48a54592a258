"""A numerical output's decoding grid: the denominators its values are multiples of, by position,
length, distance from the end or (position, length) (chosen by compiler.grid, written to the
file's `output` by assembly, read by the runtime's decoder)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class GridAxis(Enum):
    """What a grid's denominators are indexed by."""

    POSITION = "position"  # d_i for program positions 0..max_len-1 (`output.denominators`)
    LENGTH = "length"  # e_n for input lengths 1..max_len (`output.length_denominators`)
    END = "end"  # per distance from the end k = n - 1 - i, 0..max_len-1 (`output.end_denominators`)
    # per (position i, length n), entry n(n - 1)/2 + i (`output.pair_denominators`): where the
    # others find none (a count over the length minus a positional mean, k/n - f(i))
    PAIR = "pair"


@dataclass(frozen=True)
class OutputGrid:
    """A numerical output's decoding grid (compiler.grid)."""

    axis: GridAxis
    denominators: tuple[int, ...]  # [max_len]; PAIR: [max_len (max_len + 1) / 2]
    # program positions whose every value is an int at every length, where the grid's
    # denominators there are not all 1 (a length grid: `f if indices > 0 else 0` at position 0)
    int_positions: tuple[int, ...] = ()

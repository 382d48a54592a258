"""Snapping a numerical output's logit to the nearest value the file lists (docs/format.md,
`output.values`), in numpy on the CPU and in torch where the logits are.

    table = SnapTable.of((0, 0.5, 1))
    table.nearest(np.array([0.2, 0.8]))        # indices into the values: [0, 2]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # torch is imported where a model runs: reading a file's metadata needs none
    import torch
    from torch import Tensor


@dataclass(frozen=True)
class SnapTable:
    """The distinct listed numbers, sorted (`grid`); for each, the index of the value it decodes
    to (`chosen`) and that value's tie rank (`ranks`); and each listed value as a number
    (`numbers`, by index: the value a code stands for).

    Where a number is listed both as an int and as a float (0 and 0.0: one value passed through,
    or a mean of several), the int wins: whole results of RASP programs are mostly ints (round, %,
    counts), and the model reads both alike. A tie between two numbers (an input exactly between
    them) goes to the int, then to the value listed first, so the result is deterministic.
    """

    grid: np.ndarray  # [k] float64
    chosen: np.ndarray  # [k] int64
    ranks: np.ndarray  # [k] int64
    numbers: np.ndarray  # [len(values)] float64
    # the arrays copied to a device once, not per batch (a copy would wait for the GPU)
    _on: dict[Any, tuple[Tensor, ...]] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def of(values: Sequence[Any]) -> SnapTable:
        best: dict[float, tuple[tuple[bool, int], int]] = {}
        for index, value in enumerate(values):
            rank = (isinstance(value, float), index)
            number = float(value)
            if number not in best or rank < best[number][0]:
                best[number] = (rank, index)
        grid = np.array(sorted(best), dtype=np.float64)
        chosen = np.array([best[x][1] for x in grid.tolist()], dtype=np.int64)
        # one integer that orders the tie ranks: floats after ints, then list order
        ranks = np.array(
            [best[x][0][0] * len(values) + best[x][0][1] for x in grid.tolist()], dtype=np.int64
        )
        numbers = np.array([float(v) for v in values], dtype=np.float64)
        return SnapTable(grid, chosen, ranks, numbers)

    def nearest(self, numbers: np.ndarray) -> np.ndarray:
        """Index into the values of the nearest listed value to each number (ties as above)."""
        grid, chosen, ranks = self.grid, self.chosen, self.ranks
        if len(grid) == 1:
            return np.zeros(numbers.shape, dtype=np.int64) + chosen[0]
        right = np.clip(np.searchsorted(grid, numbers), 1, len(grid) - 1)
        left = right - 1
        d_left = np.abs(numbers - grid[left])
        d_right = np.abs(grid[right] - numbers)
        take_left = (d_left < d_right) | ((d_left == d_right) & (ranks[left] < ranks[right]))
        return chosen[np.where(take_left, left, right)]

    def nearest_on(self, numbers: Tensor) -> Tensor:
        """`nearest` in torch, on the numbers' device."""
        import torch

        grid, chosen, ranks, _ = self.on(numbers.device)
        if len(grid) == 1:
            return torch.zeros(numbers.shape, dtype=torch.int64, device=numbers.device) + chosen[0]
        right = torch.searchsorted(grid, numbers).clamp(1, len(grid) - 1)
        left = right - 1
        d_left = (numbers - grid[left]).abs()
        d_right = (grid[right] - numbers).abs()
        take_left = (d_left < d_right) | ((d_left == d_right) & (ranks[left] < ranks[right]))
        return chosen[torch.where(take_left, left, right)]

    def on(self, device: torch.device) -> tuple[Tensor, ...]:
        """(grid, chosen, ranks, numbers) on `device`."""
        import torch

        if device not in self._on:
            arrays = (self.grid, self.chosen, self.ranks, self.numbers)
            self._on[device] = tuple(torch.from_numpy(a).to(device) for a in arrays)
        return self._on[device]

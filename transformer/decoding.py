"""Logits -> program values, as the file's `output` entry says (docs/format.md).

`categorical`: `values[k]` is the value of logit column k; each position decodes by argmax.
`numerical`: one logit column holds the value; it snaps to the nearest listed value when the file
lists them, otherwise `ints` round (half to even, like RASP's `round`), `bools` are `logit > 0.5`,
and `floats` are the logit itself. Values are always plain Python ints, floats, strs or bools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property

import numpy as np

from transformer.errors import ModelOutputError
from transformer.vocab import Atom


class OutputEncoding(Enum):
    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


class OutputType(Enum):
    """The interpreter's label for the output sequence."""

    INTS = "ints"
    FLOATS = "floats"
    STRINGS = "strings"
    BOOLS = "bools"


@dataclass(frozen=True)
class OutputSpec:
    """How to read the program's output off the logits."""

    name: str
    encoding: OutputEncoding
    type: OutputType
    values: tuple[Atom, ...] | None  # required for categorical; optional for numerical

    def decode(self, logits: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Decode `logits [batch, pos, d_vocab_out]` at model positions 1..n of each input."""
        at_tokens = np.asarray(logits)[
            :, 1 : 1 + max(lengths, default=0)
        ]  # [batch, n, d_vocab_out]
        if self.encoding is OutputEncoding.CATEGORICAL:
            if not np.isfinite(at_tokens).all():  # argmax would silently pick a NaN column
                raise ModelOutputError(
                    f"the model computed NaN or infinite logits for '{self.name}'"
                )
            return self.from_columns(at_tokens.argmax(axis=-1), lengths)
        return self.from_numbers(at_tokens[..., 0].astype(np.float64), lengths)

    def from_columns(self, columns: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Categorical: `columns [batch, n]` (the argmax logit column at program positions)."""
        values = self._value_array()
        return _rows(values[columns], lengths)

    def from_numbers(self, numbers: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Numerical: `numbers [batch, n]` (float64 logit column 0 at program positions)."""
        for row, n in zip(numbers, lengths, strict=True):
            bad = ~np.isfinite(row[:n])
            if bad.any():
                x = float(row[:n][bad][0])
                raise ModelOutputError(f"the model computed {x} for output '{self.name}'")
        if self.values is not None:
            return _rows(self._value_array()[self._nearest(numbers)], lengths)
        if self.type is OutputType.INTS:
            if np.abs(numbers).max(initial=0.0) < 2.0**53:
                # np.rint rounds half to even, like Python's round()
                return _rows(np.rint(numbers).astype(np.int64), lengths)
            return [
                [round(float(x)) for x in row[:n]] for row, n in zip(numbers, lengths, strict=True)
            ]
        if self.type is OutputType.BOOLS:
            return _rows(numbers > 0.5, lengths)
        return _rows(numbers, lengths)

    # -- snapping to the listed values -------------------------------------------------------------

    @cached_property
    def _snap_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct listed numbers, sorted; for each, the index of the value it decodes to and
        that value's tie rank.

        Where a number is listed both as an int and as a float (0 and 0.0: one value passed
        through, or a mean of several), the int wins: whole results of RASP programs are mostly
        ints (round, %, counts), and the model reads both alike. A tie between two numbers (an
        input exactly between them) goes to the int, then to the value listed first, so the result
        is deterministic.
        """
        values = self.values or ()
        best: dict[float, tuple[tuple[bool, int], int]] = {}
        for index, value in enumerate(values):
            rank = (isinstance(value, float), index)
            number = float(value)  # type: ignore[arg-type]
            if number not in best or rank < best[number][0]:
                best[number] = (rank, index)
        grid = np.array(sorted(best), dtype=np.float64)
        chosen = np.array([best[x][1] for x in grid.tolist()], dtype=np.int64)
        # one integer that orders the tie ranks: floats after ints, then list order
        ranks = np.array(
            [best[x][0][0] * len(values) + best[x][0][1] for x in grid.tolist()], dtype=np.int64
        )
        return grid, chosen, ranks

    def _nearest(self, numbers: np.ndarray) -> np.ndarray:
        """Index into `values` of the nearest listed value to each number (ties as above)."""
        grid, chosen, ranks = self._snap_table
        right = np.clip(np.searchsorted(grid, numbers), 1, len(grid) - 1) if len(grid) > 1 else None
        if right is None:
            return np.zeros(numbers.shape, dtype=np.int64) + chosen[0]
        left = right - 1
        d_left = np.abs(numbers - grid[left])
        d_right = np.abs(grid[right] - numbers)
        take_left = (d_left < d_right) | ((d_left == d_right) & (ranks[left] < ranks[right]))
        return chosen[np.where(take_left, left, right)]

    @cached_property
    def _value_object_array(self) -> np.ndarray:
        array = np.empty(len(self.values or ()), dtype=object)
        array[:] = list(self.values or ())
        return array

    def _value_array(self) -> np.ndarray:
        return self._value_object_array


def _rows(table: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
    """Row b of `table [batch, n]` cut to its input's length, as plain Python values."""
    return [row[:n].tolist() for row, n in zip(table, lengths, strict=True)]

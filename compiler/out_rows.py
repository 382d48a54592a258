"""An MLP's W_out kept as its entries until something reads it whole (`MLPSpec.W_out`).

A step MLP into a one-hot of thousands of values writes two columns per unit: twins seed 409 at
N = 24 built three dense 8281 x 4141 W_out (274 MB each) for builds the compile then discarded
(2.5 s apiece). `OutRows` keeps the entries instead, and `dense` gives back the very array
`np.array(rows)` gave, bit for bit: every entry that differs bitwise from its row's zero (+0.0,
or -0.0 in a row written negated, `-delta`) is kept, so NaN, infinities and the sign of every
zero survive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class OutRows:
    """[rows, width] float64: zeros (-0.0 in `negative_zero` rows), then `values` at
    (`units`, `columns`), in row-major order."""

    rows: int
    width: int
    units: np.ndarray  # int64 [entries]
    columns: np.ndarray  # int64 [entries]
    values: np.ndarray  # float64 [entries]
    negative_zero: np.ndarray  # int64: rows whose zeros are -0.0

    @staticmethod
    def of(rows: Sequence[Sequence[float] | np.ndarray], width: int) -> OutRows:
        units, columns, values, negative = [], [], [], []
        for r, row in enumerate(rows):
            x = np.asarray(row, dtype=float).reshape(-1)
            if x.size != width:
                raise ValueError(f"a row of {x.size} numbers where W_out has {width}")
            zero = x == 0.0  # (NaN is not)
            signed = zero & np.signbit(x)
            flipped = 2 * int(np.count_nonzero(signed)) > int(np.count_nonzero(zero))
            kept = np.flatnonzero(~zero | (signed != flipped))  # what differs from the row's zero
            if flipped:
                negative.append(r)
            units.append(np.full(kept.size, r, dtype=np.int64))
            columns.append(kept)
            values.append(x[kept])
        return OutRows(
            len(rows),
            width,
            _joined(units, np.int64),
            _joined(columns, np.int64),
            _joined(values, np.float64),
            np.array(negative, dtype=np.int64),
        )

    def nonzero(self) -> np.ndarray:
        """The non-zero entries (NaN among them) in the order `W[W != 0]` gives them."""
        return self.values[self.values != 0.0]

    def dense(self) -> np.ndarray:
        out = np.zeros((self.rows, self.width))
        out[self.negative_zero] = -0.0
        out[self.units, self.columns] = self.values
        return out


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)

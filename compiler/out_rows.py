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
        # a block of rows at a time, each block one array: numpy calls per row cost ~10 us,
        # 40 times np.array's cost on a step MLP of thousands of narrow rows
        step = max(1, _BLOCK // max(1, width))
        for lo in range(0, len(rows), step):
            x = _block(rows[lo : lo + step], width)
            zero = x == 0.0  # (NaN is not)
            signed = zero & np.signbit(x)
            # a row's zero is -0.0 where most of its zeros are (a row written as -delta)
            flipped = 2 * np.count_nonzero(signed, axis=1) > np.count_nonzero(zero, axis=1)
            # what differs from its row's zero, in row-major order (flat: 2-D nonzero is slower)
            kept = np.flatnonzero(~zero | (signed != flipped[:, None]))
            unit, column = np.divmod(kept, width)
            units.append(unit + lo)
            columns.append(column)
            values.append(x.reshape(-1)[kept])
            negative.append(np.flatnonzero(flipped).astype(np.int64) + lo)
        return OutRows(
            len(rows),
            width,
            _joined(units, np.int64),
            _joined(columns, np.int64),
            _joined(values, np.float64),
            _joined(negative, np.int64),
        )

    def nonzero(self) -> np.ndarray:
        """The non-zero entries (NaN among them) in the order `W[W != 0]` gives them."""
        return self.values[self.values != 0.0]

    def dense(self) -> np.ndarray:
        out = np.zeros((self.rows, self.width))
        out[self.negative_zero] = -0.0
        out[self.units, self.columns] = self.values
        return out


_BLOCK = 1 << 20  # entries stacked at once: a block, not the whole W_out (that is the point)


def _block(rows: Sequence[Sequence[float] | np.ndarray], width: int) -> np.ndarray:
    """[len(rows), width] float64, as `np.array(rows)` gives it."""
    sizes = {int(np.size(row)) for row in rows}
    if sizes - {width}:
        raise ValueError(f"a row of {min(sizes - {width})} numbers where W_out has {width}")
    return np.array(rows, dtype=float).reshape(len(rows), width)


def _joined(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)

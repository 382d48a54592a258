"""Logits -> program values, as the file's `output` entry says (docs/format.md).

`categorical`: `values[k]` is the value of logit column k; each position decodes by argmax.
`numerical`: one logit column holds the value; it snaps to the nearest listed value when the file
lists them, otherwise `ints` round (half to even, like RASP's `round`), `bools` are `logit > 0.5`,
and `floats` are the logit itself. Values are always plain Python ints, floats, strs or bools.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

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
        outputs = []
        for row, n in zip(logits, lengths, strict=True):
            at_tokens = row[1 : 1 + n]  # [n, d_vocab_out]: program position i is model position i+1
            if self.encoding is OutputEncoding.CATEGORICAL:
                if not np.isfinite(at_tokens).all():  # argmax would silently pick a NaN column
                    raise ModelOutputError(
                        f"the model computed NaN or infinite logits for '{self.name}'"
                    )
                values = self.values or ()  # never empty here: checked when the file was read
                outputs.append([values[int(k)] for k in at_tokens.argmax(axis=-1)])
            else:
                outputs.append([self._decode_number(float(x)) for x in at_tokens[:, 0]])
        return outputs

    def _decode_number(self, x: float) -> Atom:
        if not math.isfinite(x):
            raise ModelOutputError(f"the model computed {x} for output '{self.name}'")
        if self.values is not None:
            # Nearest listed value. Where a number is listed both as an int and as a float (0 and
            # 0.0: one value passed through, or a mean of several), the int wins: whole results of
            # RASP programs are mostly ints (round, %, counts), and the model reads both alike. Any
            # other tie goes to the first listed value, so the result is deterministic.
            return min(
                self.values,
                key=lambda value: (abs(float(value) - x), isinstance(value, float)),  # type: ignore[arg-type]
            )
        if self.type is OutputType.INTS:
            return round(x)
        if self.type is OutputType.BOOLS:
            return x > 0.5
        return x

"""The certifier's state as it walks a model, sublayer by sublayer (see `compiler.certify`).

`Walk` holds what every check reads and updates: the weights (float64 copies of the float32
arrays), the reach, per residual dimension a bound on |float32 - exact| at real positions
(`bounds.DimErrors`), the BOS and PAD residuals evaluated concretely with their error bounds
(`Specials`), and the checks so far. The attention and MLP checks (`certify_attention`,
`certify_mlp`) and the embedding and decoder checks (`certify`) are functions of a `Walk`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from compiler.bounds import OVERFLOW, DimErrors, ReadError
from compiler.certificate import Check
from compiler.reach import HeadReach, Reach
from rasp.named_text import stem

MAX_STATES = 4_000_000  # query x key pairs (or points x units) per chunk of one array


@dataclass
class Specials:
    """BOS (row 0) and PAD at positions 1..N: exact residuals and their error bounds."""

    x: np.ndarray  # [1 + N, d_model]
    e: np.ndarray


class OutOfRange(ReadError):
    """A residual dimension may pass float32's range (`Walk.check_range`). Past a decision that
    failed, it is that failure's error bound carried on (a softmax whose margin did not hold
    weighs its keys anyhow): `certify` then reports the located failure, not the range.
    Otherwise it is the error bound of the block that wrote the dimension (`as_check`)."""

    def __init__(self, message: str, sublayer: str, label: str, value: float, at: str) -> None:
        super().__init__(message)
        self.sublayer, self.label, self.value, self.at = sublayer, label, value, at

    def as_check(self, reach: Reach) -> Check | None:
        """The overflow as a failed decision of the head or MLP of `sublayer` that wrote the
        dimension, located at its s-op: its bound is past float32's range, as no margin allows
        (a width head whose scores carry error 50 spreads its weights by e^100: 2.7e43 at
        N = 12, where at N = 10 the MLP after it failed, located). None: the embedding's."""
        base = stem(self.label)
        blocks = [*reach.heads, *reach.mlps]
        for block in blocks:
            if block.layer == _layer(self.sublayer) and base in block.name.split(", "):
                kind = "attn" if isinstance(block, HeadReach) else "mlp"
                if self.sublayer.endswith(kind):
                    where = f"residual dimension {self.label!r} at {self.at}"
                    return Check(
                        self.sublayer, block.name, block.op, "range", OVERFLOW, self.value, where,
                        self.value,
                    )  # fmt: skip
        return None


class OverBudget(Exception):
    """A block has more reachable states than the certifier checks: refused, located."""

    def __init__(self, check: Check) -> None:
        super().__init__(check.where)
        self.check = check

    @staticmethod
    def softmax(where: str, head: HeadReach, reason: str) -> OverBudget:
        """A head whose softmax check would take more work than the certifier does."""
        return OverBudget(Check(where, head.name, head.op, "softmax", -math.inf, 0.0, reason, 0.0))


@dataclass
class Walk:
    w: Mapping[str, np.ndarray]  # the model's float32 weights as float64 (Float64Weights)
    reach: Reach
    residual: list[str]  # residual labels; "one", "bos" and "pad" among them
    max_len: int
    err: DimErrors  # at real positions, after the sublayers walked so far
    special: Specials  # BOS and PAD, after the sublayers walked so far
    checks: list[Check]
    one: int  # the indices of the "one", "bos" and "pad" dimensions
    bos: int
    pad: int
    # residual index -> the block that wrote it: each dimension is written once, by one block
    # (two blocks adding 1 each into one one-hot column would be right block by block, wrong summed)
    writers: dict[int, str] = field(default_factory=dict)

    def claim(self, dims: Iterable[int], who: str) -> None:
        for d in dims:
            d = int(d)
            if d in self.writers and self.writers[d] != who:
                raise ReadError(
                    f"{who} writes residual dimension {self.residual[d]!r}, which "
                    f"{self.writers[d]} wrote already"
                )
            self.writers[d] = who

    def check_range(self, where: str) -> None:
        """Every residual dimension stays below OVERFLOW (half of float32's largest number) at
        every position, error included: past it a float32 sum may be inf, and every product
        reading the dimension NaN, a zero weight's too (inf·0), whatever the decisions' margins
        say (a head's W_Q and W_K scaled by 1e18 re-checked as proved while the runtime computed
        NaN logits)."""
        real = self.err.magnitude + self.err.worst()
        special = (np.abs(self.special.x) + self.special.e).max(axis=0, initial=0.0)
        for values, at in ((real, "a real position"), (special, "BOS or PAD")):
            bad = np.flatnonzero(~(values < OVERFLOW))  # NaN too
            if bad.size:
                d = int(bad[0])
                raise OutOfRange(
                    f"{where} can leave residual dimension {self.residual[d]!r} at "
                    f"{float(values[d]):.3g} at {at}, past float32's range (3.4e38 at most; "
                    f"{OVERFLOW:.3g} allowed)",
                    where,
                    self.residual[d],
                    float(values[d]),
                    at,
                )

    def check_read(self, readings: Iterable[int], who: str) -> None:
        """A block reads only dimensions the embedding or an earlier sublayer wrote: the walk
        evaluates it at its readings' values, which a dimension written later (or by a block of
        its own sublayer, which runs beside it) does not hold yet."""
        for r in readings:
            reading = self.reach.readings[r]
            for terms in reading.terms:
                for d, _ in terms:
                    if d != self.one and int(d) not in self.writers:
                        raise ReadError(
                            f"{who} reads {reading.name!r} at residual dimension "
                            f"{self.residual[d]!r}, which neither the embedding nor an earlier "
                            "sublayer writes"
                        )

    def check_untouched(
        self, w_out: np.ndarray, written: np.ndarray, where: str, b_out: np.ndarray | None = None
    ) -> None:
        """A sublayer writes only the dimensions the reach says it writes, never one/bos/pad.
        `b_out`: its output bias, which the runtime adds at every position whatever the units or
        heads write (an MLP part checks it only at its own output's dimensions)."""
        # max |w| > 0 (a layer may have no heads or units; a NaN column's max is NaN, not > 0)
        # from two bool arrays, not a float64 |w_out| (0.17 GB for a 4,096-wide head)
        touched = (w_out != 0).any(axis=0) & ~np.isnan(w_out).any(axis=0)
        if b_out is not None:
            stray = (b_out != 0) & ~written
            if np.any(stray):
                d = int(np.flatnonzero(stray)[0])
                raise ReadError(
                    f"{where} has a non-zero b_out at residual dimension {self.residual[d]!r}, "
                    "which the reach does not say it writes"
                )
        if np.any(touched & ~written):
            d = int(np.flatnonzero(touched & ~written)[0])
            raise ReadError(
                f"{where} writes residual dimension {self.residual[d]!r}, "
                "which the reach does not say it writes"
            )
        for d in (self.one, self.bos, self.pad):
            if touched[d]:
                raise ReadError(f"{where} writes the {self.residual[d]!r} dimension")


def _layer(sublayer: str) -> int:
    """`layer 2 attn` -> 2 (-1 for the embedding's, which no block writes)."""
    words = sublayer.split()
    return int(words[1]) if len(words) == 3 and words[0] == "layer" else -1

"""The certificate's record: per block, the weakest decision (margin, bound, where), as stored in
a model file's metadata (`certificate`) and printed by `rasp show` / `rasp verify`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from compiler.bounds import U

# A key this far below the best score after errors gets softmax weight exactly 0 in float32:
# exp(-x) < 2**-150 for x > 103.98; the rest covers exp implementations' own error.
UNDERFLOW = 110.0


@dataclass(frozen=True)
class Check:
    """The weakest decision of one block: `margin` (how far the exact model is from the decision's
    edge), `bound` (the worst float32 error there) and where it is."""

    sublayer: str  # "layer 0 attn", "layer 0 mlp", "decoder"
    block: str  # the program variable(s) the block writes
    op: str
    kind: str  # "softmax", "relu", "argmax", "snap"; "range": a value past float32's range
    margin: float
    bound: float
    where: str
    max_bound: float = 0.0  # the largest error bound among the block's decisions

    @property
    def ratio(self) -> float:
        if self.bound == 0:  # exact: a margin below 0 fails however small (a softmax gap of -94)
            return -math.inf if self.margin < 0 else math.inf
        return self.margin / self.bound

    @property
    def ok(self) -> bool:
        if math.isnan(self.margin) or math.isnan(self.bound):
            return False  # a NaN proves nothing (and compares False with everything)
        # a ReLU whose input is exact (bound 0) is decided even at exactly 0: relu(0) = 0
        return self.margin > self.bound or (self.kind == "relu" and self.bound == 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "sublayer": self.sublayer,
            "block": self.block,
            "op": self.op,
            "kind": self.kind,
            "margin": _finite(self.margin),
            "bound": _finite(self.bound),
            "ratio": _finite(self.ratio),
            "max_bound": _finite(self.max_bound),
            "where": self.where,
        }

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Check:
        return Check(
            str(obj["sublayer"]),
            str(obj["block"]),
            str(obj["op"]),
            str(obj["kind"]),
            _from_finite(obj["margin"]),
            _from_finite(obj["bound"]),
            str(obj["where"]),
            _from_finite(obj.get("max_bound", 0.0)),
        )


@dataclass(frozen=True)
class Certificate:
    checks: tuple[Check, ...]
    errors: tuple[str, ...] = ()  # reasons the certifier could not even evaluate a block

    @property
    def ok(self) -> bool:
        return not self.errors and all(c.ok for c in self.checks)

    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def weakest(self) -> Check | None:
        # a failed decision first: an exact one can fail with ratio inf (margin 0, bound 0)
        return min(self.failures() or self.checks, key=lambda c: c.ratio, default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "u": U,
            "underflow": UNDERFLOW,
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "errors": list(self.errors),
        }

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Certificate:
        return Certificate(
            tuple(Check.from_json(c) for c in obj["checks"]),
            tuple(str(e) for e in obj.get("errors", [])),
        )


def _finite(x: float) -> float | str:
    # JSON has no inf or NaN: they travel as strings ("nan" too, so a NaN is not read back as -inf)
    if math.isnan(x):
        return "nan"
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _from_finite(x: Any) -> float:
    return float(x)

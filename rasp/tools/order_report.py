"""The evaluation-order sweep's report (`verify_orders` builds it, `verify` carries it, `verify_text`
renders it): a module of its own so that none of the three imports another back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunConfig:
    """One way of evaluating the model."""

    device: str  # "cpu" or "cuda"
    dtype: str  # "float32" or "float64"
    threads: int | None  # torch intra-op threads on CPU; None on CUDA
    batch_size: int  # 1: one input per forward

    def describe(self) -> str:
        threads = (
            "" if self.threads is None else f", {self.threads} thread{'s' * (self.threads > 1)}"
        )
        batch = "unbatched" if self.batch_size == 1 else f"batches of {self.batch_size}"
        return f"{self.device} {self.dtype}{threads}, {batch}"


@dataclass(frozen=True)
class Margin:
    """The smallest decoder margin seen, and the first run, input and position showing it."""

    value: float
    config: RunConfig
    tokens: tuple[Any, ...]
    position: int
    kind: str  # what the margin measures (see `margin_kind`)


@dataclass(frozen=True)
class OrderMismatch:
    """A run whose output differs from the reference run's or from the interpreter's."""

    config: RunConfig
    tokens: tuple[Any, ...]
    position: int
    got: Any
    reference: Any  # the reference run's value at that position
    interpreter: Any | None  # None: the interpreter fails on this input


@dataclass(frozen=True)
class OrderReport:
    configs: tuple[RunConfig, ...]  # configs[0] is the reference run
    inputs: int  # inputs swept
    first: int  # of which the plan's first `first`
    sampled: int  # and `sampled` drawn from the rest with `seed`
    seed: int
    of: int  # inputs in the plan
    margin: Margin | None  # None: no decision boundary (one output value, or floats unlisted)
    mismatches: int  # (run, input) pairs that disagree with the reference run or the interpreter
    runs_disagreeing: int
    inputs_disagreeing: int
    first_mismatch: OrderMismatch | None
    uninterpreted: int = 0  # swept inputs the interpreter fails on (runs compared only together)
    one_value: bool = False  # the output has a single possible value (no margin to measure)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

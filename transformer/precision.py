"""IEEE float32 matrix products for the duration of a model's run, whatever the process has set.

A model's certificate bounds float32 rounding. A process that allows TF32 on CUDA
(`torch.backends.cuda.matmul.allow_tf32 = True`, common in training scripts) or reduced precision
on the CPU (`torch.set_float32_matmul_precision("medium")` lets oneDNN compute float32 products in
bfloat16) would run the same weights with about 1e-3 relative error per product, which no
certificate covers. `ieee_float32()` switches those off for one call and restores them after.

torch >= 2.9 has per-backend `fp32_precision` flags; reading the legacy ones after the new ones have
been set raises, so the new flags are used where they exist and the legacy ones only where they do
not. The flags are global to the process: a thread running other float32 work at the same moment
sees IEEE products too (never less precision than it asked for).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


def _backend_flags() -> list[object]:
    """The per-backend matmul settings objects with an `fp32_precision` (torch >= 2.9)."""
    found: list[object] = []
    cuda_matmul = getattr(torch.backends.cuda, "matmul", None)
    mkldnn_matmul = getattr(torch.backends.mkldnn, "matmul", None)
    for flags in (cuda_matmul, mkldnn_matmul):
        if flags is not None and hasattr(flags, "fp32_precision"):
            found.append(flags)
    return found


@contextmanager
def ieee_float32() -> Iterator[None]:
    """Matrix products in full float32 inside the block, on every device; settings restored."""
    backends = _backend_flags()
    if backends:
        saved = [flags.fp32_precision for flags in backends]  # type: ignore[attr-defined]
        try:
            for flags in backends:
                if flags.fp32_precision != "ieee":  # type: ignore[attr-defined]
                    flags.fp32_precision = "ieee"  # type: ignore[attr-defined]
            yield
        finally:
            for flags, value in zip(backends, saved, strict=True):
                if flags.fp32_precision != value:  # type: ignore[attr-defined]
                    flags.fp32_precision = value  # type: ignore[attr-defined]
        return
    before = torch.get_float32_matmul_precision()  # torch < 2.9: one setting, TF32 included
    try:
        if before != "highest":
            torch.set_float32_matmul_precision("highest")
        yield
    finally:
        if torch.get_float32_matmul_precision() != before:
            torch.set_float32_matmul_precision(before)

"""IEEE float32 matrix products for the duration of a model's run, whatever the process has set.

A model's certificate bounds float32 rounding. A process that allows TF32 on CUDA
(`torch.backends.cuda.matmul.allow_tf32 = True`, common in training scripts) or reduced precision
on the CPU (`torch.set_float32_matmul_precision("medium")` lets oneDNN compute float32 products in
bfloat16) would run the same weights with about 1e-3 relative error per product, which no
certificate covers; so would a caller's `torch.autocast` block (bfloat16 on the CPU, float16 on
CUDA: a bfloat16-autocast reverse decoded 348 of 363 inputs wrongly, without an error).
`ieee_float32(device_type)` switches those off for one call and restores them after; where nothing
is reduced (the default) it changes nothing. Autocast is per thread, so switching it off touches no
other thread.

torch >= 2.9 keeps two records: the legacy precision (`set_float32_matmul_precision`) and a
per-backend `fp32_precision`. Some kernels (cuBLASLt's) check that the two agree and raise where
they do not, so the legacy setter, which sets both, switches them, and each is put back as it was.
The flags are global to the process: a thread running other float32 work at the same moment gets
IEEE products too (never less precision than it asked for), and runs overlapping in several
threads share one switch, put back when the last of them ends.

Another thread may also reduce the flags while a run computes (`set_float32_matmul_precision
("medium")` from a training loop): the run's later products are then bfloat16 (a compiled sort
decoded 200 of 200 inputs wrongly). No torch hook reports such a change, so each run looks at the
flags again when it ends, and `ieee_float32_call` computes again, switched back, where they were
reduced during it (in any run overlapping it: the first to notice switches them back for all).
A change that another thread makes and undoes within one run is not seen.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TypeVar

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


T = TypeVar("T")

# computations tried where another thread keeps reducing the flags during each
ATTEMPTS = 3


class PrecisionChangedError(RuntimeError):
    """Another thread reduced the float32 matmul precision during every attempt of a run."""


class Run:
    """One `ieee_float32` block; `disturbed` is set on leaving it where the flags were found
    reduced during it (some of its products may then not be IEEE float32)."""

    def __init__(self) -> None:
        self.disturbed = False


def ieee_float32_call(compute: Callable[[], T], device_type: str = "cpu") -> T:
    """`compute()` inside `ieee_float32`, computed again where another thread reduced the float32
    matmul precision during it; `PrecisionChangedError` after `ATTEMPTS` such attempts."""
    for _ in range(ATTEMPTS):
        with ieee_float32(device_type) as run:
            result = compute()
        if not run.disturbed:
            return result
    raise PrecisionChangedError(
        f"another thread reduced torch's float32 matmul precision during each of {ATTEMPTS} "
        "attempts of this run, so its products were not all IEEE float32; run it while no "
        "thread changes torch.set_float32_matmul_precision or the fp32_precision flags"
    )


@contextmanager
def ieee_float32(device_type: str = "cpu") -> Iterator[Run]:
    """Matrix products in full float32 inside the block, on every device, and no autocast for
    `device_type` (the model's: "cpu", "cuda", ...); settings restored. The `Run` it gives says
    on leaving whether another thread reduced the flags during the block."""
    with ExitStack() as stack:
        if torch.is_autocast_enabled(device_type):  # products in bfloat16/float16 otherwise
            stack.enter_context(torch.autocast(device_type, enabled=False))
        with _ieee_matmuls() as run:
            yield run


@dataclass(frozen=True)
class _Saved:
    """The settings `_switch_to_ieee` replaced: the legacy record (None: unreadable) and each
    backend's `fp32_precision`."""

    legacy: str | None
    backends: tuple[tuple[object, str], ...]


# The flags are global, but runs may overlap in several threads: a run that finds them reduced
# switches them, and only the last run to finish puts them back. (Each run restoring what
# it saw let a run that started inside another, seeing IEEE and changing nothing, compute its
# later products in bfloat16 once the other put "medium" back: concurrent runs of sort under
# "medium" decoded 184 of 200 inputs wrongly, without an error.)
_lock = threading.Lock()
_running = 0  # runs inside `_ieee_matmuls` now
_saved: _Saved | None = None  # what to put back when the last of them ends
# times the flags were found reduced while some run was inside: a run that sees this count
# change between its start and its end may have multiplied in reduced precision
_reductions = 0


def _switch_back(found_running: bool) -> None:
    """Switch reduced flags to IEEE (under `_lock`), keeping the newest setting to put back;
    where runs were inside, count the reduction they may have computed under."""
    global _saved, _reductions
    switched = _switch_to_ieee()
    if switched is not None:  # the newest setting is the one to put back
        _saved = switched
        if found_running:
            _reductions += 1


@contextmanager
def _ieee_matmuls() -> Iterator[Run]:
    """TF32 and reduced-precision float32 products off inside the block; settings restored
    when no run in any thread is inside it any more."""
    global _running, _saved
    run = Run()
    with _lock:
        # switched at each start: another thread may have reduced the flags during a run
        _switch_back(_running > 0)
        start = _reductions
        _running += 1
    try:
        yield run
    finally:
        with _lock:
            try:
                _switch_back(True)  # reduced during this run (or an overlapping one)?
                run.disturbed = _reductions != start
            finally:  # counted out even where switching raised: else no run ever restores
                _running -= 1
                if _running == 0 and _saved is not None:
                    saved, _saved = _saved, None
                    _restore(saved)


def _switch_to_ieee() -> _Saved | None:
    """Switch reduced-precision float32 products off; what was replaced, or None where nothing
    was reduced (then nothing is touched)."""
    backends = _backend_flags()
    # each backend's setting as it reads ("none": unset, IEEE unless torch.backends says otherwise)
    values = [flags.fp32_precision for flags in backends]  # type: ignore[attr-defined]
    try:
        legacy: str | None = torch.get_float32_matmul_precision()
    except RuntimeError:  # the two records disagree already (torch >= 2.9): not readable
        legacy = None
    reduced = any(value not in ("ieee", "none") for value in values) or legacy not in (
        "highest",
        None,
    )
    if not reduced:
        return None
    saved = _Saved(legacy, tuple(zip(backends, values, strict=True)))
    try:
        _set_legacy("highest")  # the legacy record, and each backend's (torch >= 2.9) with it
        for flags in backends:
            if flags.fp32_precision != "ieee":  # type: ignore[attr-defined]
                flags.fp32_precision = "ieee"  # type: ignore[attr-defined]
    except BaseException:
        _restore(saved)
        raise
    return saved


def _restore(saved: _Saved) -> None:
    if saved.legacy is not None:
        _set_legacy(saved.legacy)
    for flags, value in saved.backends:
        if flags.fp32_precision != value:  # type: ignore[attr-defined]
            flags.fp32_precision = value  # type: ignore[attr-defined]


def _set_legacy(precision: str) -> None:
    with warnings.catch_warnings():  # (some torch versions call the legacy setter deprecated)
        warnings.simplefilter("ignore")
        torch.set_float32_matmul_precision(precision)

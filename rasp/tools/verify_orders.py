"""`rasp verify`'s evaluation-order sweep: does the model decode the same under every order?

float32 sums round differently with the batch size (blocking), the thread count (how a reduction is
split), the device and the BLAS build, so a model can pass one batched comparison and still be wrong
for a single input under 2 threads. `sweep_orders` runs the model on a bounded subset of the plan's
inputs under every `RunConfig`: CPU with 1 and 2 intra-op threads; CUDA without TF32 when a device is
present; float32 and a float64 copy of the same weights (`CompiledTransformer.to`); unbatched and in
padded batches of mixed lengths. Every run's decoded output must equal the reference run's (the first
config) and the interpreter's; the smallest **decoder margin** seen in any run (how far a logit is
from changing the decoded value, see `_margins`) on the inputs the interpreter gives a value for is
reported beside the verdict.

`check_model` is what the CLI and the REPL call: the input comparison of `rasp.tools.verify.verify`, then
this sweep, then (a marked place) the certificate re-check. Torch is imported inside functions only:
the `rasp` package never imports it at import time.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np

from rasp.errors import RaspError
from rasp.sops import Evaluator, Node, SOp
from rasp.tools.certificate_text import Rebuild
from rasp.tools.order_report import Margin, OrderMismatch, OrderReport, RunConfig
from rasp.tools.verify import (
    NON_FINITE,
    InputPlan,
    Progress,
    RuntimeModel,
    VerifyReport,
    meta_dict,
    same_value,
    verify,
)

# Bounded: each config runs every swept input, unbatched too (one forward each), and a 2-thread
# forward can take milliseconds on a busy 2-core machine, where the threads wait for each other.
SWEEP_FIRST = 128  # the plan's first inputs (the shortest, exhaustive ones) are always swept
SWEEP_SAMPLED = 128  # then this many of the rest, drawn with the plan's seed
THREADS = (1, 2)  # CPU intra-op thread counts; fixed, so the report reads the same on any machine
BATCH_SIZES = (1, 3, 16, 128)  # 1: unbatched; larger ones mix lengths (padding)
DTYPES = ("float32", "float64")
MARGIN_TIE = 1e-6  # margins this close (relative) count as equal when locating the smallest

# the output grids of docs/format.md: one decides each position's denominator
GRID_FIELDS = ("denominators", "length_denominators", "end_denominators", "pair_denominators")


def check_model(
    sop: SOp,
    model: RuntimeModel,
    plan: InputPlan,
    *,
    progress: Progress | None = None,
    nodes: Mapping[str, Node] | None = None,
    sweep: bool = True,
    guard: SOp | None = None,
    name: str | None = None,
    rebuild: Rebuild | None = None,
    stages: Callable[[str, int, int], None] | None = None,
) -> VerifyReport:
    """What `rasp verify` and the REPL's `:verify` run: compare every input of `plan` with the
    interpreter (`rasp.tools.verify.verify`), then sweep evaluation orders over a subset of them.
    `guard`: the program as written where `sop` rewrites it; `name`: `sop`'s (see `verify`);
    `rebuild`: what rebuilding a model file's reach from its program found (None: a model
    compiled here, whose reach is the compile's own). `stages(stage, done, total)`: a progress
    bar per stage after the comparison (the sweep took 12 s of a 22 s verify behind a full bar)."""
    report = verify(sop, model, plan, progress=progress, nodes=nodes, guard=guard, name=name)
    if sweep:
        runs = None if stages is None else partial(stages, "evaluation orders")
        report.orders = sweep_orders(sop, model, plan, guard=guard, progress=runs)
    if hasattr(model, "meta") and hasattr(model, "model"):  # a runtime model with its file's JSON
        from rasp.tools.certificate_text import recheck_model
        from rasp.tools.diagnosis import about_names

        observed = None
        if report.orders is not None and report.orders.margin is not None:
            observed = report.orders.margin.value
        # (its weakest decision's labels a def's call made, explained where the program is known)
        about = None if nodes is None else about_names(nodes)
        report.certificate_lines, report.certificate_ok = recheck_model(
            model, observed, rebuild, about
        )
        report.rebuild = rebuild
    return report


def sweep_inputs(
    plan: InputPlan, first: int = SWEEP_FIRST, sampled: int = SWEEP_SAMPLED
) -> tuple[list[list[Any]], int, int]:
    """The plan's first `first` inputs, then `sampled` of the rest (seeded, in plan order). The
    inputs stream past: a plan may hold a million, and only these few are kept."""
    inputs = plan.inputs()
    head = list(itertools.islice(inputs, first))
    rest = max(plan.exhaustive_count + len(plan.drawn.inputs) - len(head), 0)
    picked = set(random.Random(plan.seed).sample(range(rest), min(sampled, rest)))
    chosen = [tokens for i, tokens in enumerate(inputs) if i in picked]
    return head + chosen, len(head), len(chosen)


def run_configs(cuda: bool) -> tuple[RunConfig, ...]:
    """Every config, the reference (cpu float32, 1 thread, unbatched) first; thread counts outermost,
    since the first calls after `torch.set_num_threads` changes the count can be slow (the new
    threads start up), seconds in all on a busy machine."""
    configs = [
        RunConfig("cpu", dtype, threads, size)
        for threads in THREADS
        for dtype in DTYPES
        for size in BATCH_SIZES
    ]
    if cuda:
        configs += [
            RunConfig("cuda", dtype, None, size) for dtype in DTYPES for size in BATCH_SIZES
        ]
    return tuple(configs)


def sweep_orders(
    sop: SOp,
    model: Any,
    plan: InputPlan,
    *,
    first: int = SWEEP_FIRST,
    sampled: int = SWEEP_SAMPLED,
    cuda: bool | None = None,
    guard: SOp | None = None,
    progress: Progress | None = None,
) -> OrderReport:
    """Run `model` (a `transformer.CompiledTransformer`) on a subset of `plan` under every config;
    `progress(done, total)` after each config."""
    import torch

    inputs, n_first, n_sampled = sweep_inputs(plan, first, sampled)
    wanted = [_interpret(sop, tokens, guard) for tokens in inputs]
    configs = run_configs(torch.cuda.is_available() if cuda is None else cuda)
    output = dict(meta_dict(model)["output"])
    reference: list[list[Any]] = []
    margins: list[tuple[RunConfig, int, np.ndarray]] = []  # (config, input, margin per position)
    mismatches, disagreeing, bad_inputs, first_bad = 0, 0, set(), None
    variants: dict[tuple[str, str], Any] = {}
    with _threads_restored():  # the model's forward runs IEEE float32 products itself (no TF32)
        runs = []
        for config in configs:
            key = (config.device, config.dtype)
            if key not in variants:
                variants[key] = _variant(model, *key)
            if config.threads is not None and config.threads != torch.get_num_threads():
                torch.set_num_threads(config.threads)
            runs.append((config, *_run(variants[key], config, inputs, output, plan.seed)))
            if progress is not None:
                progress(len(runs), len(configs))
    for config, outputs, lows in runs:
        reference = reference or outputs
        bad_here = 0
        for i, got in enumerate(outputs):
            # where the interpreter fails, the output is unspecified: no margin to keep
            if (low := lows[i]) is not None and len(low) and wanted[i] is not None:
                margins.append((config, i, low))
            bad = _first_wrong(got, reference[i], wanted[i])
            if bad is not None:
                bad_here += 1
                bad_inputs.add(i)
                if first_bad is None:
                    want = wanted[i]
                    first_bad = OrderMismatch(
                        config,
                        tuple(inputs[i]),
                        bad,
                        _at(got, bad),
                        _at(reference[i], bad),
                        None if want is None else _at(want, bad),
                    )
        mismatches += bad_here
        disagreeing += bad_here > 0
    return OrderReport(
        configs,
        len(inputs),
        n_first,
        n_sampled,
        plan.seed,
        plan.total,
        _smallest(margins, inputs, output),
        mismatches,
        disagreeing,
        len(bad_inputs),
        first_bad,
        sum(want is None for want in wanted),
        len(output.get("values") or ()) == 1,  # listed values are distinct
    )


def margin_kind(output: Mapping[str, Any]) -> str | None:
    """What the decoder margin measures for this output (None: no decision boundary)."""
    if output.get("encoding") == "categorical":
        return "top logit - second logit"
    if output.get("denominators"):
        return "half the position's grid step 1/d - distance to the decoded value"
    if output.get("length_denominators"):
        return "half the length's grid step 1/d - distance to the decoded value"
    if output.get("end_denominators"):
        return "half the grid step 1/d of the distance from the end - distance to the decoded value"
    if output.get("pair_denominators"):
        return "half the grid step 1/d of the position and length - distance to the decoded value"
    points = len({float(v) for v in output.get("values") or ()})
    if points:
        return (
            "half the gap to the nearest other listed value - distance to the snapped one"
            if points > 1
            else None
        )
    return {"ints": "0.5 - distance to the nearest int", "bools": "distance from 0.5"}.get(
        str(output.get("type"))
    )


# ------------------------------------------------------------------------------------------------
# Running one config


def _variant(model: Any, device: str, dtype: str) -> Any:
    import torch

    torch_dtype = {"float32": torch.float32, "float64": torch.float64}[dtype]
    if model.device.type == device and model.dtype == torch_dtype:
        return model
    return model.to(device, torch_dtype)


@contextmanager
def _threads_restored() -> Iterator[None]:
    """The thread count as it was, however the sweep ends."""
    import torch

    threads = torch.get_num_threads()
    try:
        yield
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)


def _run(
    model: Any, config: RunConfig, inputs: list[list[Any]], output: Mapping[str, Any], seed: int
) -> tuple[list[list[Any]], list[np.ndarray | None]]:
    """Decoded outputs and each input's margins (per position) under `config`."""
    order = list(range(len(inputs)))
    if config.batch_size > 1:  # mixed lengths in every batch, so padding is exercised
        random.Random(seed * 1_000_003 + config.batch_size).shuffle(order)
    outputs: list[list[Any]] = [[] for _ in inputs]
    lows: list[np.ndarray | None] = [None] * len(inputs)
    for start in range(0, len(order), config.batch_size):
        chunk = order[start : start + config.batch_size]
        ids, lengths = model.encode([inputs[i] for i in chunk])
        logits = model.forward(ids).detach().cpu().double().numpy()  # [batch, pos, d_vocab_out]
        for row, (i, n) in enumerate(zip(chunk, lengths, strict=True)):
            try:
                outputs[i] = model.meta.output.decode(logits[row : row + 1], [n])[0]
            except ArithmeticError:  # NaN or infinite logits: a failure, never a crash
                outputs[i] = [NON_FINITE] * n
                continue
            lows[i] = _margins(output, logits[row, 1 : n + 1], outputs[i])
    return outputs, lows


def _margins(
    output: Mapping[str, Any], at: np.ndarray, decoded: Sequence[Any]
) -> np.ndarray | None:
    """Per position: how far the logits are from decoding another value (None: not defined).

    categorical: top logit - second logit. Numerical with listed values: half the gap between the
    snapped value and its nearest other listed value, minus the logit's distance to the snapped
    value. With an output grid's denominators d: 1/(2d) - |x - decoded|. ints without a list:
    0.5 - |x - round(x)|; bools without a list: |x - 0.5|."""
    if output.get("encoding") == "categorical":
        if at.shape[1] < 2:
            return None
        top2 = np.partition(at, -2, axis=1)[:, -2:]
        return top2[:, 1] - top2[:, 0]
    x = at[:, 0]
    if any(output.get(key) for key in GRID_FIELDS):
        if output.get("denominators"):
            d = np.array(output["denominators"][: len(x)], dtype=np.float64)  # [n]
        elif output.get("length_denominators"):
            d = np.float64(output["length_denominators"][len(x) - 1])  # this input's length
        elif output.get("pair_denominators"):  # this length's row, n (n - 1) / 2 + i
            start = len(x) * (len(x) - 1) // 2
            d = np.array(output["pair_denominators"][start : start + len(x)], dtype=np.float64)
        else:  # position i of n is n - 1 - i from the end
            d = np.array(output["end_denominators"][: len(x)][::-1], dtype=np.float64)
        return 0.5 / d - np.abs(x - np.array([float(v) for v in decoded]))
    points = np.array(sorted({float(v) for v in output.get("values") or ()}))
    if len(points) == 1:
        return None  # one listed value: every logit decodes to it
    if len(points) >= 2:
        # None decodes from the listed number that stands in for it (output.none_at)
        snapped = np.array([float(output["none_at"] if v is None else v) for v in decoded])
        k = np.searchsorted(points, snapped)
        below = np.where(k > 0, snapped - points[np.maximum(k - 1, 0)], np.inf)
        above = np.where(
            k + 1 < len(points), points[np.minimum(k + 1, len(points) - 1)] - snapped, np.inf
        )
        return np.minimum(below, above) / 2 - np.abs(x - snapped)
    if output.get("type") == "ints":
        return 0.5 - np.abs(x - np.round(x))
    if output.get("type") == "bools":
        return np.abs(x - 0.5)
    return None


# ------------------------------------------------------------------------------------------------
# Comparing and summarising


def _interpret(sop: SOp, tokens: list[Any], guard: SOp | None = None) -> list[Any] | None:
    try:
        if guard is not None:
            Evaluator(tokens).value(guard)
        return list(Evaluator(tokens).value(sop).values)  # type: ignore[union-attr]
    except RaspError:
        return None


def _first_wrong(got: list[Any], reference: list[Any], want: list[Any] | None) -> int | None:
    """The first position where `got` differs from the reference run or the interpreter."""
    for other in (reference, want):
        if other is None:
            continue
        if len(got) != len(other):
            return min(len(got), len(other))
    for pos, g in enumerate(got):
        if not same_value(g, reference[pos]) or (want is not None and not same_value(g, want[pos])):
            return pos
    return None


def _at(values: Sequence[Any], pos: int) -> Any:
    return values[pos] if pos < len(values) else None


def _smallest(
    margins: list[tuple[RunConfig, int, np.ndarray]],
    inputs: list[list[Any]],
    output: Mapping[str, Any],
) -> Margin | None:
    """The smallest margin, located at the FIRST (run, input, position) within MARGIN_TIE of it, so
    float32 noise between equal margins cannot move the reported place from machine to machine."""
    kind = margin_kind(output)
    if not margins or kind is None:
        return None
    low = min(float(m.min()) for *_, m in margins)
    tie = low + MARGIN_TIE * max(1.0, abs(low))
    config, i, values = next(entry for entry in margins if float(entry[2].min()) <= tie)
    return Margin(low, config, tuple(inputs[i]), int(np.argmax(values <= tie)), kind)

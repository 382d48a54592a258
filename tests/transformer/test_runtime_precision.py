"""The runtime multiplies in IEEE float32 whatever TF32 or matmul-precision setting the process has.

A training script's `torch.backends.cuda.matmul.allow_tf32 = True` or
`torch.set_float32_matmul_precision("medium")` (oneDNN bfloat16 products on a CPU) would put
errors of about 1e-3 into every product, which no certificate covers. The settings are global and
reading torch's legacy flags raises once the new per-backend ones have been set, so each scenario
runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

NEW_API = hasattr(torch.backends.cuda.matmul, "fp32_precision")

SCRIPT = """
import json, sys
import torch
import transformer
from transformer import precision

scenario, path = sys.argv[1], sys.argv[2]
model = transformer.load(path)


def flags():
    if scenario == "legacy_only":
        return torch.get_float32_matmul_precision()
    return [torch.backends.cuda.matmul.fp32_precision, torch.backends.mkldnn.matmul.fp32_precision]


def agreeing():
    # cuBLASLt's kernels read allow_tf32 through a check that the legacy and the per-backend
    # records agree, which raises where they do not
    try:
        return torch.backends.cuda.matmul.allow_tf32
    except RuntimeError:
        return "records disagree"


if scenario == "legacy_only":  # torch < 2.9: no per-backend flags
    precision._backend_flags = lambda: []
    torch.set_float32_matmul_precision("medium")
elif scenario == "medium":
    torch.set_float32_matmul_precision("medium")
elif scenario == "allow_tf32":
    torch.backends.cuda.matmul.allow_tf32 = True
elif scenario == "new":
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    torch.backends.mkldnn.matmul.fp32_precision = "bf16"
before = flags()
inside = []
model.model.blocks[0].register_forward_hook(lambda *_: inside.append([flags(), agreeing()]))
outputs = model.run(["abc", "cab"])
ids, _ = model.encode(["abc"])
model.forward(ids)
model.run_with_cache(ids)
model.run_ids(ids)
after = flags()
legacy = None
if scenario != "new":  # the legacy readings still work after a run
    legacy = [torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision()]
print(json.dumps({"before": before, "inside": inside, "after": after, "legacy": legacy,
                  "outputs": outputs}))
"""


def _scenario(name: str, path: Path) -> dict[str, object]:
    return _script_result(SCRIPT, name, str(path))


def _script_result(script: str, *args: str) -> dict[str, Any]:
    """The JSON object `script` prints last, run in a fresh Python (torch's flags are global)."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


BEFORE = {
    "medium": ["tf32", "bf16"],
    "allow_tf32": ["tf32", "none"],
    "new": ["tf32", "bf16"],
    "default": ["none", "none"],
}
LEGACY_AFTER = {
    "default": [False, "highest"],
    "medium": [True, "medium"],
    "allow_tf32": [True, "high"],
    "legacy_only": [True, "medium"],
}


@pytest.mark.parametrize("scenario", ["medium", "allow_tf32", "new", "legacy_only", "default"])
def test_products_are_ieee_during_a_run_and_settings_come_back(
    scenario: str, prev_path: Path
) -> None:
    if scenario != "legacy_only" and not NEW_API:
        pytest.skip("torch before 2.9 has no per-backend fp32_precision flags")
    seen = _scenario(scenario, prev_path)
    if scenario == "legacy_only":
        assert seen["before"] == seen["after"] == "medium"
        expected_inside = ["highest", False]
    elif scenario == "default":  # nothing reduced: nothing touched
        assert seen["before"] == seen["after"] == BEFORE[scenario], seen
        expected_inside = [["none", "none"], False]
    else:
        assert seen["before"] == seen["after"] == BEFORE[scenario], seen
        expected_inside = [["ieee", "ieee"], False]
    inside = seen["inside"]
    assert isinstance(inside, list) and len(inside) == 4  # run, forward, run_with_cache, run_ids
    assert all(flags == expected_inside for flags in inside), inside
    assert seen["legacy"] == LEGACY_AFTER.get(scenario)
    assert seen["outputs"] == [["-", "a", "b"], ["-", "c", "a"]]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_callers_autocast_does_not_reach_the_model(
    dtype: torch.dtype, prev_path: Path, mean_path: Path
) -> None:
    # `torch.autocast` (a training or eval script's) would multiply in bfloat16 or float16: a
    # bfloat16-autocast compiled reverse decoded 348 of 363 inputs wrongly, without an error.
    # Autocast is per thread, so this runs in process.
    import transformer

    inputs = ["ab", "aab", "abba", "bbbab", "aaaaab"]
    for path in (prev_path, mean_path):
        model = transformer.load(path)
        ids, _ = model.encode(["aab", "ab"])
        want_logits = model.forward(ids)
        want_cache = model.run_with_cache(ids)[1]["blocks.0.hook_resid_post"]
        want = model.run(inputs)
        with torch.autocast("cpu", dtype=dtype):
            logits = model.forward(ids)
            cache = model.run_with_cache(ids)[1]["blocks.0.hook_resid_post"]
            got = model.run(inputs)
            codes = model.run_ids(ids)
            assert torch.is_autocast_enabled("cpu")  # the caller's setting comes back
        assert logits.dtype == cache.dtype == torch.float32
        assert torch.equal(logits, want_logits) and torch.equal(cache, want_cache)
        assert got == want
        assert torch.equal(codes, model.run_ids(ids))


OVERLAP_SCRIPT = """
import json, sys, threading
import torch
import transformer

model = transformer.load(sys.argv[1])
reduce_during = sys.argv[2] == "reduce_during"  # "medium" set again while a runs
torch.set_float32_matmul_precision("medium")
a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()
seen = []


def hook(*_):
    if threading.current_thread().name == "a":
        a_inside.set()
        b_inside.wait(10)
    else:  # b began inside a's run, and computes on after a's run ended
        b_inside.set()
        a_done.wait(10)
        seen.append(torch.get_float32_matmul_precision())


model.model.blocks[0].register_forward_hook(hook)
outputs = {}
a = threading.Thread(target=lambda: outputs.update(a=model.run(["abc"])), name="a")
b = threading.Thread(target=lambda: outputs.update(b=model.run(["cab"])), name="b")
a.start()
a_inside.wait(10)
if reduce_during:
    torch.set_float32_matmul_precision("medium")
b.start()
b_inside.wait(10)
a.join(10)
a_done.set()
b.join(10)
print(json.dumps({"seen": seen, "after": torch.get_float32_matmul_precision(), **outputs}))
"""


@pytest.mark.parametrize("when", ["before", "reduce_during"])
def test_runs_overlapping_in_two_threads_both_multiply_in_float32(
    prev_path: Path, when: str
) -> None:
    # Each run restored the flags it had found: a run that began inside another found them IEEE,
    # so once the first ended it computed on under "medium" (concurrent runs of a compiled sort
    # decoded 184 of 200 inputs wrongly). The last run to end now restores them, and each run
    # still switches at its start where another thread set "medium" while the first ran.
    seen = _script_result(OVERLAP_SCRIPT, str(prev_path), when)
    assert seen == {"seen": ["highest"], "after": "medium", "a": [["-", "a", "b"]],
                    "b": [["-", "c", "a"]]}  # fmt: skip


MIDRUN_SCRIPT = """
import json, sys, threading
import torch
import transformer
from transformer import precision

model = transformer.load(sys.argv[1])
scenario = sys.argv[2]
ids, _ = model.encode(["abc", "cab"])
want = model.forward(ids)
passes, seen = [], []


def reduce_elsewhere():
    # another thread (a training loop, say) asks for bfloat16 products while the run computes
    other = threading.Thread(target=lambda: torch.set_float32_matmul_precision("medium"))
    other.start()
    other.join()


def before_block(*_):
    passes.append(1)
    if scenario == "always" or len(passes) == 1:
        reduce_elsewhere()


model.model.blocks[0].register_forward_pre_hook(before_block)
model.model.unembed.register_forward_hook(
    lambda *_: seen.append(torch.get_float32_matmul_precision())
)
try:
    got = model.forward(ids)
    result = {"equal": bool(torch.equal(got, want))}
except precision.PrecisionChangedError as err:
    result = {"error": str(err)}
result.update(passes=len(passes), seen=seen, after=torch.get_float32_matmul_precision())
print(json.dumps(result))
"""


@pytest.mark.parametrize("scenario", ["once", "always"])
def test_a_precision_reduced_by_another_thread_during_a_run_is_not_used(
    prev_path: Path, scenario: str
) -> None:
    # A thread setting "medium" while a run computed left the run's later products in bfloat16:
    # a compiled sort (8 tokens, N = 16) decoded 200 of 200 inputs wrongly, without an error.
    # The run now sees the change when it ends and computes again, switched back; where every
    # attempt is disturbed it raises instead of answering.
    seen = _script_result(MIDRUN_SCRIPT, str(prev_path), scenario)
    assert seen["after"] == "medium"  # the other thread's setting is kept after the run
    if scenario == "once":
        assert seen["passes"] == 2 and seen["seen"] == ["medium", "highest"], seen
        assert seen["equal"] is True
    else:
        assert seen["passes"] == 3 and "during each of 3 attempts" in seen["error"], seen


def test_runs_overlapping_a_reduction_are_each_computed_again() -> None:
    # The first run to end switches the flags back for all: a run still computing must learn
    # that it was disturbed too, though it then finds the flags IEEE.
    from transformer import precision

    legacy = torch.get_float32_matmul_precision()
    backends = [(flags, flags.fp32_precision) for flags in precision._backend_flags()]
    try:
        with precision.ieee_float32() as first, precision.ieee_float32() as second:
            torch.set_float32_matmul_precision("medium")
            with precision.ieee_float32() as third:  # begun after the reduction: not disturbed
                pass
        assert (first.disturbed, second.disturbed, third.disturbed) == (True, True, False)
        assert torch.get_float32_matmul_precision() == "medium"
    finally:  # this process's flags as they were, for the tests after this one
        torch.set_float32_matmul_precision(legacy)
        for flags, value in backends:
            flags.fp32_precision = value


def test_a_run_whose_switch_back_raises_is_still_counted_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`_running` was decremented after the end-of-run switch: where switching raised (its own
    `except` restores and re-raises), the run stayed counted for good, so no later run ever put
    the user's settings back."""
    from transformer import precision

    calls: list[int] = []

    def switch() -> None:  # nothing reduced at the start; the end's switch fails
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("cannot set fp32_precision")

    monkeypatch.setattr(precision, "_switch_to_ieee", switch)
    running = precision._running
    with pytest.raises(RuntimeError, match="cannot set"):
        with precision.ieee_float32():
            pass
    assert precision._running == running and len(calls) == 2

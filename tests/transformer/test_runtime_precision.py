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
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, name, str(path)],
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

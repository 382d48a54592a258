"""CPU and CUDA give the same decoded outputs and (nearly) the same activations."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
import torch

import transformer
from transformer.compiled import PIPELINE_ROWS

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("fixture", ["prev_path", "mean_path", "causal_mean_path"])
def test_cuda_matches_cpu(fixture: str, request: pytest.FixtureRequest) -> None:
    path: Path = request.getfixturevalue(fixture)
    cpu, cuda = transformer.load(path, device="cpu"), transformer.load(path, device="cuda")
    assert cuda.device.type == "cuda"
    alphabet = "abc" if fixture == "prev_path" else "ab"
    inputs = ["".join(p) for n in range(1, 6) for p in itertools.product(alphabet, repeat=n)]
    cpu_out, cuda_out = cpu.run(inputs), cuda.run(inputs, batch_size=17)
    for a, b in zip(cpu_out, cuda_out, strict=True):
        assert b == pytest.approx(a, rel=1e-6)
    ids, _ = cpu.encode(inputs[:50])
    _, cpu_cache = cpu.run_with_cache(ids)
    _, cuda_cache = cuda.run_with_cache(ids.cuda())
    assert set(cpu_cache) == set(cuda_cache)
    for name, value in cpu_cache.items():
        assert cuda_cache[name].device.type == "cuda"
        torch.testing.assert_close(cuda_cache[name].cpu(), value, rtol=1e-5, atol=1e-5, msg=name)


@pytest.mark.gpu
@needs_cuda
def test_cuda_runs_many_inputs_in_overlapping_batches_as_the_cpu(prev_path: Path) -> None:
    cpu, cuda = (
        transformer.load(prev_path, device="cpu"),
        transformer.load(prev_path, device="cuda"),
    )
    rng = random.Random(0)
    inputs = [
        "".join(rng.choice("abc") for _ in range(rng.randint(1, cpu.max_len)))
        for _ in range(3 * PIPELINE_ROWS + 5)
    ]
    assert cuda.run(inputs, batch_size=10_000) == cpu.run(inputs)
    # the bad input is the last and among the longest: its batch is encoded after the others ran
    with pytest.raises(transformer.ModelInputError, match=f"input {len(inputs)} "):
        cuda.run([*inputs, "abcab" + "q" * (cpu.max_len - 5)], batch_size=10_000)


def test_loading_on_a_missing_device_is_a_clear_error(prev_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.raises(
        transformer.ModelFormatError, match="cannot place the model on device 'cuda'"
    ):
        transformer.load(prev_path, device="cuda")


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("setting", ["allow_tf32", "high"])
def test_a_process_allowing_tf32_still_gets_ieee_products(setting: str, mean_path: Path) -> None:
    # A training script's TF32 setting is switched off for the model's call (and restored): the
    # logits are bit for bit those of IEEE products, and no kernel sees torch's two precision
    # records disagree (cuBLASLt raises then).
    cuda = transformer.load(mean_path, device="cuda")
    rng = random.Random(0)
    ids, _ = cuda.encode(["".join(rng.choice("ab") for _ in range(5)) for _ in range(64)])
    ieee = cuda.forward(ids)
    before = torch.get_float32_matmul_precision()
    try:
        if setting == "allow_tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
        else:
            torch.set_float32_matmul_precision("high")
        reduced = torch.get_float32_matmul_precision()
        assert torch.equal(cuda.forward(ids), ieee)
        assert torch.get_float32_matmul_precision() == reduced  # restored after the call
    finally:
        torch.set_float32_matmul_precision(before)

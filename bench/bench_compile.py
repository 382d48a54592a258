"""Compiled-model size, speed and exactness for the program library at several maximum lengths.

For each program and N: layers, heads, d_model, d_mlp, parameters (total, non-zero), compile time,
batched CPU forward time (median of 5 runs of one padded batch of 64 random inputs of lengths 1..N,
encoding and decoding included) and the exact-match rate
against the interpreter on the same inputs plus more random ones.
Usage: `python bench/bench_compile.py [--lengths 10 40 64 128 256] [--programs reverse hist] [--samples 200]`.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import torch

# one vocabulary per library program, shared with bench_scale (frac_prevs counts "x")
from bench_scale import VOCABS, library_program

import transformer
from compiler import compile_sop
from rasp.errors import RaspError
from rasp.sops import SOp, evaluate
from rasp.tools.verify import same_value

FORWARD_RUNS = 5


def random_inputs(vocab: str, max_len: int, count: int, rng: random.Random) -> list[list[str]]:
    return [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(count)]


def bench_one(program: str, max_len: int, samples: int, rng: random.Random) -> dict[str, object]:
    sop, name, source = library_program(program)
    assert isinstance(sop, SOp)
    vocab = list(VOCABS[program])
    start = time.perf_counter()
    model = compile_sop(sop, vocab, max_len, name=name, source=source)
    compile_s = time.perf_counter() - start
    cfg = model.metadata["config"]
    heads = [len(layer["attn"]) for layer in model.metadata["layers"]]
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "m.safetensors"
        model.save(file)
        runtime = transformer.load(file)
    inputs = random_inputs(VOCABS[program], max_len, samples, rng)
    batch = inputs[:64]
    runtime.run(batch)  # warm-up
    times = []
    with torch.inference_mode():
        for _ in range(FORWARD_RUNS):
            start = time.perf_counter()
            runtime.run(batch, batch_size=len(batch))
            times.append(time.perf_counter() - start)
    forward_s = sorted(times)[len(times) // 2]  # median: robust to a busy machine
    exact = total = 0
    outputs = runtime.run(inputs)
    for tokens, got in zip(inputs, outputs, strict=True):
        try:
            want = list(evaluate(sop, tokens).values)
        except RaspError:
            continue  # the interpreter rejects this input: nothing to compare
        total += 1
        exact += len(got) == len(want) and all(map(same_value, got, want))
    return {
        "program": program,
        "N": max_len,
        "layers": cfg["n_layers"],
        "heads": "/".join(map(str, heads)),
        "d_model": cfg["d_model"],
        "d_mlp": cfg["d_mlp"],
        "params": model.param_count(),
        "nonzero": model.nonzero_params(),
        "compile_s": compile_s,
        "forward_ms": forward_s * 1e3,
        "exact": f"{exact}/{total}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 40, 64, 128, 256])
    parser.add_argument("--programs", nargs="+", default=list(VOCABS))
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(0)
    torch.set_num_threads(2)
    print(
        "| program | N | layers | heads/layer | d_model | d_mlp | params | non-zero | compile | forward (64) | exact |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for program in args.programs:
        for n in args.lengths:
            try:
                r = bench_one(program, n, args.samples, rng)
            except RaspError as err:
                print(f"| {program} | {n} | refused: {err.message} |||||||||")
                continue
            print(
                f"| {r['program']} | {r['N']} | {r['layers']} | {r['heads']} | {r['d_model']} | {r['d_mlp']} "
                f"| {r['params']:,} | {r['nonzero']:,} | {r['compile_s']:.2f} s | {r['forward_ms']:.1f} ms "
                f"| {r['exact']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""tracr's own library programs (rasp.tracr.lib), compiled by rasp-forge, beside tracr's figures.

For each program and N: layers, heads, d_model, parameters (total, non-zero), compile time and the
exact-match rate against tracr's evaluator (rasp.tracr's, which gives tracr's values: tests/from_tracr/)
on random inputs of every length 1..N, next to what tracr's own compiler gives for the same program
(the figures of issue 3, measured with tracr on its library, 200 random inputs per length).
Usage: `python bench/bench_tracr.py [--lengths 10 40] [--programs reverse hist] [--samples 200]`.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import transformer
from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib


@dataclass(frozen=True)
class Program:
    build: Callable[[int], rasp.SOp]  # max_len -> the program
    vocab: list[Any]
    tracr: dict[int, tuple[int, str, str]]  # N -> tracr's (layers, parameters, exact)


PROGRAMS: dict[str, Program] = {
    "reverse": Program(
        lambda n: lib.make_reverse(rasp.tokens),
        list("abc"),
        {10: (4, "90K", "92%"), 40: (4, "3.64M", "20.5%")},
    ),
    "hist": Program(
        lambda n: lib.make_hist(), list("abc"), {10: (1, "2.3K", "100%"), 40: (1, "20.5K", "52.5%")}
    ),
    "sort": Program(
        lambda n: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=n, min_key=1),
        [1, 2, 3],
        {10: (3, "36K", "100%"), 40: (3, "473K", "43%")},
    ),
    "sort_freq": Program(
        lambda n: lib.make_sort_freq(max_seq_len=n),
        list("abc"),
        {10: (5, "554K", "100%"), 40: (5, "89.5M", "20%")},
    ),
    "shuffle_dyck": Program(
        lambda n: lib.make_shuffle_dyck(pairs=["()"]),
        list("()"),
        {10: (6, "293K", "92.5%"), 40: (6, "10.9M", "73%")},
    ),
    "frac_prevs": Program(lambda n: lib.make_frac_prevs(rasp.tokens == "a"), list("abc"), {}),
    "shuffle_dyck2": Program(lambda n: lib.make_shuffle_dyck2(), list("(){}"), {}),
    "detect_pattern": Program(lambda n: lib.detect_pattern(rasp.tokens, "abc"), list("abc"), {}),
    "count_less_freq": Program(lambda n: lib.make_count_less_freq(2), list("abc"), {}),
    "pair_balance": Program(lambda n: lib.make_pair_balance(rasp.tokens, "(", ")"), list("()"), {}),
}


def same(got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-6)
    return bool(got == want)


def bench_one(name: str, max_len: int, samples: int, rng: random.Random) -> dict[str, Any]:
    spec = PROGRAMS[name]
    program = spec.build(max_len)
    start = time.perf_counter()
    model = compile_sop(program, spec.vocab, max_len, name=name)
    compile_s = time.perf_counter() - start
    runtime = transformer.from_tensors(model.weights, model.metadata)
    inputs = [
        [rng.choice(spec.vocab) for _ in range(n)]
        for n in range(1, max_len + 1)
        for _ in range(max(1, samples // max_len))
    ]
    exact = total = 0
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        try:
            want = program(tokens)
        except Exception:  # noqa: BLE001 (tracr's evaluator raises here: no value to match)
            continue
        total += 1
        exact += all(same(g, w) for g, w in zip(got, want, strict=True))
    cfg = model.metadata["config"]
    return {
        "program": name,
        "N": max_len,
        "layers": cfg["n_layers"],
        "heads": sum(len(layer["attn"]) for layer in model.metadata["layers"]),
        "d_model": cfg["d_model"],
        "params": model.param_count(),
        "nonzero": model.nonzero_params(),
        "compile_s": compile_s,
        "exact": f"{exact}/{total}",
        "tracr": spec.tracr.get(max_len),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 40])
    parser.add_argument("--programs", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    parser.add_argument("--samples", type=int, default=200, help="random inputs per N")
    args = parser.parse_args()
    rng = random.Random(0)
    print(
        "| program | N | layers | heads | d_model | parameters | non-zero | compile | exact "
        "| tracr layers | tracr parameters | tracr exact |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.programs:
        for n in args.lengths:
            try:
                r = bench_one(name, n, args.samples, rng)
            except CompileError as err:
                # the whole refusal, each build tried with its note (the exception's own text
                # is its first line only), and the table goes on
                print(err.render(), file=sys.stderr, flush=True)
                print(f"| {name} | {n} | refused |", flush=True)
                continue
            tracr = r["tracr"] or ("", "", "")
            print(
                f"| {r['program']} | {n} | {r['layers']} | {r['heads']} | {r['d_model']} "
                f"| {r['params']:,} | {r['nonzero']:,} | {r['compile_s']:.2f} s | {r['exact']} "
                f"| {tracr[0]} | {tracr[1]} | {tracr[2]} |",
                flush=True,
            )


if __name__ == "__main__":
    main()

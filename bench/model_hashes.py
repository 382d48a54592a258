"""Hashes of every compiled model (tensors, metadata with the certificate) or refusal text.

For checking that a compiler change that should change nothing (a speed-up) really changes nothing:
run it before and after, then compare the two files.

    python bench/model_hashes.py -o /tmp/before.json --lengths 5 10 16 40
    python bench/model_hashes.py -o /tmp/after.json --lengths 5 10 16 40
    python bench/model_hashes.py --compare /tmp/before.json /tmp/after.json

Also compiles random programs (tests/compiler/random_programs.py, `--random` seeds) at N = 4.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's packages, not an installed copy
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "compiler"))

from bench_scale import VOCABS, library_program


def _digest(model: Any) -> dict[str, Any]:
    """sha256 of each tensor's float32 bytes (the file's content) and of the metadata JSON."""
    import numpy as np

    tensors = {
        k: hashlib.sha256(np.ascontiguousarray(v, dtype=np.float32).tobytes()).hexdigest()
        + str(tuple(np.shape(v)))
        for k, v in sorted(model.weights.items())
    }
    meta = json.dumps(model.metadata)  # as save() writes it
    meta = meta.replace(str(ROOT), "<root>")  # trees in other folders compare equal
    return {"tensors": tensors, "metadata": hashlib.sha256(meta.encode()).hexdigest()}


def _refusal(err: Exception) -> dict[str, Any]:
    text = err.render() if hasattr(err, "render") else str(err)
    text = text.replace(str(ROOT), "<root>")
    return {"refused": f"{type(err).__name__}: {text}"}


def library(program: str, n: int) -> dict[str, Any]:
    from compiler import compile_sop
    from rasp.errors import RaspError

    sop, name, source = library_program(program)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        model = compile_sop(sop, list(VOCABS[program]), n, name=name, source=source)
    except RaspError as err:
        return {**_refusal(err), **_times(start, cpu)}
    return {**_digest(model), **_times(start, cpu)}


def _times(start: float, cpu: float) -> dict[str, float]:
    """Wall and CPU seconds (all threads) since `start`, `cpu`."""
    return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu}


def random_one(seed: int, twins: bool) -> dict[str, Any]:
    from random_programs import random_program

    from compiler import compile_sop
    from compiler.driver import CompileError

    rng = random.Random(seed)
    if twins:
        root = random_program(rng, rng.randint(2, 4), int_tokens=True, twins=True)
        vocab: list[Any] = [0, 1, 2]
    else:
        int_tokens = rng.random() < 0.5
        vocab = [0, 1, 2] if int_tokens else list("abc")
        root = random_program(rng, rng.randint(1, 4), int_tokens)
    try:
        model = compile_sop(root, vocab, 4)
    except CompileError as err:
        return _refusal(err)
    return _digest(model)


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    bad = 0
    for key in sorted(set(a) | set(b)):
        x = {k: v for k, v in a.get(key, {}).items() if k not in ("seconds", "cpu")}
        y = {k: v for k, v in b.get(key, {}).items() if k not in ("seconds", "cpu")}
        if x != y:
            bad += 1
            print(f"DIFFERENT {key}")
    print(f"{len(set(a) | set(b))} cases, {bad} different")
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path)
    parser.add_argument("--lengths", type=int, nargs="+", default=[5, 10, 16, 40])
    parser.add_argument("--programs", nargs="+", default=list(VOCABS))
    parser.add_argument("--random", type=int, default=300, help="random programs (and twins) seeds")
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    out: dict[str, Any] = {}
    for program in args.programs:
        for n in args.lengths:
            out[f"{program}@{n}"] = row = library(program, n)
            print(f"{program}@{n}: {row['seconds']:.2f} s ({row['cpu']:.2f} s CPU)", flush=True)
    for seed in range(args.random):
        out[f"random{seed}"] = random_one(seed, twins=False)
        out[f"twins{seed}"] = random_one(seed, twins=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

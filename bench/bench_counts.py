"""Sizes of dyck1 and dyck2 (compiler.counts' prefix counts), one JSON line per (program, N).

    python bench/bench_counts.py --lengths 64 256 [--programs dyck1 dyck2]

Each line: parameters, non-zero parameters, d_model, per-layer shapes (n_heads, d_head, d_mlp) and
compile seconds (certificate included) of the certified model. Not a test: sizes are asserted in
tests/compiler/test_counts.py, times are only measured here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VOCABS = {"dyck1": "()", "dyck2": "(){}"}


def measure(program: str, max_len: int) -> dict[str, Any]:
    from compiler import compile_sop
    from rasp.errors import Source
    from rasp.interpreter import load_file

    path = ROOT / "programs" / f"{program}.rasp"
    interp = load_file(path)
    start = time.perf_counter()
    model = compile_sop(
        interp.get(program),
        list(VOCABS[program]),
        max_len,
        name=program,
        source=Source(str(path), path.read_text()),
    )
    seconds = time.perf_counter() - start
    cfg = model.config
    return {
        "program": program,
        "N": max_len,
        "params": model.param_count(),
        "nonzero": model.nonzero_params(),
        "d_model": cfg["d_model"],
        "layers": [[la["n_heads"], la["d_head"], la["d_mlp"]] for la in cfg["layers"]],
        "compile_s": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", nargs="+", default=list(VOCABS))
    parser.add_argument("--lengths", nargs="+", type=int, default=[64, 256])
    args = parser.parse_args()
    for program in args.programs:
        for n in args.lengths:
            print(json.dumps(measure(program, n)), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()

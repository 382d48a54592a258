"""Certified models on CUDA: every library program, compiled (and certified) at N = 64, run on the GPU
one input at a time and in padded batches, against the interpreter.

    python bench/bench_gpu_exactness.py              # prints a markdown table; needs a CUDA device
    python bench/bench_gpu_exactness.py --allow-tf32 # the process allows TF32, as training scripts
                                                     # do: the runtime must still multiply in IEEE
                                                     # float32 (transformer/precision.py)
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import compiler  # noqa: E402
import transformer  # noqa: E402
from programs import VOCABULARIES  # noqa: E402
from rasp.errors import RaspError, Source  # noqa: E402
from rasp.interpreter import load_file  # noqa: E402
from rasp.sops import evaluate  # noqa: E402
from rasp.tools.verify import same_value  # noqa: E402

LIBRARY = VOCABULARIES  # program -> vocabulary
N = 64


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--allow-tf32", action="store_true", help="allow TF32 products in the process"
    )
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = args.allow_tf32
    torch.backends.cudnn.allow_tf32 = args.allow_tf32
    print(
        f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, N = {N}, "
        f"TF32 {'allowed' if args.allow_tf32 else 'off'} in the process"
    )
    print(
        "| program | certified | inputs | single (cuda) | batches of 1..256 (cuda) | cpu == cuda | seconds |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, vocab in LIBRARY.items():
        start = time.perf_counter()
        path = ROOT / "programs" / f"{name}.rasp"
        interp = load_file(path)
        out = interp.last_assigned
        sop = interp.get(out)
        model = compiler.compile_sop(
            sop, list(vocab), N, name=out, source=Source(str(path), path.read_text())
        )
        ok = model.metadata["certificate"]["ok"]
        gpu = transformer.from_tensors(model.weights, model.metadata, "cuda")
        cpu = transformer.from_tensors(model.weights, model.metadata, "cpu")
        rng = random.Random(0)
        inputs = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
        inputs += [[rng.choice(vocab) for _ in range(rng.randint(5, N))] for _ in range(2000)]
        want = []
        for tokens in inputs:
            try:
                want.append(list(evaluate(sop, tokens).values))
            except RaspError:
                want.append(None)
        single_bad = batch_bad = cross_bad = 0
        singles = [gpu.run([t], batch_size=1)[0] for t in inputs[:300]]
        for t, g, w in zip(inputs[:300], singles, want[:300]):
            single_bad += w is not None and not all(same_value(a, b) for a, b in zip(g, w))
        for size in (1, 7, 64, 256):
            got = gpu.run(inputs, batch_size=size)
            for g, w in zip(got, want):
                batch_bad += w is not None and not all(same_value(a, b) for a, b in zip(g, w))
        cpu_out = cpu.run(inputs, batch_size=256)
        gpu_out = gpu.run(inputs, batch_size=256)
        cross_bad = sum(1 for a, b in zip(cpu_out, gpu_out) if a != b)
        secs = time.perf_counter() - start
        print(
            f"| {name} | {'yes' if ok else 'NO'} | {len(inputs):,} | {'exact' if not single_bad else f'{single_bad} wrong'} "
            f"| {'exact' if not batch_bad else f'{batch_bad} wrong'} | {'yes' if not cross_bad else f'{cross_bad} differ'} | {secs:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Outcomes of a fuzz campaign's seeds (tests/compiler/fuzz_campaign.py): compiled, or refused
with the refusal's full text, and each compile's CPU seconds. For checking that a compiler change
that should change no outcome (a speed-up of refusals) really changes none: run it in a worktree
before the change and in one after, then compare the two files.

    python bench/fuzz_outcomes.py numeric 1480000 1480040 --max-len 16 -o /tmp/before.json
    python bench/fuzz_outcomes.py --compare /tmp/before.json /tmp/after.json

No time limit: a compile stopped by an alarm goes on in its thread (rasp.deep_stack), its CPU
counted in the next seeds'. Nothing is run through the models (the campaign checks values).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's packages, not an installed copy
sys.path.insert(0, str(ROOT / "tests" / "compiler"))


def outcome(flavour: str, seed: int, max_len: int) -> dict[str, Any]:
    """The seed's outcome and its compile's CPU seconds (every thread)."""
    from fuzz_campaign import _program

    from compiler import compile_sop
    from rasp.errors import CompileError, RaspError

    try:
        root, vocab, n, _ = _program(flavour, seed, max_len)
    except RaspError:  # a numeric text the interpreter cannot run
        return {"outcome": "not run", "cpu": 0.0}
    cpu = time.process_time()
    try:
        compile_sop(root, vocab, n, causal=flavour == "causal")
    except CompileError as err:
        text = err.render().replace(str(ROOT), "<root>")
        return {"outcome": "refused", "text": text, "cpu": time.process_time() - cpu}
    return {"outcome": "compiled", "cpu": time.process_time() - cpu}


def compare(before: Path, after: Path) -> int:
    """Prints each seed whose outcome differs, and the CPU seconds of the refused compiles."""
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    bad = 0
    for key in sorted(set(a) | set(b)):
        x = {k: v for k, v in a.get(key, {}).items() if k != "cpu"}
        y = {k: v for k, v in b.get(key, {}).items() if k != "cpu"}
        if x != y:
            bad += 1
            print(f"DIFFERENT {key}")
    refused = [k for k in a if a[k]["outcome"] == "refused" and k in b]
    cpu_a = sum(a[k]["cpu"] for k in refused)
    cpu_b = sum(b[k]["cpu"] for k in refused)
    print(f"{len(set(a) | set(b))} seeds, {bad} different; {len(refused)} refused: "
          f"{cpu_a:.2f} s CPU before, {cpu_b:.2f} s after")  # fmt: skip
    return 1 if bad else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("flavour", nargs="?")
    parser.add_argument("first", type=int, nargs="?", help="the first seed")
    parser.add_argument("stop", type=int, nargs="?", help="the seed after the last")
    parser.add_argument("--max-len", type=int, default=4, help="N (not addressing's)")
    parser.add_argument("-o", "--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.flavour is None or args.first is None or args.stop is None or args.out is None:
        parser.error("give a flavour, the first seed, the seed after the last and -o FILE")
    out = {
        f"{args.flavour}{seed}@{args.max_len}": outcome(args.flavour, seed, args.max_len)
        for seed in range(args.first, args.stop)
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

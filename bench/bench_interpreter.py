"""Interpreter speed: the three programs the original RASP was timed on (bench/README.md,
"Interpreter speed vs the original RASP").

Each run evaluates on a fresh random lowercase string (no memo carries over between runs), evaluation
only, no printing. Usage: `python bench/bench_interpreter.py [--lengths 10 100 500 2000] [--runs 9]`;
it prints the Markdown table of bench/README.md.
"""

from __future__ import annotations

import argparse
import random
import string
import time

from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import SOp, evaluate

PROGRAMS = {
    "reverse": "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);",
    "sort": "sorted = sort(tokens, tokens);",
    "histogram": "hist = selector_width(select(tokens, tokens, ==));",
}
# The original interpreter's times (seconds) at n = 10, 100, 500 on a 2-core AMD EPYC, Python 3.11.
ORIGINAL = {
    "reverse": {10: 1.7e-3, 100: 104e-3, 500: 2.41},
    "sort": {10: 3.4e-3, 100: 197e-3, 500: 4.58},
    "histogram": {10: 1.1e-3, 100: 112e-3, 500: 2.49},
}


def build(name: str) -> SOp:
    interp = Interpreter()
    interp.exec_program(parse(PROGRAMS[name], f"<bench {name}>"))
    node = interp.get(interp.last_assigned or "")
    assert isinstance(node, SOp)
    return node


def time_program(sop: SOp, n: int, runs: int, rng: random.Random) -> float:
    """Median seconds of `runs` evaluations, each on a new random input of length n."""
    times = []
    for _ in range(runs):
        text = "".join(rng.choice(string.ascii_lowercase) for _ in range(n))
        start = time.perf_counter()
        evaluate(sop, text)
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 100, 500, 2000])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    rng = random.Random(0)
    print("| program | n | ours | original | speed-up |")
    print("|---|---|---|---|---|")
    for name in PROGRAMS:
        sop = build(name)
        for n in args.lengths:
            ours = time_program(sop, n, args.runs if n <= 500 else 3, rng)
            orig = ORIGINAL[name].get(n)
            ratio = f"{orig / ours:.0f}x" if orig else "n/a"
            orig_text = f"{orig * 1e3:.1f} ms" if orig else "not measured"
            print(f"| {name} | {n} | {ours * 1e3:.3f} ms | {orig_text} | {ratio} |")


if __name__ == "__main__":
    main()

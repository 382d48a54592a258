"""Programs in the shapes tracr's own compiler accepts, compiled, against DeepMind tracr's evaluator.

Not a test (it needs DeepMind's tracr, which this project does not install): run from the
repository root with tracr's source on the path, e.g.

    TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/tracr_friendly_campaign.py SEED COUNT [-v]

The other campaigns aim at the edges of tracr's evaluator (mixed types, numpy forms, tracr's
library on any vocabulary), where most refusals are models no compiler could build (bool against
number, causal models of programs that read later positions). This one draws only what tracr's
compiler builds too: categorical selects of tokens or indices, numerical means with default 0 of
0/1 s-ops (tracr's frac_prevs shape), numerical or categorical maps of such means (linear,
square, thresholds, rounding, 1 / (x + 1), sqrt), `LinearSequenceMap`s of two means,
`SelectorWidth`s and maps of them, means over categorical maps of the tokens or indices, on 2 to 4
letters at max-lens 3 to 24, never causal. Inputs as tracr_lib_campaign.py draws them; each is
compared as tracr_compare.run_one compares (tracr's values against our interpreter, the
lowered graph and, where the compiler accepts, the model). A refusal here is a program tracr
compiles (exact or not): `-v` prints each with its reason. Prints each wrong program and the
counts.
"""

from __future__ import annotations

import random
import signal
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (the sibling campaigns)
from campaign_start import Usage, exit_unless_startable  # noqa: E402

USAGE = Usage(
    "TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/tracr_friendly_campaign.py "
    "SEED COUNT [-v]",
    2,
    2,
)
if __name__ == "__main__":  # (before tracr's imports: without it, one line, not a traceback)
    exit_unless_startable(USAGE)

# torch is imported before any alarm (tracr_lib_campaign.py says why)
import torch  # noqa: E402, F401, I001

from absl import logging as absl_logging  # noqa: E402 (tracr's dependency)
from tracr_compare import Timeout, raise_timeout, run_one  # noqa: E402
from tracr_lib_campaign import draw_inputs  # noqa: E402

LENS = [3, 4, 5, 6, 8, 10, 12, 16, 20, 24]
LETTERS = ["a", "b", "c", "d", "e"]
CMPS = ["EQ", "LT", "LEQ", "GT", "GEQ", "NEQ", "TRUE"]
READERS = [  # a map of one mean (tracr: numerical MLPs, discretising their input)
    "rasp.numerical(rasp.Map(lambda x: 2 * x, {p}))",
    "rasp.numerical(rasp.Map(lambda x: x * x, {p}))",
    "rasp.numerical(rasp.Map(lambda x: 1 if x > 0.5 else 0, {p}))",
    "rasp.numerical(rasp.Map(lambda x: round(x * 4) / 4, {p}))",
    "rasp.categorical(rasp.Map(lambda x: x > 0.5, {p}))",
    "rasp.categorical(rasp.Map(lambda x: round(x, 2), {p}))",
    "rasp.categorical(rasp.Map(lambda x: x == 0, {p}))",
    "rasp.numerical(rasp.Map(lambda x: 1 / (x + 1), {p}))",
    "rasp.numerical(rasp.Map(lambda x: x ** 0.5, {p}))",
    "rasp.categorical(rasp.Map(lambda x: int(x * 7), {p}))",
    "rasp.numerical(rasp.Map(lambda x: int(x * 3) / 3, {p}))",
    "rasp.categorical(rasp.Map(lambda x: x >= 1 / 3, {p}))",
]
PAIRS = [  # two means, as tracr's compiler combines numbers: linearly
    "rasp.numerical(rasp.LinearSequenceMap({p}, {q}, 1, -1))",
    "rasp.numerical(rasp.LinearSequenceMap({p}, {q}, 0.5, 2))",
]
CAT_MAPS = [
    "rasp.Map(lambda x: x == {c}, rasp.tokens)",
    "rasp.Map(lambda x: x in {cs}, rasp.tokens)",
    "rasp.Map(lambda x: x % 3, rasp.indices)",
    "rasp.Map(lambda x: x > 1, rasp.indices)",
]


def mean(rng: random.Random, vocab: list) -> str:
    """A numerical mean, default 0, of a 0/1 s-op over a categorical select of one kind."""
    c = repr(rng.choice(vocab))
    value = rng.choice(
        [
            f"rasp.numerical(rasp.Map(lambda x: 1 if x == {c} else 0, rasp.tokens))",
            f"rasp.numerical(rasp.Map(lambda x: 1 if x != {c} else 0, rasp.tokens))",
            "rasp.numerical(rasp.Map(lambda x: x % 2, rasp.indices))",
        ]
    )
    side = rng.choice(["rasp.tokens", "rasp.indices"])
    select = f"rasp.Select({side}, {side}, rasp.Comparison.{rng.choice(CMPS)})"
    return f"rasp.numerical(rasp.Aggregate({select}, {value}, default=0))"


def program(rng: random.Random, vocab: list) -> str:
    lines = [f"m0 = {mean(rng, vocab)}"]
    r = rng.random()
    if r < 0.3:
        lines.append(f"m1 = {mean(rng, vocab)}")
        lines.append("program = " + rng.choice(PAIRS).format(p="m0", q="m1"))
    elif r < 0.8:
        lines.append("program = " + rng.choice(READERS).format(p="m0"))
        if rng.random() < 0.3:  # a numerical map of that
            lines.append("program = " + rng.choice(READERS[:4]).format(p="program"))
    elif r < 0.9:
        lines.append(
            f"w = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, "
            f"rasp.Comparison.{rng.choice(CMPS)}))"
        )
        c = repr(rng.choice(vocab))
        lines.append(
            "program = "
            + rng.choice(
                [
                    "rasp.numerical(rasp.Map(lambda x: x / 2, w))",
                    "rasp.Map(lambda x: x + 1, w)",
                    "rasp.numerical(rasp.Aggregate(rasp.Select(w, rasp.indices, "
                    "rasp.Comparison.EQ), rasp.numerical(rasp.Map(lambda x: 1 if x == "
                    f"{c} else 0, rasp.tokens)), default=0))",
                ]
            )
        )
    else:
        cat = rng.choice(CAT_MAPS).format(c=repr(rng.choice(vocab)), cs=repr(vocab[:2]))
        lines.append(f"cat = {cat}")
        lines.append(
            "program = rasp.numerical(rasp.Aggregate(rasp.Select(cat, cat, rasp.Comparison.EQ), "
            "rasp.numerical(rasp.Map(lambda x: 1 if x else 0, cat)), default=0))"
        )
    return "\n".join(lines)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    seed, count = int(args[0]), int(args[1])
    absl_logging.set_verbosity(absl_logging.ERROR)
    rng = random.Random(seed)
    stats: Counter = Counter()
    signal.signal(signal.SIGALRM, raise_timeout)
    for k in range(count):
        vocab = rng.sample(LETTERS, rng.randint(2, 4))
        max_len = rng.choice(LENS)
        src = program(rng, vocab)
        inputs = draw_inputs(rng, vocab, max_len)
        signal.alarm(180)
        try:
            run_one(k, src, vocab, max_len, False, stats, verbose, inputs)
        except Timeout:
            stats["timeout"] += 1
            print(f"--- TIMEOUT #{k}\n{src}", flush=True)
        finally:
            signal.alarm(0)
        if verbose:
            print(f"    (#{k}: vocab={vocab} max_len={max_len})", flush=True)
    print(f"seed {seed} count {count}: {dict(stats)}", flush=True)


if __name__ == "__main__":
    main()

"""Generated tracr programs of selectors, widths, categorical and numerical aggregates and tracr's
library, compiled, against DeepMind tracr's evaluator.

Not a test (it needs DeepMind's tracr, which this project does not install): run from the
repository root with tracr's source on the path, e.g.

    TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/mixed_encodings_campaign.py SEED COUNT [MAX_LEN] [-v] [--extra]

numpy_means_campaign.py covers numpy forms and means; this one covers what it does not: tokens of
mixed types (ints, strings, bools, floats; a vocabulary holding both 1 and True), `rasp.numerical`
and `rasp.categorical` annotations mixed, `SelectorWidth`, `&`, `|` and `~` of selectors (tracr's
simplified `Select`s, `Full` sides included, and the unsimplified `SelectorAnd`/`Or`/`Not`),
every `Comparison`, `SequenceMap`s of two different s-ops, `Aggregate`s whose selectors pick
several keys (tracr's mean, or its ValueError for strings and None), `length`, and tracr's
library composed with itself. `--extra` adds `LinearSequenceMap`, `ConstantSelector` (of the
max-len's size, unchecked length), `Map(..., simplify=False)` and tracr's Dyck programs (a seed
without it keeps its program). Each program is a text run by both tracr and `rasp.tracr`.

Every input of length 1..MAX_LEN (default 5) over the 3-token vocabulary is compared: the lowered
graph (`rasp run`) and, where the compiler accepts the program, the model (`causal=True` for a
quarter of the programs), against tracr's values (numbers as `rasp verify` compares them; an
input tracr raises on is skipped for the model, and the graph must raise there too; the lowered
graph, as `rasp verify` runs it, must agree with tracr, and raises only where a constant of
another length makes tracr's value that length, or where tracr orders tuples, which no model can,
so the compiler must refuse: the model is not compared there). It prints
each wrong program and the counts: agreed, refused, wrong (a certified model that decodes
differently from tracr), crashed (a traceback from our side), interp-mismatch. With -v, also each
refusal's first line and each agreeing model's parameter count (the program too past 20,000).
"""

from __future__ import annotations

import random
import signal
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (campaign_start, the siblings)
from campaign_start import Usage, exit_unless_startable  # noqa: E402

USAGE = Usage(
    "TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/mixed_encodings_campaign.py "
    "SEED COUNT [MAX_LEN] [-v] [--extra]",
    2,
    3,
    frozenset({"-v", "--extra"}),
)
if __name__ == "__main__":  # (before tracr's imports: without it, one line, not a traceback)
    exit_unless_startable(USAGE)

from mixed_encodings_gen import VOCABS, Gen  # noqa: E402
from tracr_compare import Timeout, raise_timeout, run_one  # noqa: E402


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    seed, count = int(args[0]), int(args[1])
    max_len = int(args[2]) if len(args) > 2 else 5
    rng = random.Random(seed)
    stats: Counter = Counter()
    signal.signal(signal.SIGALRM, raise_timeout)
    for k in range(count):
        vocab = rng.choice(VOCABS)
        causal = rng.random() < 0.25
        src = Gen(rng, vocab, max_len, "--extra" in sys.argv).program()
        signal.alarm(120)
        try:
            run_one(k, src, vocab, max_len, causal, stats, verbose)
        except Timeout:
            stats["timeout"] += 1
            print(f"--- TIMEOUT #{k} vocab={vocab} causal={causal}\n{src}", flush=True)
        finally:
            signal.alarm(0)
    print(f"seed {seed} count {count} max_len {max_len}: {dict(stats)}", flush=True)


if __name__ == "__main__":
    main()

"""tracr's library programs on random vocabularies and max-lens, compiled, against DeepMind tracr's
evaluator.

Not a test (it needs DeepMind's tracr, which this project does not install): run from the
repository root with tracr's source on the path, e.g.

    TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/tracr_lib_campaign.py SEED COUNT [-v] [--their-lib] [--big] [--deep]

Only tracr's pure-Python RASP is used (`tracr.rasp.rasp`, `tracr.compiler.lib`): where tracr's
`tracr/compiler/__init__.py` imports its jax compiler and jax is not installed, an empty
`__init__.py` in a copy of the source suffices (absl-py must be importable).

mixed_encodings_campaign.py composes the library on 3-token vocabularies at N = 5 with every
input; this one draws, per program, a vocabulary of 2 to 9 tokens (strings, ints, floats, brackets
for the Dyck programs, or a mix), a max-len from 2 to 16, and one of tracr's library programs
(`make_length`, `make_hist`, `make_reverse`, `make_sort_unique`, `make_sort`, `make_sort_freq`,
`make_frac_prevs`, `make_pair_balance`, `make_shuffle_dyck`, `make_shuffle_dyck2`, `shift_by`,
`detect_pattern`, `make_count_less_freq`, `make_count`, `make_nary_sequencemap`) with random
arguments, sometimes fed by a map of the tokens and sometimes read by a second library call or a
map. Inputs: every one up to the max-len where there are at most 400, else 150 at random (every
length drawn), each compared as tracr_compare.run_one compares (tracr's values against
our interpreter, the lowered graph and, where the compiler accepts, the model; `causal=True` for a
quarter). `--big` draws the max-len from 16 to 32, `--deep` chains two to four library calls
(a seed keeps its vocabularies either way, not its programs). `--their-lib` runs tracr's own `lib.py` text on `rasp.tracr` instead of
`rasp.tracr.lib` (a seed keeps its programs either way). Prints each wrong program and the counts.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import signal
import sys
import types
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (campaign_start, the sibling campaign)
from campaign_start import Usage, exit_unless_startable  # noqa: E402

USAGE = Usage(
    "TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/tracr_lib_campaign.py SEED "
    "COUNT [-v] [--their-lib] [--big] [--deep]",
    2,
    2,
    frozenset({"-v", "--their-lib", "--big", "--deep"}),
)
if __name__ == "__main__":  # (before tracr's imports: without it, one line, not a traceback)
    exit_unless_startable(USAGE)

# torch is imported before any alarm: a timeout during its first import, under load, left it
# half-initialised and every later model run crashed (seed 780317)
import torch  # noqa: E402, F401, I001

from absl import logging as absl_logging  # noqa: E402 (tracr's dependency)
from tracr_compare import Timeout, raise_timeout, run_one  # noqa: E402

from rasp import tracr as ours  # noqa: E402
from rasp.tracr import lib as our_lib  # noqa: E402

LENS = [2, 3, 4, 5, 6, 8, 8, 10, 12, 16]
BIG_LENS = [16, 20, 24, 32]  # `--big`
LETTERS = "abcdefghxyz"
BRACKETS = "(){}[]"
MAPS_IN = [  # a map of the tokens fed to the library call (any token type)
    "rasp.Map(lambda x: str(x)[:1], rasp.tokens)",
    "rasp.Map(lambda x: len(str(x)), rasp.tokens)",
    "rasp.Map(lambda x: x, rasp.tokens)",
    "rasp.categorical(rasp.Map(lambda x: x == {c}, rasp.tokens))",
]
READERS = [  # a map reading the library call's output (any value type)
    "rasp.Map(lambda x: x is None, {p})",
    "rasp.Map(lambda x: str(x), {p})",
    "rasp.Map(lambda x: x == {c}, {p})",
    "rasp.numerical(rasp.Map(lambda x: 1 if x else 0, {p}))",
]
NARY = [
    "lambda x, y: (x, y)",
    "lambda x, y: str(x) + str(y)",
    "lambda x, y: x == y",
    "lambda x, y, z: (x, z)",
    "lambda x, y, z: x if y else z",
    "lambda x, y, z: str(x) < str(z)",
]


def draw_vocab(rng: random.Random) -> list:
    size = rng.randint(2, 9)
    kind = rng.choice(["str", "str", "int", "int", "float", "mixed", "brackets"])
    if kind == "str":
        return rng.sample(LETTERS, min(size, len(LETTERS)))
    if kind == "int":
        return rng.sample(range(-4, 12), size)
    if kind == "float":
        return rng.sample([0.5, 1.0, 1.5, 2.25, -0.5, 3.0, 0.1, 0.2, 0.3, 7.0], size)
    if kind == "brackets":
        return list(BRACKETS[: 2 * rng.randint(1, 3)]) + rng.sample(LETTERS, rng.randint(0, 3))
    pool = [0, 1, 2, -1, 5, "a", "b", "c", "x", 1.5, 0.25]
    return rng.sample(pool, size)


class LibGen:
    def __init__(self, rng: random.Random, vocab: list, max_len: int) -> None:
        self.rng, self.vocab, self.max_len = rng, vocab, max_len
        self.numeric = all(isinstance(v, (int, float)) for v in vocab)

    def const(self) -> str:
        return repr(self.rng.choice(self.vocab))

    def source(self) -> str:
        """The s-op a library call reads: the tokens mostly, a map of them or the indices."""
        r = self.rng.random()
        if r < 0.6:
            return "rasp.tokens"
        if r < 0.85:
            return self.rng.choice(MAPS_IN).replace("{c}", self.const())
        return "rasp.indices"

    def keys(self) -> str:
        """Numerical keys for make_sort (tracr adds min_key * index / max_seq_len to them)."""
        options = ["rasp.indices", "rasp.Map(lambda x: -x, rasp.indices)", "lib.make_hist()"]
        if self.numeric:
            options += ["rasp.tokens", "rasp.tokens"]
        else:
            options.append("rasp.Map(lambda x: len(str(x)), rasp.tokens)")
        return self.rng.choice(options)

    def call(self, s: str) -> str:
        rng, n = self.rng, self.max_len
        c = rng.randrange(15)
        if c == 0:
            return "lib.make_length()"
        if c == 1:
            return "lib.make_hist()"
        if c == 2:
            return f"lib.make_reverse({s})"
        if c == 3:
            keys = rng.choice([s, "rasp.indices", "rasp.Map(lambda x: -x, rasp.indices)"])
            return f"lib.make_sort_unique({s}, {keys})"
        if c == 4:
            min_key = rng.choice([1, 1, 0.5, 2])
            return f"lib.make_sort({s}, {self.keys()}, max_seq_len={n}, min_key={min_key})"
        if c == 5:
            return f"lib.make_sort_freq({n})"
        if c == 6:
            if self.numeric and rng.random() < 0.4:
                return "lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda x: x, rasp.tokens)))"
            return f"lib.make_frac_prevs(rasp.numerical({s} == {self.const()}))"
        if c == 7:
            a, b = rng.sample(self.vocab, 2)
            return f"lib.make_pair_balance({s}, {a!r}, {b!r})"
        if c == 8:
            chars = [v for v in self.vocab if isinstance(v, str)] or ["(", ")"]
            if len(chars) < 2:
                chars.append("z")
            k = rng.randint(1, min(3, len(chars) // 2))
            picked = rng.sample(chars, 2 * k)
            pairs = [picked[2 * i] + picked[2 * i + 1] for i in range(k)]
            return f"lib.make_shuffle_dyck({pairs!r})"
        if c == 9:
            return "lib.make_shuffle_dyck2()"
        if c == 10:
            return f"lib.shift_by({rng.randint(1, max(1, n - 1))}, {s})"
        if c == 11:
            pattern = [rng.choice(self.vocab) for _ in range(rng.randint(1, min(3, n)))]
            return f"lib.detect_pattern({s}, {pattern!r})"
        if c == 12:
            return f"lib.make_count_less_freq({rng.randint(1, max(1, n - 1))})"
        if c == 13:
            return f"lib.make_count({s}, {self.const()})"
        f = rng.choice(NARY)
        arity = f.split(":")[0].count(",") + 1
        args = ", ".join(rng.choice([s, "rasp.tokens", "rasp.indices"]) for _ in range(arity))
        return f"lib.make_nary_sequencemap({f}, {args})"

    def program(self, deep: bool = False) -> str:
        lines = [f"p0 = {self.call(self.source())}"]
        if deep:  # `--deep`: one to three more calls, each reading the one before
            for i in range(1, self.rng.randint(2, 4)):
                lines.append(f"p{i} = {self.call(f'p{i - 1}')}")
            lines.append(f"program = p{len(lines) - 1}")
            return "\n".join(lines)
        r = self.rng.random()
        if r < 0.25:  # a second library call reads the first
            lines.append(f"program = {self.call('p0')}")
        elif r < 0.4:
            reader = self.rng.choice(READERS).replace("{c}", self.const())
            lines.append(f"program = {reader.replace('{p}', 'p0')}")
        else:
            lines.append("program = p0")
        return "\n".join(lines)


def draw_inputs(rng: random.Random, vocab: list, max_len: int) -> list[list]:
    if sum(len(vocab) ** n for n in range(1, max_len + 1)) <= 400:
        return [list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]
    return [rng.choices(vocab, k=rng.randint(1, max_len)) for _ in range(150)]


def their_lib() -> types.ModuleType:
    """tracr's own lib.py, its `from tracr.rasp import rasp` bound to rasp.tracr."""
    text = (Path(os.environ.get("TRACR_SRC", ".")) / "tracr/compiler/lib.py").read_text()
    text = re.sub(r"^from tracr\.rasp import rasp$", "", text, flags=re.M)
    module = types.ModuleType("their_lib")
    module.rasp = ours
    exec(compile(text, "tracr/compiler/lib.py", "exec"), module.__dict__)
    return module


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    lib = their_lib() if "--their-lib" in sys.argv else our_lib
    seed, count = int(args[0]), int(args[1])
    absl_logging.set_verbosity(absl_logging.ERROR)  # tracr's warnings about SequenceMaps
    rng = random.Random(seed)
    stats: Counter = Counter()
    signal.signal(signal.SIGALRM, raise_timeout)
    for k in range(count):
        vocab = draw_vocab(rng)
        max_len = rng.choice(BIG_LENS if "--big" in sys.argv else LENS)
        causal = rng.random() < 0.25
        src = LibGen(rng, vocab, max_len).program("--deep" in sys.argv)
        inputs = draw_inputs(rng, vocab, max_len)
        before = sum(v for name, v in stats.items() if name[0].isupper())
        signal.alarm(180)
        try:
            run_one(k, src, vocab, max_len, causal, stats, verbose, inputs, lib)
        except Timeout:
            stats["timeout"] += 1
            print(f"--- TIMEOUT #{k}\n{src}", flush=True)
        finally:
            signal.alarm(0)
        after = sum(v for name, v in stats.items() if name[0].isupper())
        if after > before:
            print(f"    (#{k}: vocab={vocab} max_len={max_len} causal={causal})", flush=True)
    print(f"seed {seed} count {count}: {dict(stats)}", flush=True)


if __name__ == "__main__":
    main()

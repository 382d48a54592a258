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

import itertools
import os
import random
import signal
import sys
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (campaign_start)
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

import numpy as np  # noqa: E402

sys.path.insert(0, os.environ.get("TRACR_SRC", "."))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # (runtime_helpers)
from runtime_helpers import run_compiled  # noqa: E402
from tracr.compiler import lib as dm_lib  # noqa: E402
from tracr.rasp import rasp as dm  # noqa: E402

from compiler import compile_sop  # noqa: E402
from rasp import sops as S  # noqa: E402
from rasp import tracr as ours  # noqa: E402
from rasp.atoms import same_value  # noqa: E402
from rasp.errors import CompileError, RaspError  # noqa: E402
from rasp.tracr import lib as our_lib  # noqa: E402
from rasp.tracr.boxes import unbox  # noqa: E402
from rasp.tracr.lower import to_sops  # noqa: E402

VOCABS = [
    [0, 1, 2],
    ["a", "b", "c"],
    [1, "a", True],  # 1 == True: two tokens Python calls equal
    [2, "x", False],
    [0.5, 3, "b"],
    [True, False, "t"],
    [-1, 0, 1],
    [0.0, -1.0, 2.5],  # float zeros of both signs (-x)
]

# functions of one value of any type (some raise on some types: tracr raises, so must the graph)
MAPS1 = [
    "lambda x: x == {c}",
    "lambda x: str(x)",
    "lambda x: type(x).__name__",
    "lambda x: x if isinstance(x, int) else 0",
    "lambda x: isinstance(x, str)",
    "lambda x: x + 1",
    "lambda x: not x",
    "lambda x: None if x == {c} else x",
    "lambda x: len(str(x)) % 3",
    "lambda x: x * 2",
    "lambda x: 1 if x else 0",
    "lambda x: x > 0",
    "lambda x: (x, 1)",
    "lambda x: {c} if x is None else x",
    "lambda x: x is True",
    "lambda x: float(x) if isinstance(x, (int, float)) else -1.0",
    "lambda x: repr(x)",
    "lambda x: x",
    "lambda x: -x",
    "lambda x: x / 2",
]
MAPS2 = [
    "lambda x, y: x == y",
    "lambda x, y: str(x) + str(y)",
    "lambda x, y: (x, y)",
    "lambda x, y: x + y",
    "lambda x, y: x and y",
    "lambda x, y: x or y",
    "lambda x, y: x < y",
    "lambda x, y: x * y",
    "lambda x, y: x if x == y else None",
    "lambda x, y: type(x) is type(y)",
    "lambda x, y: x - y",
]
OPS = ["+", "-", "&", "|", "*"]
COMPARISONS = ["EQ", "LT", "LEQ", "GT", "GEQ", "NEQ", "TRUE", "FALSE"]
PREDICATES = [
    "lambda k, q: k == q",
    "lambda k, q: str(k) < str(q)",
    "lambda k, q: k is None",
    "lambda k, q: q == k + 1",
    "lambda k, q: k != q and k == {c}",
    "lambda k, q: type(k) is type(q)",
    "lambda k, q: bool(k) or q == {c}",
]
DEFAULTS = ["None", "None", "0", "'z'", "False", "1.5", "{c}"]


class Gen:
    def __init__(self, rng: random.Random, vocab: list, max_len: int, extra: bool = False) -> None:
        self.rng, self.vocab, self.max_len = rng, vocab, max_len
        # `--extra`: what tracr allows beyond the steps below (a seed without it keeps its program)
        self.extra = extra
        self.lines: list[str] = []
        self.sops = ["rasp.tokens", "rasp.indices", "rasp.tokens", "rasp.length"]
        self.sels: list[str] = []
        self.n = 0

    def const(self) -> str:
        r = self.rng.random()
        return repr(self.rng.choice(self.vocab)) if r < 0.7 else repr(self.rng.choice([0, 1, 2]))

    def fill(self, text: str) -> str:
        return text.replace("{c}", self.const())

    def sop(self) -> str:
        # recent s-ops more often, so programs are deep rather than wide
        if self.rng.random() < 0.6 and len(self.sops) > 4:
            return self.sops[-1 - self.rng.randrange(min(3, len(self.sops) - 4))]
        return self.rng.choice(self.sops)

    def annotate(self, expr: str) -> str:
        r = self.rng.random()
        if r < 0.3:
            return f"rasp.numerical({expr})"
        if r < 0.5:
            return f"rasp.categorical({expr})"
        return expr

    def new(self, expr: str, kind: str = "sop") -> str:
        name = f"{'s' if kind == 'sop' else 'q'}{self.n}"
        self.n += 1
        self.lines.append(f"{name} = {expr}")
        (self.sops if kind == "sop" else self.sels).append(name)
        return name

    def select(self) -> str:
        rng = self.rng
        if self.extra and rng.random() < 0.1:
            rows = [[rng.random() < 0.4 for _ in range(self.max_len)] for _ in range(self.max_len)]
            return self.new(f"rasp.ConstantSelector({rows!r}, check_length=False)", "sel")
        r = rng.random()
        if r < 0.25 and self.sels:
            a = rng.choice(self.sels)
            b = self.select_leaf()
            op = rng.choice(["&", "|", "&~", "~", "And", "Or", "Not"])
            if op == "~":
                return self.new(f"~{a}", "sel")
            if op == "&~":
                return self.new(f"{a} & ~{b}", "sel")
            if op == "Not":
                return self.new(f"rasp.SelectorNot({a})", "sel")
            if op in ("And", "Or"):
                return self.new(f"rasp.Selector{op}({a}, {b})", "sel")
            return self.new(f"{a} {op} {b}", "sel")
        if r < 0.35 and self.sels:
            return rng.choice(self.sels)
        return self.new(self.select_leaf(), "sel")

    def select_leaf(self) -> str:
        rng = self.rng
        keys, queries = self.sop(), self.sop()
        if rng.random() < 0.1:
            keys = f"rasp.Full({self.const()})"
        elif rng.random() < 0.1:
            queries = f"rasp.Full({self.const()})"
        if rng.random() < 0.65:
            pred = f"rasp.Comparison.{rng.choice(COMPARISONS)}"
        else:
            pred = self.fill(rng.choice(PREDICATES))
        return f"rasp.Select({keys}, {queries}, {pred})"

    def extra_step(self) -> str:
        """LinearSequenceMap, a Map left unsimplified, tracr's Dyck programs."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            fst, snd = rng.choice([1, -1, 2, 0.5, 0]), rng.choice([1, -1, 3, 0.25])
            linear = f"rasp.LinearSequenceMap({self.sop()}, {self.sop()}, {fst}, {snd})"
            return self.annotate(linear)
        if r < 0.8:
            return f"rasp.Map({self.fill(rng.choice(MAPS1))}, {self.sop()}, simplify=False)"
        if r < 0.9:
            return "lib.make_shuffle_dyck2()"
        tokens = [x for x in self.vocab if isinstance(x, str)] + ["a", "b"]
        return f"lib.make_shuffle_dyck([{tokens[0] + tokens[1]!r}])"

    def step(self) -> str:
        rng = self.rng
        if self.extra and rng.random() < 0.2:
            return self.new(self.extra_step())
        r = rng.random()
        if r < 0.17:
            return self.new(
                self.annotate(f"rasp.Map({self.fill(rng.choice(MAPS1))}, {self.sop()})")
            )
        if r < 0.3:
            a, b = self.sop(), self.sop()
            while b == a and len(set(self.sops)) > 1:
                b = self.sop() if rng.random() < 0.5 else rng.choice(self.sops)
            return self.new(self.annotate(f"rasp.SequenceMap({rng.choice(MAPS2)}, {a}, {b})"))
        if r < 0.36:
            a = self.sop()
            op = rng.choice(OPS + ["==", "<", "~", "rop"])
            if op == "~":
                return self.new(f"~{a}")
            if op in ("==", "<"):
                return self.new(f"{a} {op} {self.const()}")
            if op == "rop":
                return self.new(f"{self.const()} {rng.choice(OPS)} {a}")
            b = self.sop() if rng.random() < 0.6 else self.const()
            return self.new(f"{a} {op} {b}")
        if r < 0.58:
            sel = self.select()
            d = self.fill(rng.choice(DEFAULTS))
            return self.new(self.annotate(f"rasp.Aggregate({sel}, {self.sop()}, default={d})"))
        if r < 0.68:
            return self.new(self.annotate(f"rasp.SelectorWidth({self.select()})"))
        if r < 0.72:
            if rng.random() < 0.5:
                return self.new(f"rasp.Full({self.const()})")
            values = [self.const() for _ in range(self.max_len)]
            # tracr's ConstantSOp must have the input's length: a map of it with tokens cuts it
            c = f"rasp.ConstantSOp([{', '.join(values)}], check_length=False)"
            return self.new(f"rasp.SequenceMap(lambda x, y: y, rasp.tokens, {c})")
        return self.new(self.lib())

    def lib(self) -> str:
        rng = self.rng
        v = self.vocab
        c = rng.randrange(13)
        s = self.sop()
        if c == 0:
            return "lib.make_length()"
        if c == 1:
            return "lib.make_hist()"
        if c == 2:
            return f"lib.make_reverse({s})"
        if c == 3:
            return f"lib.shift_by({rng.choice([1, 2])}, {s})"
        if c == 4:
            pat = [rng.choice(v) for _ in range(rng.choice([1, 2]))]
            return f"lib.detect_pattern({s}, {pat!r})"
        if c == 5:
            return f"lib.make_count({s}, {rng.choice(v)!r})"
        if c == 6:
            return f"lib.make_sort_unique({s}, {self.sop()})"
        if c == 7:
            return f"lib.make_frac_prevs(rasp.numerical({s} == {rng.choice(v)!r}))"
        if c == 8:
            return f"lib.make_count_less_freq({rng.choice([1, 2])})"
        if c == 9:
            toks = [x for x in v if isinstance(x, str)] or ["a"]
            return f"lib.make_pair_balance({s}, {toks[0]!r}, {v[0]!r})"
        if c == 10:
            return f"lib.make_sort({s}, rasp.indices, max_seq_len={self.max_len}, min_key=1)"
        if c == 11:
            return f"lib.make_nary_sequencemap(lambda x, y, z: (x, z), {s}, {self.sop()}, {self.sop()})"
        return f"lib.make_sort_freq({self.max_len})"

    def program(self) -> str:
        for _ in range(self.rng.choice([1, 2, 2, 3, 3, 4])):
            self.step()
        self.lines.append(f"program = {self.sops[-1]}")
        return "\n".join(self.lines)


def key(xs: list) -> tuple:
    """An input as a dict key: (1, True) and (1, 1) are one key to a dict, two inputs here."""
    return tuple((type(x).__name__, x) for x in xs)


def norm(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, tuple):
        return tuple(norm(v) for v in x)
    return x


def same(a, b):
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


def close(got, want) -> bool:
    """Equal as `rasp verify` takes a model's value, or the int 0 or 1 for a mean of one bool."""
    if isinstance(got, tuple) and isinstance(want, tuple):
        return len(got) == len(want) and all(map(close, got, want))
    if type(got) is int and type(want) is bool:
        return got == int(want)
    return same(got, want) or same_value(got, want)


# the lowered graph's deliberate error where tracr orders tuples (rasp/tracr/functions.py)
TUPLE_ORDER = "tracr orders a tuple element by element"


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout


def evaluate(program, inputs, call):
    out = {}
    for xs in inputs:
        try:
            out[key(xs)] = [norm(v) for v in call(program, xs)]
        except Timeout:
            raise
        except RaspError as e:
            out[key(xs)] = ("raises", type(e).__name__, str(e))
        except Exception as e:  # noqa: BLE001 (tracr raises what Python raises)
            out[key(xs)] = ("raises", type(e).__name__)
    return out


def run_one(
    k: int,
    src: str,
    vocab: list,
    max_len: int,
    causal: bool,
    stats: Counter,
    verbose: bool,
    inputs: list | None = None,
    our_lib_module=our_lib,
):
    """Compares `src` on `inputs` (default: every input up to `max_len`); `our_lib_module` is the
    `lib` our side runs (tracr_lib_campaign.py also runs tracr's own lib.py on rasp.tracr)."""
    if inputs is None:
        inputs = [
            list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)
        ]
    dm_ns = {"rasp": dm, "lib": dm_lib, "np": np}
    our_ns = {"rasp": ours, "lib": our_lib_module, "np": np}
    try:
        exec(src, dm_ns)
    except Exception as e:  # noqa: BLE001 (tracr refuses to build it: not a program)
        stats["not-a-tracr-program"] += 1
        if verbose:
            print(f"--- tracr builds nothing #{k}: {type(e).__name__}: {e}")
        return
    try:
        exec(src, our_ns)
    except Exception:  # noqa: BLE001
        stats["CRASH-build"] += 1
        print(f"--- CRASH building #{k}\n{src}\n{traceback.format_exc()}", flush=True)
        return
    want = evaluate(dm_ns["program"], inputs, dm.evaluate)
    if all(isinstance(w, tuple) for w in want.values()):
        stats["tracr-raises-everywhere"] += 1
        return
    got = evaluate(our_ns["program"], inputs, lambda p, xs: p(xs))
    interp_bad = []
    for xs in inputs:
        w, g = want[key(xs)], got[key(xs)]
        if isinstance(w, tuple) != isinstance(g, tuple):
            interp_bad.append((xs, g, w))
        elif not isinstance(w, tuple) and (len(g) != len(w) or not all(map(same, g, w))):
            interp_bad.append((xs, g, w))
    if interp_bad:
        stats["INTERP-MISMATCH"] += 1
        print(
            f"--- INTERP MISMATCH #{k} vocab={vocab} ({len(interp_bad)} inputs, e.g. "
            f"{interp_bad[0]})\n{src}",
            flush=True,
        )
    # the lowered graph, which the model must match (as `rasp verify` compares): it raises where
    # tracr's value does not have the input's length (a constant of another length), and there
    # the model promises nothing
    graph = to_sops(our_ns["program"])
    lowered = evaluate(graph, inputs, lambda p, xs: [unbox(v) for v in S.evaluate(p, xs).values])
    graph_bad, graph_raises, tuple_order = [], [], []
    for xs in inputs:
        w, g = want[key(xs)], lowered[key(xs)]
        if isinstance(w, tuple) or isinstance(g, tuple):
            if isinstance(g, tuple) and not isinstance(w, tuple):
                # the graph raises on purpose where tracr orders tuples (no model can): the
                # compiler must refuse, checked below
                (tuple_order if TUPLE_ORDER in g[-1] else graph_raises).append(xs)
        elif len(g) != len(w) or not all(map(close, g, w)):
            graph_bad.append((xs, g, w))
    stats["graph-raises-inputs-skipped"] += len(graph_raises) + len(tuple_order)
    if graph_bad or (graph_raises and "check_length=False" not in src):
        stats["GRAPH-MISMATCH"] += 1
        example = graph_bad[0] if graph_bad else (graph_raises[0], "raises")
        print(f"--- GRAPH MISMATCH #{k} vocab={vocab} (e.g. {example})\n{src}", flush=True)
    try:
        model = compile_sop(our_ns["program"], vocab, max_len, causal=causal)
    except CompileError as e:
        stats["refused"] += 1
        stats["refused:tuple-order"] += bool(tuple_order)
        if verbose:
            print(f"--- refused #{k}: {str(e).splitlines()[0][:300]}\n{src}")
        return
    except Timeout:
        raise
    except Exception:  # noqa: BLE001 (an internal error: reported)
        stats["CRASH-compile"] += 1
        print(
            f"--- CRASH compiling #{k} vocab={vocab} causal={causal}\n{src}\n"
            f"{traceback.format_exc()}",
            flush=True,
        )
        return
    if tuple_order:
        stats["TUPLE-ORDER-COMPILED"] += 1
        print(
            f"--- TUPLE ORDER COMPILED #{k} vocab={vocab} (the graph raises on "
            f"{tuple_order[0]}, tracr orders tuples there, yet the compiler accepted)\n{src}",
            flush=True,
        )
    ok = [xs for xs in inputs if not isinstance(want[key(xs)], tuple)]
    ok = [xs for xs in ok if not isinstance(lowered[key(xs)], tuple)]
    try:
        outs = run_compiled(model, ok) if ok else []
    except Timeout:
        raise
    except Exception:  # noqa: BLE001
        stats["CRASH-run"] += 1
        print(f"--- CRASH running #{k}\n{src}\n{traceback.format_exc()}", flush=True)
        return
    bad = []
    for xs, g in zip(ok, outs):
        g = [unbox(v) for v in g]
        w = want[key(xs)]
        if len(g) != len(w) or not all(map(close, g, w)):
            bad.append((xs, g, w))
    if bad:
        stats["CERTIFIED-WRONG"] += 1
        print(
            f"--- CERTIFIED WRONG #{k} vocab={vocab} max_len={max_len} causal={causal} "
            f"({len(bad)} inputs, e.g. {bad[0]})\n{src}",
            flush=True,
        )
    else:
        stats["agreed"] += 1
        if verbose:  # to spot models much larger than the program needs
            size = model.param_count()
            shown = f"\n{src}" if size > 20_000 else ""
            print(f"--- size #{k}: {size:,} parameters{shown}", flush=True)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    seed, count = int(args[0]), int(args[1])
    max_len = int(args[2]) if len(args) > 2 else 5
    rng = random.Random(seed)
    stats: Counter = Counter()
    signal.signal(signal.SIGALRM, _alarm)
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

"""Generated tracr programs of numpy forms and means, compiled, against DeepMind tracr's evaluator.

Not a test (it needs DeepMind's tracr, which this project does not install): run from the
repository root with tracr's source on the path, e.g.

    TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/numpy_means_campaign.py SEED COUNT [-v]  (e.g. 100 1000)

Each program maps tokens to a mix of np.float64, np.float32, np.int64, np.bool_ and Python values,
averages them (numerical Aggregates, defaults None, 0, 0.0, False or np.float64(0.5), sometimes a
mean of a mean) and reads the means with a function that looks at type or repr (a Map, a
SequenceMap of two means, or a Select predicate). Every input up to length 3 over a 3-token
vocabulary is compared: the lowered graph's evaluation (`rasp run`) and, where the compiler
accepts the program, the model, against tracr's values (numbers as `rasp verify` compares them;
an input tracr raises on is skipped for the model). It prints each certified-wrong program and the
counts (`-v`: each refusal's reason too)."""

from __future__ import annotations

import itertools
import os
import random
import sys
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # (campaign_start)
from campaign_start import Usage, exit_unless_startable  # noqa: E402

USAGE = Usage(
    "TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/numpy_means_campaign.py "
    "SEED COUNT [-v]",
    2,
    2,
    compiler=False,
)
if __name__ == "__main__":  # (before tracr's imports: without it, one line, not a traceback)
    exit_unless_startable(USAGE)

import numpy as np  # noqa: E402

sys.path.insert(0, os.environ.get("TRACR_SRC", "."))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # (runtime_helpers)
from runtime_helpers import run_compiled  # noqa: E402
from tracr.rasp import rasp as dm  # noqa: E402

from compiler import compile_sop  # noqa: E402
from rasp import tracr as ours  # noqa: E402
from rasp.atoms import same_value  # noqa: E402
from rasp.errors import CompileError, RaspError  # noqa: E402

VOCAB = ["a", "b", "c"]
INPUTS = [list(t) for n in range(1, 4) for t in itertools.product(VOCAB, repeat=n)]

FORMS = [
    "np.float64({})",
    "np.float32({})",
    "np.int64({})",
    "np.bool_({})",
    "float({})",
    "int({})",
    "bool({})",
    "{}",
]
NUMS = ["0", "1", "0.5", "0.25", "2"]
SELECTS = [
    "rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)",
    "rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.GEQ)",
    "rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)",
    "rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)",
    "rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)",
    "rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)",
]
DEFAULTS = ["None", "None", "0", "0.0", "np.float64(0.5)", "False"]
READERS1 = [
    "lambda x: type(x).__name__",
    "lambda x: repr(x)",
    "lambda x: str(x)",
    "lambda x: isinstance(x, float)",
    "lambda x: isinstance(x, int)",
    "lambda x: type(x).__name__ if x == 0.5 else 'other'",
    "lambda x: x + x",
    "lambda x: x > 0.3",
    "lambda x: type(x) is float",
    "lambda x: hasattr(x, 'dtype')",
]
READERS2 = [
    "lambda x, y: type(x).__name__ + type(y).__name__",
    "lambda x, y: 'both' if type(x) is type(y) is np.float64 else 'no'",
    "lambda x, y: 'both' if type(x) is type(y) is float else 'no'",
    "lambda x, y: repr(x) == repr(y)",
    "lambda x, y: x + y",
]
PREDS = [
    "lambda k, q: type(k) is type(q)",
    "lambda k, q: type(k).__name__ < type(q).__name__",
]


def gen(rng: random.Random) -> str:
    lines = ["import numpy as np"]
    n_maps = rng.choice([1, 1, 2])
    for i in range(n_maps):
        parts = []
        distinct = rng.sample(NUMS, 3) if rng.random() < 0.7 else None
        for n, tok in enumerate(VOCAB):
            form = rng.choice(FORMS)
            num = distinct[n] if distinct else rng.choice(NUMS)
            if "bool" in form:
                num = "1" if num != "0" else "0"
            parts.append((tok, form.format(num)))
        expr = f"{parts[2][1]}"
        for tok, val in reversed(parts[:2]):
            expr = f"({val} if t == {tok!r} else {expr})"
        lines.append(f"v{i} = rasp.numerical(rasp.Map(lambda t: {expr}, rasp.tokens))")
    n_means = rng.choice([1, 2, 2])
    for j in range(n_means):
        src = f"v{rng.randrange(n_maps)}"
        if j == 1 and rng.random() < 0.25:
            src = "m0"  # a mean of a mean
        lines.append(
            f"m{j} = rasp.numerical(rasp.Aggregate({rng.choice(SELECTS)}, {src}, "
            f"default={rng.choice(DEFAULTS)}))"
        )
    kind = rng.random()
    if n_means == 2 and kind < 0.5:
        lines.append(f"program = rasp.SequenceMap({rng.choice(READERS2)}, m0, m1)")
    elif n_means == 2 and kind < 0.65:
        lines.append(
            f"program = rasp.numerical(rasp.Aggregate(rasp.Select(m0, m1, {rng.choice(PREDS)}), "
            f"rasp.numerical(rasp.Map(lambda t: 1.0 if t == 'a' else 0.0, rasp.tokens)), default=0))"
        )
    else:
        lines.append(f"program = rasp.Map({rng.choice(READERS1)}, m{n_means - 1})")
    return "\n".join(lines)


def norm(x):
    return x.item() if isinstance(x, np.generic) else x


def same(a, b):
    return type(a) is type(b) and (a == b or (a != a and b != b))


def retyped(got, want):
    """Equal as `rasp verify` takes a model's value (numbers within its tolerance, an int for an
    equal float), or the int 0 or 1 for a bool (a mean of one bool, docs/language.md section 9)."""
    if type(got) is int and type(want) is bool:
        return got == int(want)
    return same_value(got, want)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    seed, count = int(args[0]), int(args[1])
    rng = random.Random(seed)
    stats = Counter()
    for k in range(count):
        src = gen(rng)
        dm_prog = {"rasp": dm, "np": np}
        exec(src, dm_prog)
        our_prog = {"rasp": ours, "np": np}
        exec(src, our_prog)
        want = {}
        for xs in INPUTS:
            try:
                want[tuple(xs)] = [norm(v) for v in dm.evaluate(dm_prog["program"], xs)]
            except Exception as e:  # noqa: BLE001
                want[tuple(xs)] = ("raises", type(e).__name__)
        # our interpreter (the lowered graph), as `rasp run`
        interp_bad = 0
        for xs in INPUTS:
            try:
                got = [norm(v) for v in our_prog["program"](xs)]
            except RaspError:
                got = ("raises",)
            except Exception as e:
                got = ("raises", "other", type(e).__name__)
            w = want[tuple(xs)]
            if isinstance(w, tuple):
                if not (isinstance(got, tuple)):
                    interp_bad += 1
            elif isinstance(got, tuple) or len(got) != len(w) or not all(map(same, got, w)):
                interp_bad += 1
        if interp_bad:
            stats["interp-mismatch"] += 1
            print(f"--- INTERP MISMATCH ({interp_bad} inputs) #{k}\n{src}", flush=True)
        try:
            model = compile_sop(our_prog["program"], VOCAB, 3)
        except CompileError as e:
            print(f"RESULT #{k} refused")
            stats["refused"] += 1
            first = str(e).splitlines()[0][:300]
            stats[
                "refused:" + ("form" if "tracr gives either on some input" in str(e) else "other")
            ] += 1
            if "-v" in sys.argv:
                print(f"--- refused #{k}: {first}\n{src}")
            continue
        except Exception:  # noqa: BLE001 (an internal error: reported)
            stats["crash"] += 1
            print(f"RESULT #{k} crash")
            print(f"--- CRASH #{k}\n{src}\n{traceback.format_exc()}", flush=True)
            continue
        ok_inputs = [xs for xs in INPUTS if not isinstance(want[tuple(xs)], tuple)]
        outs = run_compiled(model, ok_inputs) if ok_inputs else []
        bad, typed = [], 0
        for xs, got in zip(ok_inputs, outs):
            w = want[tuple(xs)]
            if len(got) != len(w) or not all(same(g, v) or retyped(g, v) for g, v in zip(got, w)):
                bad.append((xs, got, w))
            elif not all(map(same, got, w)):
                typed += 1
        stats["type-only-inputs"] += typed
        print(f"RESULT #{k} {'wrong' if bad else 'right'}")
        if bad:
            stats["CERTIFIED-WRONG"] += 1
            print(f"--- CERTIFIED WRONG #{k} ({len(bad)} inputs, e.g. {bad[0]})\n{src}", flush=True)
        else:
            stats["compiled-right"] += 1
        stats["raising-inputs-skipped"] += len(INPUTS) - len(ok_inputs)
    print(dict(stats))


if __name__ == "__main__":
    main()

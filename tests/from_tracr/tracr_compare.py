"""One tracr program text compared three ways against DeepMind tracr's evaluator: our `rasp.tracr`
run directly, its lowered s-op graph (as `rasp verify` runs it) and, where the compiler accepts
it, the compiled model (`run_one`, counted into a Counter; each wrong program printed). Shared by
the tracr campaigns (mixed_encodings_campaign.py, tracr_friendly_campaign.py,
tracr_lib_campaign.py), which check that tracr can be imported (campaign_start.py) before
importing this module; `raise_timeout` is their SIGALRM handler (`Timeout`: a program past its
time).
"""

from __future__ import annotations

import itertools
import os
import sys
import traceback
from collections import Counter
from pathlib import Path

import numpy as np

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


def raise_timeout(*_):
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

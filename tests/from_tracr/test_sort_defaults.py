"""tracr's sorts by keys that never repeat (`make_sort`, `make_sort_freq`): a strict order ranks the
n keys 0..n-1, so `Select(target_pos, indices, EQ)` gives every query one key and the aggregate's
default None is never given. Listed, it made every reader of a sorted number a table over None
too: make_pair_balance of make_sort_freq took 1.4M parameters at N = 16 and over 180 s at N = 32
(tracr_lib_campaign.py seed 780211 --big --deep --their-lib, #2)."""

from __future__ import annotations

import itertools
import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.tracr import lib

VOCAB = [6, -2, -4, 11, 8, -1]


def _agree(model, program, vocab: list, max_len: int, seed: int) -> None:
    rng = random.Random(seed)
    inputs = [list(t) for n in range(1, 3) for t in itertools.product(vocab, repeat=n)]
    inputs += [rng.choices(vocab, k=rng.randint(3, max_len)) for _ in range(60)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        # as `rasp verify` takes a value (floats within its tolerance; a mean of one bool as 0/1)
        assert len(got) == len(want), xs
        assert all(same_value(g, w) or (g == w and type(w) is bool) for g, w in zip(got, want)), xs


def test_a_sort_by_distinct_keys_never_gives_its_default() -> None:
    program = lib.make_sort_freq(6)
    model = compile_sop(program, VOCAB, 6)
    assert None not in model.metadata["output"]["values"]
    _agree(model, program, VOCAB, 6, 0)


def test_a_reader_of_a_sorted_number_is_small() -> None:
    program = lib.make_pair_balance(lib.make_sort_freq(8), -1, -2)
    model = compile_sop(program, VOCAB, 8)
    assert model.param_count() < 60_000  # 30,432 (156,649 with the default listed)
    _agree(model, program, VOCAB, 8, 1)


def test_a_sort_by_a_non_strict_order_keeps_its_default() -> None:
    """`<=` ranks n distinct keys 1..n: the query at index 0 selects no key and gets None."""
    smaller = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    target = rasp.SelectorWidth(smaller)
    program = rasp.Aggregate(rasp.Select(target, rasp.indices, rasp.Comparison.EQ), rasp.tokens)
    assert program([6, -2, 8]) == [None, 6, -2]
    model = compile_sop(program, VOCAB, 5)
    output = model.metadata["output"]
    # listed, or a listed number that decodes as None (output.none_at)
    assert None in output["values"] or "none_at" in output
    _agree(model, program, VOCAB, 5, 2)

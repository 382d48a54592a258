"""Probes of two rewrites of tracr aggregates (compiler/resolve.py): a sort whose keys repeat only
beside a value that is no number copies (`ranks.ties_never_averaged`: a query that selects several
keys selects such a pair, and tracr's mean raises there), and a copy of many numbers with the
default None copies a number standing in for None (`_none_as_number`). Each model must equal the
interpreter wherever the interpreter answers: keys that repeat at three positions, keys one float64
ulp apart (not a repeat), string keys and values, a None a map gives for some tokens only (no
proof: it stays a mean), NaN keys (which share a rank: refused), and readers of the stand-in's
None (maps, a causal compile, numbers float32 cannot tell apart)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.tracr import lib


def _agrees(program: Any, model: Any, vocab: list, max_len: int, upto: int, seed: int) -> int:
    """The model equals the interpreter (as `rasp verify` takes a value) on every input up to
    length `upto` and 200 seeded longer ones where the interpreter answers; how many it answered."""
    rng = random.Random(seed)
    inputs = [list(t) for n in range(1, upto + 1) for t in itertools.product(vocab, repeat=n)]
    inputs += [rng.choices(vocab, k=rng.randint(upto, max_len)) for _ in range(200)]
    answered = 0
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        try:
            want = program(xs)
        except Exception:  # noqa: BLE001 (a mean over None: no value to match)
            continue
        answered += 1
        assert len(got) == len(want) and all(map(same_value, got, want)), (xs, got, want)
    return answered


def _one_hot_of(model: Any, vocab: list) -> bool:
    """Whether the output lists the tokens and None alone: the sort copies, never a mean."""
    return sorted(map(repr, model.metadata["output"]["values"])) == sorted(
        map(repr, [*vocab, None])
    )


def test_keys_that_repeat_at_three_positions_beside_none() -> None:
    """`x + i / 3` over whole x repeats at i, i + 3 and i + 6 (and across tokens: 1 + 3/3 is
    2 + 0/3); shifted by 6, two of every three are None, so every pair holds one."""
    vocab, max_len = [1, 2, 4], 9
    program = lib.make_sort(lib.shift_by(6, rasp.tokens), rasp.tokens, max_seq_len=3, min_key=1)
    with pytest.raises(Exception, match="supported for aggregation"):
        program([2, 1, 1, 1])  # keys 2 and 1 + 3/3 at 0 and 3: two Nones averaged
    model = compile_sop(program, vocab, max_len)
    assert _one_hot_of(model, vocab)
    assert _agrees(program, model, vocab, max_len, upto=5, seed=0) > 300


def test_keys_one_ulp_apart_are_no_repeat() -> None:
    """0.2 + 3/6 is 0.7 (a repeat at 0 and 3, beside the None at 0), while 0.2 + 4/6 and
    0.7 + 1/6 are 0.8666666666666667 and 0.8666666666666666: two keys, numbers both, which the
    model must rank apart as the interpreter does."""
    vocab, max_len = [0.2, 0.7], 6
    program = lib.make_sort(lib.shift_by(1, rasp.tokens), rasp.tokens, max_seq_len=6, min_key=1)
    assert program([0.2, 0.7, 0.2, 0.7, 0.2]) == [None, 0.7, 0.2, 0.7, 0.2]  # the two at 1 and 4
    model = compile_sop(program, vocab, max_len)
    assert _one_hot_of(model, vocab)
    assert _agrees(program, model, vocab, max_len, upto=6, seed=1) > 100


def test_string_keys_that_repeat_beside_strings_are_copied() -> None:
    """Keys `'k<x>-<i % 2>'` repeat at every other position, also where both values are strings:
    tracr averages no strings either, so the sort still copies."""
    vocab, max_len = [1, 3, 12], 8
    keys = rasp.SequenceMap(lambda x, i: f"k{x}-{i % 2}", rasp.tokens, rasp.indices)
    values = rasp.Map(lambda x: f"v{x}", lib.shift_by(4, rasp.tokens))
    program = lib.make_sort_unique(values, keys)
    model = compile_sop(program, vocab, max_len)
    assert _one_hot_of(model, ["v1", "v3", "v12"])
    assert _agrees(program, model, vocab, max_len, upto=5, seed=2) > 100


def test_a_none_for_some_tokens_only_proves_nothing() -> None:
    """The same keys over numbers a map makes None for the token 3 only: a repeat at 4 and 6 may
    hold 1 and 12, which tracr averages (6.5), so the sort stays a mean. (A repeat beside
    positions 0 to 3, None on every input, raises: few inputs are answered.)"""
    vocab, max_len = [1, 3, 12], 8
    keys = rasp.SequenceMap(lambda x, i: f"k{x}-{i % 2}", rasp.tokens, rasp.indices)
    values = rasp.Map(lambda x: None if x == 3 else x, lib.shift_by(4, rasp.tokens))
    program = lib.make_sort_unique(values, keys)
    assert program([1, 1, 12, 12, 3, 3, 3, 3])[4] == 6.5
    model = compile_sop(program, vocab, max_len)
    assert 6.5 in model.metadata["output"]["values"]
    assert _agrees(program, model, vocab, max_len, upto=5, seed=3) > 50


def test_nan_keys_that_share_a_rank_are_refused() -> None:
    """NaN is neither less nor greater than any key, so NaN keys share rank 0 with the least key
    and tracr averages them ([0, 0, 5] sorts to [5/3, None, None]); each NaN is a fresh float,
    so `ranks.distinct_by_position` sees no repeat. No model holds NaN: refused, located."""
    keys = rasp.SequenceMap(
        lambda x, i: float("nan") if x == 0 else x + i / 10, rasp.tokens, rasp.indices
    )
    program = lib.make_sort_unique(rasp.tokens, keys)
    assert program([0, 0, 5])[1:] == [None, None]
    with pytest.raises(CompileError, match="can be nan"):
        compile_sop(program, [0, 5, 7], 4)


def _prefix_mean(x: rasp.SOp) -> rasp.SOp:
    return rasp.numerical(
        rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), x, default=0)
    )


@pytest.mark.parametrize(
    "reader",
    [
        pytest.param(lambda s: s, id="itself"),
        pytest.param(lambda s: rasp.Map(lambda x: x - 1, s), id="x-1"),
        pytest.param(lambda s: rasp.Map(lambda x: x * 0, s), id="x*0"),
        pytest.param(lambda s: rasp.Map(lambda x: 0 if x is None else x, s), id="none-to-0"),
        pytest.param(
            lambda s: rasp.SequenceMap(lambda a, b: b if a is None else a + b, s, rasp.tokens),
            id="sequence-map",
        ),
    ],
)
def test_readers_of_the_stand_ins_none_see_none(reader: Any) -> None:
    """The stand-in (a number below the values) is mapped back to None before any reader: tracr's
    maps skip None (`none-to-0` is never called on it, `x * 0` gives None, not 0), also under a
    causal compile."""
    vocab, max_len = [1, 5, 4, 10, 3], 6
    program = reader(lib.shift_by(5, _prefix_mean(rasp.Map(lambda x: x * 1.0, rasp.tokens))))
    for causal in (False, True):
        model = compile_sop(program, vocab, max_len, causal=causal)
        assert _agrees(program, model, vocab, max_len, upto=3, seed=4) > 300


@pytest.mark.parametrize("scale", [2**60, 1e17])
def test_a_stand_in_beside_numbers_float32_cannot_part(scale: float) -> None:
    """With values near 2**60 the stand-in (the least value less 1, rounded down) and the least
    value are one float32 (and one float64) number: the model must not copy them as one."""
    vocab, max_len = [1, 5, 4, 10], 6
    program = lib.shift_by(5, _prefix_mean(rasp.Map(lambda x: x * scale, rasp.tokens)))
    model = compile_sop(program, vocab, max_len)
    assert _agrees(program, model, vocab, max_len, upto=3, seed=5) > 200

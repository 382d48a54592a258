"""tracr's `make_sort_unique(x, x)` where x repeats: equal keys share a rank, so a query selects
every key of one value of x and tracr averages copies of that value. Where those sums are exact
in float64 (compiler.means.sums_exact), the mean is the value itself, and the aggregate takes x's
values, not every mean of up to N of them."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.tracr import lib

FLOATS = [1.5, 2.25, 0.5, -0.5, 3.0]


def test_a_sort_of_repeated_floats_takes_their_values() -> None:
    """Found by tracr_lib_campaign.py seed 780103 --big (#16): at N = 32 the compile ran past
    180 s (100 s to compile, every mean of the five floats: 5,446,357 parameters at N = 16);
    whole numbers were already taken as their own means, 1.5 was not."""
    program = lib.make_sort_unique(rasp.tokens, rasp.tokens)
    assert program([1.5, 0.5, 1.5]) == [0.5, 1.5, None]
    max_len = 32
    model = compile_sop(program, FLOATS, max_len)
    assert model.param_count() < 20_000  # 9,443
    _agrees(program, model, max_len, seed=0)


def test_a_sort_of_a_copy_by_itself_takes_its_values() -> None:
    """The keys of a sort by an aggregate pass tracr's None check (a map of it), so the values
    were not computed from the keys: every mean of up to N floats, 5,608,509 parameters at
    N = 16 (tracr_lib_campaign.py seed 780216 --big --deep --their-lib #3, a sort_unique(x, x)
    of a reversed sort, ran past 180 s at N = 20; over nine ints, 10.9M parameters at N = 16).
    The check is one-to-one, so keys of one rank still hold one value."""
    x = lib.make_reverse(rasp.tokens)
    program = lib.make_sort_unique(x, x)
    assert program([1.5, 0.5, 1.5]) == [0.5, 1.5, None]
    max_len = 16
    model = compile_sop(program, FLOATS, max_len)
    assert model.param_count() < 50_000  # 12,339
    _agrees(program, model, max_len, seed=1)


def test_keys_that_repeat_only_beside_none_are_copied() -> None:
    """tracr_lib_campaign.py seed 780221 --big --deep --their-lib #22: the keys `x + 2 * i / 20`
    repeat (5 at index 10 and 6 at index 0), so the sort was taken as a mean of up to N shifted
    tokens, a one-hot of 1,794 means: 18,876,160 parameters (tracr's own: 548K). A repeat pairs
    indices i and i + 10, and the shifted value at i < 12 is None, whose mean with anything
    raises: on every input the interpreter answers, each query selects one key."""
    vocab = [11, 6, 7, 3, 10, -3, -2, 5, 8]
    max_len = 20
    program = lib.make_sort(lib.shift_by(12, rasp.tokens), rasp.tokens, max_seq_len=20, min_key=2)
    tie = [6] + [3] * 9 + [5]
    with pytest.raises(Exception, match="supported for aggregation"):
        program(tie)
    model = compile_sop(program, vocab, max_len)
    assert model.param_count() < 200_000  # 93,519
    assert len(model.metadata["output"]["values"]) == 10  # the nine tokens and None
    rng = random.Random(2)
    inputs = [rng.choices(vocab, k=rng.randint(1, max_len)) for _ in range(300)]
    inputs += [vocab * 2 + vocab[:2]]  # full length
    answered = 0
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        try:
            want = program(xs)
        except Exception:  # noqa: BLE001 (two keys tie beside a None: no value to match)
            continue
        answered += 1
        assert got == want, xs
    assert answered > 200


def test_keys_that_repeat_beside_numbers_are_still_means() -> None:
    """The same keys sorting the tokens themselves: a repeat selects two numbers, which tracr
    averages, so the aggregate stays a mean (its values include 5.5, the mean of 5 and 6)."""
    program = lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=4, min_key=2)
    assert program([6, 3, 5]) == [3, 5.5, None]
    model = compile_sop(program, [6, 3, 5], 4)
    assert 5.5 in model.metadata["output"]["values"]
    inputs = [list(t) for n in range(1, 5) for t in itertools.product([6, 3, 5], repeat=n)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs


def _agrees(program: Any, model: Any, max_len: int, seed: int) -> None:
    """The model equals tracr's evaluation on every input up to length 3, 60 seeded longer ones
    and two full-length ones (all ties; one key apart)."""
    rng = random.Random(seed)
    inputs = [list(t) for n in range(1, 4) for t in itertools.product(FLOATS, repeat=n)]
    inputs += [rng.choices(FLOATS, k=rng.randint(4, max_len)) for _ in range(60)]
    inputs += [[1.5] * max_len, [-0.5] * (max_len - 1) + [3.0]]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs

"""tracr's `make_sort_unique(x, x)` where x repeats: equal keys share a rank, so a query selects
every key of one value of x and tracr averages copies of that value. Where those sums are exact
in float64 (compiler.means.sums_exact), the mean is the value itself, and the aggregate takes x's
values, not every mean of up to N of them."""

from __future__ import annotations

import itertools
import math
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


def test_a_sort_of_prefix_means_by_themselves_takes_copies_of_them() -> None:
    """make_sort_unique(x, x) with x a prefix mean of ints: many values (81 at N = 4), so the
    rank `selector_width(select(x, x, <))` is counted over the digits of x's rank
    (compiler.order_digits), which count_keys did not read as a rank; x holds 7 and 7.0 (one key,
    or a mean), equal numbers from equal values; and copies of a third do not add up exactly
    (ten average to 0.33333333333333337), so each count's mean of copies is listed, not every
    mean of up to N values of x: 4,778,689 parameters at N = 4, 133,963,398 at N = 5 over four
    ints (343 s), refused past 100,000 means at N = 8 (tracr_lib_campaign seed 780226
    --big --deep --their-lib #36 at N = 20); 122,638 at N = 4 now."""
    x = lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda v: v, rasp.tokens)))
    program = lib.make_sort_unique(x, x)
    vocab = [-3, 0, 7, 6, -2, 10, -1, 3]
    assert program([7, 7, 6]) == [6.666666666666667, 7, None]  # 7 and 7.0, one rank
    model = compile_sop(program, vocab, 4)
    assert model.param_count() < 300_000
    inputs = [list(t) for n in range(1, 4) for t in itertools.product(vocab, repeat=n)]
    rng = random.Random(2)
    inputs += [rng.choices(vocab, k=4) for _ in range(300)] + [[7] * 4, [-3, 0, -3, 0]]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)  # floats to 12 significant digits (a resolved mean, docs/tracr.md)
        assert len(got) == len(want), xs
        for g, w in zip(got, want, strict=True):
            assert g == w or (type(g) is float and math.isclose(g, w, rel_tol=1e-11)), xs


def test_a_sort_by_the_indices_of_sorted_means_copies_one_number() -> None:
    """make_sort_unique(make_sort_unique(x, x), indices): the second sort selects one key (its
    target is the index) and copies the first, whose values hold None (a position no rank
    reaches) beside the means; None now stands as a number in the copy (resolve._none_as_number)
    where the copy was their one-hot: 221,734 parameters at N = 5 over four ints, then 112,561
    (seed 780226 #36 at N = 20: 110,196,007, then 28,375,879, most of it the output's one-hot of
    1,639 values), now 29,589 (the copied number is the output, output.none_at; 311,270 at
    N = 20)."""
    x = lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda v: v, rasp.tokens)))
    program = lib.make_sort_unique(lib.make_sort_unique(x, x), rasp.indices)
    vocab = [1, 5, 4, 10]
    model = compile_sop(program, vocab, 5)
    assert model.param_count() < 40_000  # 29,589
    inputs = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    rng = random.Random(3)
    inputs += [rng.choices(vocab, k=5) for _ in range(200)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert len(got) == len(want), xs
        for g, w in zip(got, want, strict=True):
            assert g == w or (type(g) is float and math.isclose(g, w, rel_tol=1e-11)), xs


def test_copy_means_are_the_interpreter_s() -> None:
    from functools import reduce
    from operator import add

    from compiler.pinned_means import copy_means

    third = 1 / 3
    found = copy_means([third, 7], 12)
    assert found is not None and 0.33333333333333337 in found and 7.0 in found
    assert set(found) == {third, 7.0} | {reduce(add, [third] * k, 0) / k for k in range(2, 13)}
    assert copy_means([0.1, -0.0], 3) is not None
    assert all(m == 0.0 and str(m) == "0.0" for m in copy_means([-0.0], 3)[1:])  # 0 + -0.0
    # an int no float64 holds: each count's exact sum rounded once (compiler.pinned_means), and
    # a float column's adds of float(v), not None (which sent equal keys to every mean)
    big = 2**53 + 1
    assert set(copy_means([big], 3)) == {float(2 * big) / 2, float(3 * big) / 3, 2.0**53}
    assert copy_means([float("inf")], 2) is None

"""tracr's `make_sort_unique(x, x)` where x repeats: equal keys share a rank, so a query selects
every key of one value of x and tracr averages copies of that value. Where those sums are exact
in float64 (compiler.means.sums_exact), the mean is the value itself, and the aggregate takes x's
values, not every mean of up to N of them."""

from __future__ import annotations

import itertools
import random
from typing import Any

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


def _agrees(program: Any, model: Any, max_len: int, seed: int) -> None:
    """The model equals tracr's evaluation on every input up to length 3, 60 seeded longer ones
    and two full-length ones (all ties; one key apart)."""
    rng = random.Random(seed)
    inputs = [list(t) for n in range(1, 4) for t in itertools.product(FLOATS, repeat=n)]
    inputs += [rng.choices(FLOATS, k=rng.randint(4, max_len)) for _ in range(60)]
    inputs += [[1.5] * max_len, [-0.5] * (max_len - 1) + [3.0]]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs

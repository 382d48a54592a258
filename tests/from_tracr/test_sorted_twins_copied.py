"""A sort that copies its numbers as tokens (compiler.ranks.copy_numbers) gives one of equal
numbers of two types for both (1 for a prefix mean's 1.0), so a function reading the sorted copy
and telling them apart is refused (`BoolMeans._twin_problems`). The copy's twins were noted on the
sort alone: a copy of the sort (another aggregate, a shift, a second sort) lost them, its values
were the ints only, and its readers were never checked: `str` of a copy of the sorted
`make_frac_prevs` compiled, certified, and gave '1' where tracr gives '1.0' (found by review, 112
of 320 inputs wrong at N = 4)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.tracr import lib

VOCAB = [1, 2, 4]
MAX_LEN = 4


def _numbers() -> rasp.SOp:
    return rasp.numerical(rasp.Map(lambda x: x, rasp.tokens))


def _sorted_mean() -> rasp.SOp:
    """make_frac_prevs of the tokens (1 at position 0 of [1, ...], 1.0 after) sorted by keys
    that never repeat (x + i / N): the sort copies the mean's numbers as tokens."""
    return lib.make_sort(lib.make_frac_prevs(_numbers()), _numbers(), max_seq_len=4, min_key=1)


def _sorted_bool_mean() -> rasp.SOp:
    """A sorted tracr mean of bools: one selected False is False, several 0.0 (one token)."""
    mean = lib.make_frac_prevs(rasp.tokens == 1)
    return lib.make_sort(mean, _numbers(), max_seq_len=4, min_key=1)


def _at_self(sop: rasp.SOp) -> rasp.SOp:
    return rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ), sop)


COPIES: dict[str, Callable[[], rasp.SOp]] = {
    "a copy of the sort": lambda: rasp.Map(lambda v: str(v), _at_self(_sorted_mean())),
    "a shift of the sort": lambda: rasp.Map(lambda v: str(v), lib.shift_by(1, _sorted_mean())),
    "a numerical copy": lambda: rasp.Map(
        lambda v: str(v), rasp.numerical(rasp.Aggregate(_self_select(), _sorted_mean(), default=0))
    ),
    "a sort of the sort": lambda: rasp.Map(
        lambda v: str(v), lib.make_sort_unique(_sorted_mean(), rasp.indices)
    ),
    "an affine map of a copy": lambda: rasp.Map(
        lambda v: str(v), rasp.numerical(rasp.Map(lambda v: v + 1, _at_self(_sorted_mean())))
    ),
    "a predicate on a copy": lambda: rasp.SelectorWidth(
        rasp.Select(_at_self(_sorted_mean()), rasp.indices, lambda k, q: isinstance(k, int))
    ),
    "a copy of a sorted bool mean": lambda: rasp.Map(
        lambda v: v is False, _at_self(_sorted_bool_mean())
    ),
    "a shift of a sorted bool mean": lambda: rasp.Map(
        lambda v: str(v), lib.shift_by(1, _sorted_bool_mean())
    ),
}


def _self_select() -> rasp.Selector:
    return rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)


def _inputs() -> list[list[int]]:
    return [list(t) for n in range(1, MAX_LEN + 1) for t in itertools.product(VOCAB, repeat=n)]


@pytest.mark.parametrize("name", COPIES)
def test_a_reader_of_a_copied_sort_of_twins_is_refused(name: str) -> None:
    program = COPIES[name]()
    # tracr tells the twins apart on some input: a model giving one for both is wrong there
    assert len({tuple(map(repr, program(xs))) for xs in _inputs()}) > 1
    with pytest.raises(CompileError, match="sort's copy"):
        compile_sop(program, VOCAB, MAX_LEN)


@pytest.mark.parametrize(
    "program",
    [
        _at_self(_sorted_mean()),
        lib.shift_by(1, _sorted_mean()),
        rasp.Map(lambda v: v > 1, _at_self(_sorted_mean())),
        rasp.Map(lambda v: v > 0.4, _at_self(_sorted_bool_mean())),
    ],
    ids=["copy", "shift", "a comparison of a copy", "a comparison of a bool mean's copy"],
)
def test_copies_of_a_sort_read_alike_for_twins_still_compile(program: rasp.SOp) -> None:
    """Functions giving one result for 1 and 1.0 (or False and 0.0), and the copies themselves
    as the output (a model promises numbers, 1 for 1.0 is no error), compile and agree."""
    model = compile_sop(program, VOCAB, MAX_LEN)
    inputs = _inputs() + [random.Random(3).choices(VOCAB, k=MAX_LEN) for _ in range(20)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = [
            int(w) if type(w) is bool and type(g) is int else w for g, w in zip(got, program(xs))
        ]
        assert all(map(same_value, got, want)), (xs, got, want)

"""tracr's `shift_by` of many numbers: a copy of one key with tracr's default None. With None as
the default the copy was the numbers' one-hot; with a number standing in for None (mapped back
after the copy, `compiler.resolve._none_as_number`) the compiler may copy the number itself."""

from __future__ import annotations

import itertools
import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.tracr import lib

VOCAB = [1, 5, 4, 10]


def _frac_prevs() -> rasp.SOp:
    return lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda x: x, rasp.tokens)))


def test_a_shifted_prefix_mean_copies_the_values_it_reaches() -> None:
    """tracr_lib_campaign.py seed 780219 --big --deep --their-lib #42: at N = 17 the shift copies
    the prefix mean at position 0 only (4 values), but it copied the mean's one-hot of 788
    values, 11,341,475 parameters (tracr refuses the program: a categorical copy of a number)."""
    max_len = 17
    program = lib.shift_by(16, _frac_prevs())
    model = compile_sop(program, VOCAB, max_len)
    assert model.param_count() < 10_000  # 1,378
    rng = random.Random(5)
    inputs = [rng.choices(VOCAB, k=rng.randint(1, max_len)) for _ in range(200)]
    inputs += [[v] * max_len for v in VOCAB] + [[v] * 16 for v in VOCAB]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert got == want and [type(v) for v in got] == [type(v) for v in want], xs


def test_a_shift_of_ints_and_floats_equal_as_numbers_stays_a_one_hot() -> None:
    """Where the copied values hold 1 and 1.0 (a prefix mean at positions 0 and 1), one number
    cannot carry which one was copied: the copy stays the one-hot (it was refused, margin 0,
    when copied as a number), exact as before."""
    max_len = 6
    program = lib.shift_by(3, _frac_prevs())
    model = compile_sop(program, VOCAB, max_len)
    inputs = [list(t) for n in range(1, 6) for t in itertools.product(VOCAB, repeat=n)]
    inputs += [[1] * max_len, [10, 1, 1, 4, 5, 1]]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert got == want and [type(v) for v in got] == [type(v) for v in want], xs


def test_a_shift_of_few_numbers_is_unchanged() -> None:
    """Four numbers or fewer are copied as their one-hot as before (no stand-in map)."""
    program = lib.shift_by(1, rasp.tokens)
    model = compile_sop(program, VOCAB, 6)
    assert [layer["mlp"] for layer in model.metadata["layers"]] == [[]]
    inputs = [list(t) for n in range(1, 5) for t in itertools.product(VOCAB, repeat=n)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs


INTS = list(range(11))  # InterpBench's int vocabulary


def _checked(program: rasp.SOp, model, max_len: int) -> None:
    rng = random.Random(7)
    inputs = [rng.choices(INTS, k=rng.randint(1, max_len)) for _ in range(300)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert got == want and [type(v) for v in got] == [type(v) for v in want], xs


def test_a_copy_of_whole_numbers_with_a_stand_in_is_no_weighted_count() -> None:
    """InterpBench's insert zeros (case 110): the copy of 0..10 with a number standing in for
    None is one key at most, so its 'sum' is the copied value and counting it by widths per bit
    (compiler.counts) saves nothing: 10,711 parameters in 2 layers (4 width heads), where the
    copy is 1,759 in one layer."""
    shifter = rasp.Select(rasp.indices, rasp.indices, lambda x, y: x == int(y / 2))
    shifted = rasp.Aggregate(shifter, rasp.tokens)
    program = rasp.SequenceMap(lambda x, y: x if y % 2 == 0 else 0, shifted, rasp.indices)
    model = compile_sop(program, INTS, 9)
    assert len(model.metadata["layers"]) == 1
    assert model.param_count() < 3_000  # 1,759
    _checked(program, model, 9)


def test_copies_that_may_select_nothing_stay_one_hots_where_cheaper() -> None:
    """InterpBench's last two tokens equal (case 109): the last token (always there) copied as a
    number, the second to last (None at length 1, a number standing in) as its one-hot is the
    smaller build; the copy builds made both numbers or neither: 14,997 parameters, 9,112 now."""
    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    last = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.Map(lambda x: x - 1, length), rasp.Comparison.EQ),
        rasp.tokens,
    )
    second = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.Map(lambda x: x - 2, length), rasp.Comparison.EQ),
        rasp.tokens,
    )
    program = rasp.SequenceMap(lambda x, y: 1 if x == y else 0, last, second)
    model = compile_sop(program, INTS, 9)
    assert model.param_count() < 10_000  # 9,112
    _checked(program, model, 9)

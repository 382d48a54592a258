"""tracr's `shift_by` of many numbers: a copy of one key with tracr's default None. With None as
the default the copy was the numbers' one-hot; with a number standing in for None (mapped back
after the copy, `compiler.resolve._none_as_number`) the compiler may copy the number itself, also
where the copied values hold equal numbers of two types (1 and 1.0) or a mean of bools."""

from __future__ import annotations

import itertools
import random

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
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


def test_a_shift_of_ints_and_floats_equal_as_numbers_copies_one_number() -> None:
    """Where the copied values hold 1 and 1.0 (a prefix mean's 1 at position 0, 1.0 after it),
    the copy is of the number too: the map back gives the two one column (map_views._twins_merged),
    and the output's types per position say which (position 16 copies position 0's int). It was
    kept the one-hot of every mean: 20,741,011 parameters at N = 20, now 14,647."""
    program = lib.shift_by(16, _frac_prevs())
    model = compile_sop(program, VOCAB, 20)
    assert model.param_count() < 100_000  # 14,647
    rng = random.Random(7)
    inputs = [rng.choices(VOCAB, k=rng.randint(15, 20)) for _ in range(300)]
    _agrees(program, model, inputs + [[v] * 20 for v in VOCAB])
    # at N = 6 every input, values and types exactly
    program = lib.shift_by(3, _frac_prevs())
    model = compile_sop(program, VOCAB, 6)
    inputs = [list(t) for n in range(1, 6) for t in itertools.product(VOCAB, repeat=n)]
    inputs += [[1] * 6, [10, 1, 1, 4, 5, 1]]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert got == want and [type(v) for v in got] == [type(v) for v in want], xs


def test_a_shift_of_a_mean_of_bools_copies_one_number() -> None:
    """A mean of bools (its one selected bool the int 0 or 1, `BoolMeans`) copied with the
    default None takes the stand-in too, the map back marked as the mean was: shift_by(16,
    make_frac_prevs(tokens == "x")) at N = 20 was a one-hot of 130 values, 333,539 parameters,
    now 2,753; a reader telling True from 1.0 is still refused."""
    program = lib.shift_by(16, lib.make_frac_prevs(rasp.tokens == "x"))
    model = compile_sop(program, list("xyz"), 20)
    assert model.param_count() < 10_000  # 2,753
    rng = random.Random(8)
    inputs = [rng.choices("xyz", k=rng.randint(15, 20)) for _ in range(300)]
    _agrees(program, model, inputs + [["x"] * 20, ["y"] * 20])
    small = lib.shift_by(3, lib.make_frac_prevs(rasp.tokens == "x"))
    with pytest.raises(CompileError, match="equal numbers"):
        compile_sop(rasp.Map(lambda v: str(v), small), list("xy"), 6)


def _agrees(program: rasp.SOp, model: object, inputs: list[list[object]]) -> None:
    """The model's values are the program's, numbers within 1e-9 (a decoded column is written to
    12 digits), of the same type (a mean's one selected bool is given as its int, as ever)."""
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        for g, w in zip(got, program(xs), strict=True):
            w = int(w) if type(w) is bool and type(g) is int else w
            assert type(g) is type(w), (xs, got)
            assert g == w or abs(g - w) <= 1e-9 * max(1, abs(w)), (xs, got)


def test_a_map_of_a_copy_of_ints_and_floats_equal_as_numbers_compiles() -> None:
    """`2 * v` of a copied prefix mean (1 at position 0, 1.0 after it) gives 2 and 2.0 from one
    column of the copy: the map's rows for the two were one (MapRows), but its one-hot kept an
    empty column for 2.0, and the decoder, told 2.0 is that column, was refused (argmax margin
    0). The empty twin is now written as the column its row went to (map_views._twins_merged)."""
    x = lib.shift_by(2, lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda t: t, rasp.tokens))))
    program = rasp.numerical(rasp.Map(lambda v: -1 if v is None else 2 * v, x))
    vocab = [1, 2, 5]
    model = compile_sop(program, vocab, 5)
    _agrees(
        program, model, [list(t) for n in range(1, 6) for t in itertools.product(vocab, repeat=n)]
    )


def test_a_copy_of_numbers_and_none_copies_one_number() -> None:
    """A copy whose values hold None beside many numbers (a shift of a shift, None at its first
    position) maps None to the stand-in before the copy too: shift_by(1, shift_by(1, x)) of a
    prefix mean at N = 8 copied the one-hot of its values, 1,098,126 parameters, then 55,116 (the
    map back's one-hot output), now 2,047 (the copied number, output.none_at)."""
    program = lib.shift_by(1, lib.shift_by(1, _frac_prevs()))
    model = compile_sop(program, VOCAB, 8)
    assert model.param_count() < 5_000  # 2,047
    rng = random.Random(9)
    inputs = [rng.choices(VOCAB, k=rng.randint(1, 8)) for _ in range(300)]
    _agrees(program, model, inputs + [[v] * 8 for v in VOCAB])


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

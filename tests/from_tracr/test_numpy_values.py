"""numpy scalars a tracr function gives reach the functions that read them as numpy's, as in tracr
(rasp.tracr.numpy_values): the lowered graph, `rasp run` and the compiled model agree with tracr."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import sops
from rasp import tracr as rasp
from rasp.errors import CompileError, RaspRuntimeError
from rasp.tracr.lower import to_sops


def _check(program: rasp.SOp, vocab: list, max_len: int) -> None:
    inputs = [list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]
    lowered = to_sops(program)
    model = compile_sop(program, vocab, max_len)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        # tracr's values, numpy scalars as Python's (np.float32(1.0) == 1.0000000298023224)
        want = [w.item() if isinstance(w, np.generic) else w for w in program(xs)]
        assert list(sops.evaluate(lowered, xs).values) == want, xs
        assert got == want, xs


def test_numpy_bools_add_as_numpy_adds_them() -> None:
    big = rasp.Map(lambda x: np.abs(x) > 1, rasp.tokens)
    some = rasp.Map(lambda x: np.abs(x) > 0, rasp.tokens)
    both = rasp.SequenceMap(lambda a, b: a + b, big, some)
    assert both([2]) == [True]  # np.True_ + np.True_ (a logical or); Python's True + True is 2
    _check(both, [0, 1, 2], 2)
    # through a copy (an aggregate of one selected value) too
    copied = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ), big)
    _check(rasp.SequenceMap(lambda a, b: a + b, copied, some), [0, 1, 2], 2)


def test_float32_values_compute_in_float32() -> None:
    third = rasp.Map(lambda x: np.float32(x) / 3, rasp.tokens)
    program = rasp.Map(lambda v: v * 3, third, simplify=False)
    assert program([1]) == [1.0]  # in float32; in float64 it is 1.0000000298023224
    _check(program, [1, 2], 2)


def test_a_value_given_as_numpy_and_as_python_is_refused_where_a_function_reads_it() -> None:
    mixed = rasp.Map(lambda x: np.bool_(x > 1) if x else True, rasp.tokens)
    program = rasp.SequenceMap(lambda a, b: a + b, mixed, mixed)
    with pytest.raises(CompileError, match="numpy's scalars compute differently"):
        compile_sop(program, [0, 1, 2], 2)


def _after_previous(values: rasp.SOp, default: object) -> rasp.SOp:
    """The value at the position before (none at position 0: the default)."""
    previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)
    return rasp.Aggregate(previous, values, default=default)


def test_a_default_equal_to_a_numpy_value_the_aggregate_copies_is_refused() -> None:
    # tracr: the default 0 is an int, a copied np.int64(0) is not; a model holds one 0 for both
    copied = _after_previous(rasp.Map(lambda x: np.int64(x), rasp.tokens), 0)
    program = rasp.Map(lambda a: isinstance(a, int), copied)
    assert program([0, 0]) == [True, False]
    with pytest.raises(
        CompileError, match="True for the aggregate default 0 but False for np.int64"
    ):
        compile_sop(program, [0, 1], 3)
    # a reader that gives one result for both compiles
    _check(rasp.Map(lambda a: a + 1, copied), [0, 1], 3)
    # np.False_ + np.False_ is False, the default's False + False is 0
    big = _after_previous(rasp.Map(lambda x: np.abs(x) > 1, rasp.tokens), False)
    with pytest.raises(CompileError, match="0 for the aggregate default False but False for np"):
        compile_sop(rasp.Map(lambda a: a + a, big), [0, 1, 2], 2)
    # a default the function never gives is read as written
    _check(rasp.Map(lambda a: a + a, _after_previous(big.sop, None)), [0, 1, 2], 2)


def test_a_reader_gets_numpy_values_from_a_map_that_dedupe_merges() -> None:
    big = rasp.Map(lambda x: np.abs(x) > 1, rasp.tokens)
    twin = rasp.Map(big.f, rasp.tokens)  # one function, one input: the compiler keeps one map
    width = rasp.SelectorWidth(
        rasp.Select(twin, rasp.Map(lambda t: t > 1, rasp.tokens), rasp.Comparison.EQ)
    )
    both = rasp.SequenceMap(lambda a, b: a + b, big, big)  # np.True_ + np.True_ is True
    program = rasp.SequenceMap(lambda w, x: x, width, both)
    assert program([2]) == [True]
    _check(program, [0, 1, 2], 2)


def test_a_comparison_select_of_numpy_float32_values_is_refused() -> None:
    tenths = rasp.Map(lambda x: np.float32(x) / 10, rasp.tokens)
    same = rasp.Select(tenths, rasp.Map(lambda x: x / 10, rasp.tokens), rasp.Comparison.EQ)
    program = rasp.SelectorWidth(same)
    assert program([1]) == [1]  # np.float32(0.1) == 0.1 compares in float32
    with pytest.raises(CompileError, match="compares them rounded"):
        compile_sop(program, [1, 2, 3], 2)
    # a predicate function is given the numpy values, as tracr gives them
    by_function = rasp.Select(same.keys, same.queries, lambda k, q: k == q)
    _check(rasp.SelectorWidth(by_function), [1, 2, 3], 2)


def test_an_order_of_numpy_float32_values_float32_keeps_compiles() -> None:
    # halves and small ints are exact in float32: tracr's rounded comparison is the exact one
    halves = rasp.Map(lambda x: np.float32(x) / 2, rasp.tokens)
    for comparison in (rasp.Comparison.LT, rasp.Comparison.LEQ, rasp.Comparison.GT):
        by_index = rasp.SelectorWidth(rasp.Select(halves, rasp.indices, comparison))
        _check(by_index, [1, 2, 3], 3)
        by_token = rasp.SelectorWidth(rasp.Select(rasp.tokens, halves, comparison))
        _check(by_token, [1, 2, 3], 3)
    quarters = rasp.Map(lambda x: x / 4, rasp.tokens)  # Python floats, each exact in float32
    _check(rasp.SelectorWidth(rasp.Select(halves, quarters, rasp.Comparison.GEQ)), [1, 2, 3], 3)
    thirds = rasp.Map(lambda x: np.float32(x) / 3, rasp.tokens)  # no Python number rounds to one
    _check(rasp.SelectorWidth(rasp.Select(thirds, rasp.indices, rasp.Comparison.EQ)), [1, 3], 3)


def test_an_order_of_numpy_float32_values_a_rounding_changes_is_refused() -> None:
    # 16777217 rounds to float32's 16777216.0, which the keys give: tracr's LT is False there
    big = rasp.Map(lambda x: np.float32(x), rasp.tokens)
    above = rasp.Map(lambda x: x + 1, rasp.tokens)
    program = rasp.SelectorWidth(rasp.Select(big, above, rasp.Comparison.LT))
    assert program([2**24]) == [0]  # exactly, 16777216 < 16777217
    with pytest.raises(CompileError, match="16777217 rounds to 16777216.0, a value it gives"):
        compile_sop(program, [1, 2**24], 2)
    # Python floats that are not float32's, where the keys give their roundings: LEQ differs
    tenths = rasp.Map(lambda x: np.float32(x) / 10, rasp.tokens)
    exact = rasp.Map(lambda x: x / 10, rasp.tokens)
    program = rasp.SelectorWidth(rasp.Select(tenths, exact, rasp.Comparison.LEQ))
    assert program([1]) == [1]  # exactly, float32(0.1) > 0.1
    with pytest.raises(CompileError, match=r"0\.[123] rounds to 0\.[123]000000"):
        compile_sop(program, [1, 2, 3], 2)
    # an aggregate's values (its means) are not known: refused
    mean = rasp.numerical(
        rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), exact)
    )
    with pytest.raises(CompileError, match="compares them rounded"):
        compile_sop(rasp.SelectorWidth(rasp.Select(tenths, mean, rasp.Comparison.LT)), [1, 2], 2)


def test_a_reader_telling_a_mean_of_numpy_floats_from_a_python_float_is_refused() -> None:
    floats = rasp.numerical(rasp.Map(lambda x: np.float64(x), rasp.tokens))
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    mean = rasp.numerical(rasp.Aggregate(before, floats, default=None))
    program = rasp.Map(lambda a: type(a).__name__, mean)
    assert program([0, 1, 0]) == [None, "float64", "float64"]  # np.float64(0.5): the mean's 0.5
    with pytest.raises(
        CompileError, match=r"'float64' for np.float64\(0.5\) \(a mean of .* but 'float' for 0.5"
    ):
        compile_sop(program, [0, 1], 3)
    _check(rasp.Map(lambda a: a * 2, mean), [0, 1], 3)  # one result for both: compiled


def test_a_value_given_as_numpy_and_as_python_only_compared_by_a_select_compiles() -> None:
    # an exact comparison reads np.True_ and True alike: only a function reading them is refused
    mixed = rasp.Map(lambda x: np.bool_(x > 1) if x else True, rasp.tokens)
    positive = rasp.Map(lambda x: x > 0, rasp.tokens)
    _check(rasp.SelectorWidth(rasp.Select(mixed, positive, rasp.Comparison.EQ)), [0, 1, 2], 3)


def _plain(values: list) -> list:
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def test_the_lowered_graph_s_value_depends_only_on_the_input() -> None:
    """A function gives True as np.True_ on one input and as True on another: the value a reader
    computes on an input is tracr's, whichever inputs were evaluated before."""
    mixed = rasp.Map(lambda x: np.bool_(x > 1) if x else True, rasp.tokens)
    program = rasp.SequenceMap(lambda a, i: a + a, mixed, rasp.indices)
    assert program([0]) == [2] and program([2]) == [True]
    lowered = to_sops(program)
    for order in ([[0], [2], [0]], [[2], [0], [2]]):
        for xs in order:
            assert list(sops.evaluate(lowered, xs).values) == _plain(program(xs)), (order, xs)
    # one input holding both forms of True: each position's reader gets its own position's form
    for before in ([0], [2]):
        sops.evaluate(lowered, before)
        assert list(sops.evaluate(lowered, [2, 0]).values) == [True, 2] == _plain(program([2, 0]))
    # where the position is not known (one function called by two nodes of a rewritten graph),
    # the forms the input gave the value are tried: different results are an error, not a guess
    evaluation = sops.Evaluator([2, 0])
    evaluation.value(lowered)
    twin = sops.MapSOp(fn=lowered.fn, inputs=lowered.inputs, text="twin", loose=True)
    with pytest.raises(RaspRuntimeError, match=r"gives True for \(np.True_, 0\) and 2 for"):
        evaluation.value(twin)


@pytest.mark.parametrize(
    ("make", "raises"),
    [
        (lambda x: np.bool_(x > 1), True),
        (lambda x: np.int64(x), True),
        (lambda x: np.float32(x), True),
        (lambda x: np.float64(x), False),
        (lambda x: x > 1, False),
    ],
)
def test_a_mean_of_several_numpy_ints_or_bools_raises_as_tracr_s_does(make, raises) -> None:
    """tracr's mean takes Python's ints, bools and floats (np.float64 is a float): of several
    np.True_ or np.int64 it raises ValueError; the lowered graph raises there too, located at the
    aggregate, and a model promises nothing there (verify skips the input)."""
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    mean = rasp.numerical(rasp.Aggregate(upto, rasp.Map(make, rasp.tokens), default=0))
    lowered = to_sops(mean)
    assert list(sops.evaluate(lowered, [2]).values) == _plain(mean([2]))  # one selected: as is
    if not raises:
        assert list(sops.evaluate(lowered, [2, 3]).values) == _plain(mean([2, 3]))
        return
    with pytest.raises(ValueError, match="Only types int, bool, and float"):
        mean([2, 3])
    with pytest.raises(RaspRuntimeError, match="Only types int, bool, and float") as err:
        sops.evaluate(lowered, [2, 3])
    assert err.value.span is not None and "rasp.Aggregate" in err.value.span.text()


def test_numpy_scalars_written_in_a_full_or_a_constant_reach_their_readers_as_numpy() -> None:
    """tracr keeps the fill of `Full` and the values of `ConstantSOp` as written: a numpy scalar
    there computes as numpy's (np.True_ + np.True_ is True, np.int64 is no int). They were made
    Python values, so the graph and a certified model gave 2 and True where tracr gives True and
    False."""
    full = rasp.SequenceMap(lambda a, t: a + a, rasp.Full(np.True_), rasp.tokens)
    assert full([1, 2]) == [True, True]
    _check(full, [1, 2], 2)
    _check(rasp.Map(lambda a: a + a, rasp.Full(np.True_)), [1, 2], 2)
    constant = rasp.Map(lambda a: isinstance(a, int), rasp.ConstantSOp([np.int64(1), 2]))
    assert constant([1, 2]) == [False, True]
    assert list(sops.evaluate(to_sops(constant), [1, 2]).values) == [False, True]
    model = compile_sop(constant, [1, 2], 2)
    assert run_compiled(model, [[1, 2], [2, 2]]) == [[False, True], [False, True]]
    # an order of a float32 fill over small ints compiles; its equality with 0.1 is refused
    half = rasp.SelectorWidth(
        rasp.Select(rasp.Full(np.float32(0.5)), rasp.tokens, rasp.Comparison.LT)
    )
    _check(half, [1, 2], 2)
    tenth = rasp.Select(
        rasp.Full(np.float32(0.1)), rasp.Map(lambda x: x / 10, rasp.tokens), rasp.Comparison.EQ
    )
    with pytest.raises(CompileError, match="0.1 rounds to 0.10000000149"):
        compile_sop(rasp.SelectorWidth(tenth), [1, 2], 2)
    # one value written in both forms, read by a function: refused
    mixed = rasp.Map(lambda a: a + a, rasp.ConstantSOp([np.True_, True]))
    with pytest.raises(CompileError, match="numpy's scalars compute differently"):
        compile_sop(mixed, [1, 2], 2)


def _mixed_floats() -> rasp.SOp:
    """np.float64(0.5) for "a", Python floats for the others: a mean of several is np.float64
    where an "a" is selected (np.float64 + float is np.float64), Python's where none is."""
    return rasp.numerical(
        rasp.Map(lambda t: np.float64(0.5) if t == "a" else (1.0 if t == "b" else 0.0), rasp.tokens)
    )


def _prefix_mean(values: rasp.SOp, comparison: rasp.Comparison) -> rasp.SOp:
    select = rasp.Select(rasp.indices, rasp.indices, comparison)
    return rasp.numerical(rasp.Aggregate(select, values, default=None))


def test_a_mean_of_python_floats_equal_to_a_numpy_value_the_function_gives_is_refused() -> None:
    # the function gives 0.5 as np.float64 ("a"); the mean of 1.0 and 0.0 ("bc") is Python's 0.5
    # (DeepMind tracr: [other, float]); the model was built on the np.float64 and said float64
    mean = _prefix_mean(_mixed_floats(), rasp.Comparison.LEQ)
    program = rasp.Map(lambda x: type(x).__name__ if x == 0.5 else "other", mean)
    assert program(list("bc")) == ["other", "float"]
    assert program(list("a")) == ["float64"]
    with pytest.raises(
        CompileError, match=r"'float' for 0.5 \(a mean of Python values\) but 'float64' for np"
    ):
        compile_sop(program, list("abc"), 3)
    _check(rasp.Map(lambda x: x > 0.4, mean), list("abc"), 3)  # one result for both: compiled


def test_a_reader_telling_two_means_forms_apart_only_together_is_refused() -> None:
    # "bab" at position 1: both means are np.float64(0.75) in tracr (DeepMind tracr: 'both');
    # each alone in its other form gives 'no', as the model's built forms (0.75, 0.75) do
    values = _mixed_floats()
    before = _prefix_mean(values, rasp.Comparison.LEQ)
    after = _prefix_mean(values, rasp.Comparison.GEQ)
    program = rasp.SequenceMap(
        lambda x, y: "both" if type(x) is type(y) is np.float64 and 0.5 not in (x, y) else "no",
        before,
        after,
    )
    assert program(list("bab")) == ["no", "both", "no"]
    with pytest.raises(CompileError, match=r"'both' for np.float64\(.*\) and np.float64"):
        compile_sop(program, list("abc"), 3)


def test_a_numpy_default_equal_to_a_mean_of_python_floats_is_refused() -> None:
    # "bca": position 0 selects nothing (tracr: the default np.float64(0.5), 'float64'), position
    # 2 averages 1.0 and 0.0 (Python's 0.5, 'float'); the model, one 0.5, said float64 for both
    values = rasp.numerical(rasp.Map(lambda t: 1.0 if t == "b" else 0.0, rasp.tokens))
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    mean = rasp.numerical(rasp.Aggregate(before, values, default=np.float64(0.5)))
    program = rasp.Map(lambda x: type(x).__name__, mean)
    assert program(list("bca")) == ["float64", "float", "float"]
    with pytest.raises(
        CompileError, match=r"'float' for 0.5 \(a mean of Python values\) but 'float64' for np"
    ):
        compile_sop(program, list("abc"), 3)
    _check(rasp.Map(lambda x: x * 2, mean), list("abc"), 3)


def test_a_numpy_default_of_a_copy_is_held_as_python_s_and_read_as_written() -> None:
    # the graph held the default np.float64(0.5) beside the function's 0.5 (np.float64 for "b"):
    # the copy's one-hot columns told them apart and compiling raised an internal ValueError
    values = rasp.numerical(
        rasp.Map(
            lambda t: True if t == "a" else (np.float64(0.5) if t == "b" else 0.25), rasp.tokens
        )
    )
    previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)
    copied = rasp.numerical(rasp.Aggregate(previous, values, default=np.float64(0.5)))
    lowered = to_sops(copied)
    assert type(lowered.default) is float  # the graph's value; the reader gets the written one
    names = rasp.Map(lambda x: type(x).__name__, copied)
    assert names(list("bca")) == ["float64", "float64", "float"]  # DeepMind tracr's
    assert [str(v) for v in sops.evaluate(to_sops(names), list("bca")).values] == [
        "float64",
        "float64",
        "float",
    ]
    with pytest.raises(CompileError, match="'float' for 0.5 \\(a mean of Python values\\)"):
        compile_sop(names, list("abc"), 3)  # (the compiler does not know it copies one)
    _check(rasp.Map(lambda x: x * 2, copied), list("abc"), 3)


def test_a_mean_no_selection_of_python_values_can_give_is_not_ambiguous() -> None:
    # of 0.0 and 2.0 (Python's), at most 3 at a time, no mean is 0.5: tracr gives 0.5 only as
    # np.float64 (one "a", or a mean of "a"s), as the model is built; refused before as any float
    # might be such a mean. At length 4, (0, 0, 0, 2) averages to Python's 0.5: refused there
    values = rasp.numerical(
        rasp.Map(lambda t: np.float64(0.5) if t == "a" else (0.0 if t == "b" else 2.0), rasp.tokens)
    )
    mean = _prefix_mean(values, rasp.Comparison.LEQ)
    program = rasp.Map(lambda x: type(x).__name__ if x == 0.5 else "other", mean)
    _check(program, list("abc"), 3)
    assert program(list("bbbc")) == ["other", "other", "other", "float"]
    with pytest.raises(CompileError, match=r"'float' for 0.5 \(a mean of Python values\)"):
        compile_sop(program, list("abc"), 4)


def test_a_numpy_default_no_value_equals_is_read_as_written_by_the_model() -> None:
    # 0.25 is only the default (no mean of 1.0 and 0.0, at most 3, is 0.25): the model is built
    # on np.float64(0.25), as tracr gives it where nothing is selected (refused before: the graph
    # held 0.25 as Python's, a form tracr never gives it in)
    values = rasp.numerical(rasp.Map(lambda t: 1.0 if t == "b" else 0.0, rasp.tokens))
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    mean = rasp.numerical(rasp.Aggregate(before, values, default=np.float64(0.25)))
    program = rasp.Map(lambda x: type(x).__name__, mean)
    assert program(list("bca")) == ["float64", "float", "float"]
    _check(program, list("abc"), 3)


def test_a_float_form_of_a_mean_held_as_a_bool_is_given_to_its_reader() -> None:
    """A mean of [0, np.float64(2)] is np.float64(1.0), the same number as one selected
    np.bool_(1): the graph held it as the bool, whose forms were not tried, so a SequenceMap
    telling np.float64 apart only where both means are np.float64 compiled, certified, and gave
    'no' where tracr gives 'both' (['a', 'b', 'b']; numpy_means_campaign seed 745000, #479)."""
    v0 = rasp.numerical(
        rasp.Map(
            lambda t: 0 if t == "a" else (np.float64(2) if t == "b" else np.bool_(1)), rasp.tokens
        )
    )
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    after = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.GEQ)
    m0 = rasp.numerical(rasp.Aggregate(before, v0, default=False))
    m1 = rasp.numerical(rasp.Aggregate(after, v0, default=0.0))
    both = rasp.SequenceMap(
        lambda x, y: "both" if type(x) is type(y) is np.float64 else "no", m0, m1
    )
    assert both(["a", "b", "b"]) == ["no", "no", "both"]  # tracr's (and rasp.tracr's) values
    with pytest.raises(CompileError, match="tracr gives either on some input"):
        compile_sop(both, ["a", "b", "c"], 3)


def test_a_whole_mean_s_float_form_read_as_an_equal_number_still_compiles() -> None:
    """The float forms of a mean held as an int or bool are tried, and a reader giving an equal
    number of another type (2 for 2.0: a type, not a value, to `rasp verify`) is not refused."""
    v0 = rasp.numerical(rasp.Map(lambda t: 0 if t == "a" else np.float64(2), rasp.tokens))
    mean = rasp.numerical(
        rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), v0)
    )
    plus = rasp.numerical(rasp.Map(lambda x: x + 1, mean))
    model = compile_sop(plus, ["a", "b"], 3)
    assert model.metadata["certificate"]["ok"]


def test_a_bool_default_equal_to_an_int_the_function_gives_is_tried_in_its_own_form() -> None:
    """The reader's calls were kept in a dict keyed by the values, where (0,) and (False,) are one
    key: only (0,) was asked about its forms, so the default False, which tracr gives as written
    (isinstance(False, int) is True; a selected np.bool_(0) or np.int64(0) gives False), was never
    tried. The model compiled, certified, and gave False where tracr gives True at every first
    position (numpy_means_campaign seed 760002, #1564)."""
    values = rasp.numerical(
        rasp.Map(lambda t: np.int64(0) if t == "a" else np.bool_(0), rasp.tokens)
    )
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    mean = rasp.numerical(rasp.Aggregate(before, values, default=False))
    program = rasp.Map(lambda x: isinstance(x, int), mean)
    assert program(["b", "b"]) == [True, False]  # tracr's (and rasp.tracr's) values
    with pytest.raises(CompileError, match="the aggregate default False"):
        compile_sop(program, ["a", "b", "c"], 3)

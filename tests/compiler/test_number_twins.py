"""Regressions of a soundness bug: models that certified and still differed from the interpreter.

Int/float twins (1 from a width, 1.0 from a mean) are equal Python values but different columns of
a categorical reading; a dict keyed by value merged them, so one column's rows were never built
(and the certifier, which checks the rows that were built, never saw the gap). And a mean of values
that include None averages the numbers on inputs that select only numbers, which the value analysis
had left out."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from test_compile import all_inputs, check_inputs

import transformer
from compiler import compile_sop
from compiler.fits import float64_twins, merge_noise
from rasp import sops as S
from rasp.errors import CompileError
from rasp.nodes import TokenKind


def _none_passing(fn):
    return lambda *args: None if any(a is None for a in args) else fn(*args)


@pytest.mark.exactness
def test_twins_and_none_in_one_reading_compile_to_the_interpreters_values() -> None:
    tok = S.TokensSOp(kind=TokenKind.INT)
    same = S.Select(tok, tok, S.Comparison.EQ)
    width = S.SelectorWidthSOp(selector=same)
    mean = S.AggregateSOp(selector=same, sop=tok, default=-1)
    maybe = S.MapSOp(fn=lambda v: None if v == -1 else v, inputs=(mean,), text="m", loose=True)
    top = S.MapSOp(fn=_none_passing(max), inputs=(width, maybe), text="mx", loose=True)
    out = S.MapSOp(fn=_none_passing(lambda x, y: x + y), inputs=(tok, top), text="res", loose=True)
    vocab = [0, 1, 2]
    model = compile_sop(out, vocab, 4)  # certified: the compiler refuses any model it cannot prove
    runtime = transformer.from_tensors(model.weights, model.metadata)
    for n in range(1, 5):
        for tokens in itertools.product(vocab, repeat=n):
            want = list(S.evaluate(out, list(tokens)).values)
            got = runtime.run([list(tokens)])[0]
            assert [None if v is None else float(v) for v in got] == [
                None if v is None else float(v) for v in want
            ], tokens


def test_a_mean_of_numbers_and_none_is_refused_where_it_may_average() -> None:
    tok = S.TokensSOp(kind=TokenKind.INT)
    maybe = S.MapSOp(fn=lambda v: None if v == 0 else v, inputs=(tok,), text="nz", loose=True)
    every = S.Select(tok, tok, S.Comparison.NEQ)
    mean = S.AggregateSOp(selector=every, sop=maybe, default=0.5, loose=True)
    assert S.evaluate(mean, [1, 2, 1]).values == (2, 1.0, 2)  # numbers only: averaged
    with pytest.raises(CompileError) as err:
        compile_sop(mean, [0, 1, 2], 4)
    (problem,) = err.value.diagnostics
    assert "may average several numbers, but its values also include None" in problem.message
    assert "map the other values to numbers" in (problem.hint or "")


@pytest.mark.exactness
def test_a_twin_output_merged_into_an_equal_ones_row_keeps_its_rows_downstream() -> None:
    """`v0 + 2` over a suffix mean v0 gives 2 (v0 the int 0 of one key) and 2.0 (the float 0.0 of
    several), which read alike: the map's row for 2.0 was merged into the row for 2, so the canon
    table, built from the kept rows, did not list 2.0, and the step MLP of `v3 / (v0 + 2)` with
    `v0 + 2` as context dropped every row of 2.0 as a value that never occurs. At "aaa",
    position 1 (v3 = 1.5 there) the certified model gave 0.5 where the interpreter gives 0.75."""
    from tests.compiler.test_compile import all_inputs, check_inputs
    from tests.compiler.test_total_orders import _program

    root = _program(
        'v0 = aggregate(select(indices, indices, >=), indicator(tokens == "b"), 0);'
        "v3 = aggregate(select(indices, indices, >=), indices, 0);"
        "res = v0 if indices < 1 else v3 / (v0 + 2);"
    )
    model = compile_sop(root, list("ab"), 4)
    assert check_inputs(model, root, all_inputs(list("ab"), 4)) == 30


@pytest.mark.exactness
def test_a_value_merged_with_its_twin_at_one_point_and_alone_at_another_is_one_column() -> None:
    """`v1 * length` (v1 a prefix mean of digits), stepped over one sum of both, gives 4.0 alone
    at one sum (2.0 * 2) and beside 4 at another (1.333... * 3 is 4.0 in float64, with 1 * 4): its
    one-hot had columns 4 and 4.0, and its canon table told the map above that 4.0 reads as the
    column 4, so the table of `... if indices < 3 else v1` had no row for the column 4.0, which
    the step MLP writes at "022", position 2: certified, and 1 there where the interpreter has 4."""
    from tests.compiler.test_compile import all_inputs, check_inputs
    from tests.compiler.test_total_orders import _program

    root = _program(
        "v1 = aggregate(select(indices, indices, <=), tokens_int, 0);"
        "res = (v1 * length) if indices < 3 else v1;"
    )
    model = compile_sop(root, list("012"), 4)
    assert check_inputs(model, root, all_inputs(list("012"), 4)) == 120


@pytest.mark.exactness
def test_distinct_whole_numbers_within_float64_noise_are_not_one_snap_target() -> None:
    """10^10, 10^10 + 1 and 10^10 + 2 lie within FLOAT64_NOISE (relative 1e-9) of each other,
    so the numerical output listed only 10^10, and the decoder's check took 10^10 + 1 snapping
    to 10^10 as float64 noise: certified, and `rasp verify` found it wrong on every input holding
    a 1 (ints compare exactly). Ints carry no rounding noise below 2^53: two different ones never
    decode as each other (here: a one-hot output of the three)."""
    from tests.compiler.limit_checks import agrees_everywhere, program

    root = program("res = tokens_int + 10 ^ 10;", "res")
    model = compile_sop(root, [0, 1, 2], 2)
    assert model.metadata["output"]["values"] == [10**10, 10**10 + 1, 10**10 + 2]
    agrees_everywhere(root, model, [0, 1, 2], 2)


def test_different_ints_are_not_merged_into_one_float() -> None:
    """Each position's mean over the keys of its own token is that token, 10^10 or 10^10 + 1:
    the two were one point written as 10000000000.0, an output of floats within 1e-6 of the
    ints the program gives (the model answered 10000000000.0 for 10000000001). Float32 cannot
    tell the means apart: refused, located."""
    from tests.compiler.limit_checks import program

    root = program("res = aggregate(select(tokens, tokens, ==), tokens_int);", "res")
    with pytest.raises(CompileError) as refused:
        compile_sop(root, [10**10, 10**10 + 1], 2)
    assert refused.value.span is not None and "float32" in str(refused.value)


def test_a_whole_number_never_stands_for_a_different_int() -> None:
    """A prefix mean of tokens_int + 10^9 at N = 2 takes 10^9, 10^9 + 0.5 and 10^9 + 1, within
    FLOAT64_NOISE of each other: they were merged into one point written as 1000000000.0
    (same_value lets an int be within 1e-6 of a float), and the output's whole types decoded it
    as the int 10^9 where the program gives 10^9 + 1, certified. Different whole numbers are not
    float64 twins, and no merged value stands for a different int: float32 cannot tell these
    apart, so the compile is refused, located."""
    from tests.compiler.limit_checks import program

    root = program("res = aggregate(select(indices, indices, <=), tokens_int + 10 ^ 9);", "res")
    with pytest.raises(CompileError) as refused:
        compile_sop(root, [0, 1], 2)
    assert refused.value.span is not None and "float32" in refused.value.render()


def test_float64_twins_are_never_two_different_whole_numbers() -> None:
    assert float64_twins(0.1 + 0.2, 0.3) and float64_twins(1e9, 1e9)
    assert not float64_twins(1e9, 1e9 + 1) and not float64_twins(10**10, 10**10 + 2)
    assert float64_twins(1e9, 1e9 + 0.5)  # not both whole: noise may have told them apart
    assert float64_twins(2.0**60, 2.0**60 + 2**8)  # past 2^53 wholes are rounded too
    assert merge_noise([10**10, 10**10 + 1, 1e9, 1e9 + 1e-7]) == (10**10, 10**10 + 1, 1e9)


def _copied_prefix_mean(default: object, reader: Callable[[object], object]) -> S.SOp:
    """A prefix mean of 0 and 1.0 (0 where one key is selected, 0.0 where several), copied from
    the key before by a categorical head with `default`, read by `reader`."""
    t, i = S.TokensSOp(name="tokens"), S.IndicesSOp(name="indices")
    v = S.MapSOp(fn=lambda x: 1.0 if x == "b" else 0, inputs=(t,), text="v")
    mean = S.AggregateSOp(selector=S.Select(i, i, S.Comparison.LEQ), sop=v, default=0, name="m0")
    prev = S.MapSOp(fn=lambda q: q - 1, inputs=(i,), text="indices - 1")
    copy = S.AggregateSOp(selector=S.Select(i, prev, S.Comparison.EQ), sop=mean, default=default)
    return S.MapSOp(fn=reader, inputs=(copy,), text="reader")


@pytest.mark.exactness
def test_a_copy_s_default_equal_to_a_copied_value_shares_its_column() -> None:
    """The copy's one-hot had a column 0 for the mean's 0 and 0.0 (one number to the mean's
    reading) and its default 0.0 a column of its own, which the copy's canonical values then
    named as 0.0's: a reader telling 0 from 0.0 was given the copied 0.0 as the int, compiled,
    certified, and gave True where the interpreter gives False (['a', 'a', 'a'] at position 2;
    numpy_means_campaign seed 760002, #2708, through tracr)."""
    res = _copied_prefix_mean(0.0, lambda x: isinstance(x, int))
    assert S.evaluate(res, list("aaa")).values == (False, True, False)
    with pytest.raises(CompileError, match="equal numbers"):
        compile_sop(res, list("abc"), 3)
    # a reader that does not tell them apart compiles, the default decoded in the shared column
    for reader in (lambda x: x + 1, lambda x: x):
        res = _copied_prefix_mean(0.0, reader)
        check_inputs(compile_sop(res, list("abc"), 3), res, all_inputs(list("abc"), 3))

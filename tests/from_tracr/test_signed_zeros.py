"""A float zero's sign, which a model does not keep (0.0 and -0.0 are one number to it), read by a
tracr function: refused, located, where the program can hold a -0.0 (rasp.tracr.signed_zeros).

tracr's evaluator's values (DeepMind tracr, recorded by hand with tracr's `rasp.evaluate`):
`str(SequenceMap(lambda x, y: -x if y == 0 else x, tokens, indices))` on [0.0, 0.0] is
['-0.0', '0.0']. Before this check the model compiled, certified, and gave ['0.0', '0.0']."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError

VOCAB = [0.0, 1.0, 2.0]


def _negated_at_0() -> rasp.SOp:
    return rasp.SequenceMap(lambda x, y: -x if y == 0 else x, rasp.tokens, rasp.indices)


def _inputs(max_len: int) -> list[list[Any]]:
    return [list(t) for n in range(1, max_len + 1) for t in itertools.product(VOCAB, repeat=n)]


def _refused(program: rasp.SOp, *expected: str) -> str:
    with pytest.raises(CompileError) as err:
        compile_sop(program, VOCAB, 3)
    text = str(err.value)
    assert "holds 0.0 and -0.0 as one number" in text
    for part in expected:
        assert part in text
    return text


def test_the_lowered_graph_gives_tracrs_signed_zero() -> None:
    program = rasp.Map(lambda x: str(x), _negated_at_0())
    assert program([0.0, 0.0]) == ["-0.0", "0.0"]  # tracr's values


def test_a_map_reading_both_zeros_is_refused_at_the_map() -> None:
    program = rasp.Map(lambda x: str(x), _negated_at_0())
    _refused(program, "'0.0' for 0.0 and '-0.0' for -0.0", "gives it")


def test_a_zero_copied_by_an_aggregate_is_refused() -> None:
    one = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)
    program = rasp.Map(lambda x: repr(x), rasp.Aggregate(one, _negated_at_0()))
    _refused(program)


def test_a_predicate_reading_both_zeros_is_refused() -> None:
    signed = _negated_at_0()
    program = rasp.SelectorWidth(rasp.Select(signed, signed, lambda k, q: str(k) < str(q)))
    _refused(program, "rasp.Select(signed, signed")


def _numpy_negated_at_0() -> rasp.SOp:
    # np.float64 values: tracr gives them to a reader as numpy's scalars
    return rasp.numerical(
        rasp.SequenceMap(lambda x, y: np.float64(-x if y == 0 else x), rasp.tokens, rasp.indices)
    )


def test_a_map_reading_the_sign_in_numpy_form_only_is_refused() -> None:
    # `v.round(1)` raises on a Python float: the zeros' check called the map on Python values,
    # saw one error for both zeros, and the model (certified) gave '0.0' where tracr gives '-0.0'
    program = rasp.Map(lambda v: str(v.round(1)), _numpy_negated_at_0())
    assert program([0.0, 0.0]) == ["-0.0", "0.0"]  # tracr's values
    _refused(program, "'0.0' for 0.0 and '-0.0' for -0.0")


def test_a_predicate_reading_the_sign_in_numpy_form_only_is_refused() -> None:
    signed = _numpy_negated_at_0()
    select = rasp.Select(signed, signed, lambda k, q: str(k.round(1)) < str(q.round(1)))
    program = rasp.numerical(rasp.SelectorWidth(select))
    _refused(program)


def test_a_default_of_negative_zero_is_a_source() -> None:
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    program = rasp.Map(lambda x: str(x), rasp.Aggregate(before, rasp.tokens, default=-0.0))
    assert program([0.0, 0.0]) == ["-0.0", "0.0"]  # tracr's values
    _refused(program, "an Aggregate's default -0.0")


def test_a_comparison_of_signed_zeros_still_compiles() -> None:
    # == and < do not see the sign: 0.0 == -0.0 in tracr as in a model
    signed = _negated_at_0()
    program = rasp.SelectorWidth(rasp.Select(signed, signed, rasp.Comparison.LT))
    inputs = _inputs(3)
    got = run_compiled(compile_sop(program, VOCAB, 3), inputs)
    assert got == [program(xs) for xs in inputs]


@pytest.mark.parametrize(
    "program",
    [
        rasp.Map(lambda x: str(x), rasp.tokens),  # only 0.0: no other zero to confuse
        rasp.Map(lambda x: str(-x), rasp.tokens),  # one map of the tokens: -0.0 only
        rasp.Map(lambda x: -x, _negated_at_0()),  # -0.0 and 0.0 out: one number, as tracr's
    ],
    ids=["str", "str-neg", "neg"],
)
def test_a_program_of_one_zero_compiles(program: rasp.SOp) -> None:
    inputs = _inputs(3)
    got = run_compiled(compile_sop(program, VOCAB, 3), inputs)
    assert got == [program(xs) for xs in inputs]


def _copied_sign() -> rasp.SOp:
    """copysign of a numerical copy of a token's zero: -0.0 for 0.0 at position 0."""
    one = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)
    copied = rasp.numerical(rasp.Aggregate(one, rasp.numerical(_negated_at_0()), default=0))
    return rasp.Map(lambda v: math.copysign(1.0, v) < 0, copied)


@pytest.mark.parametrize(
    "build", [lambda: rasp.Map(lambda x: str(x), _negated_at_0()), _copied_sign]
)
def test_a_graph_resolved_before_compiling_is_refused_too(build) -> None:  # type: ignore[no-untyped-def]
    """`rasp verify PROG.py:NAME` compiles the program resolved for its vocabulary, whose output
    map is wrapped (`compiler.rounded.Rounded`): the wrapper hid its function's notes, and the
    model compiled, certified, and differed from the interpreter where the sign was read (review54:
    copysign of a numerical copy of -0.0, 11 of 14 inputs wrong at N = 3)."""
    from compiler.resolve import resolve
    from rasp.tracr.lower import to_sops

    resolved = resolve(to_sops(build()), VOCAB, 3)
    with pytest.raises(CompileError, match="holds 0.0 and -0.0 as one number"):
        compile_sop(resolved, VOCAB, 3)

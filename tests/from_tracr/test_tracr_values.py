"""rasp.tracr evaluates tracr programs to tracr's own values (recorded from DeepMind's tracr in
tracr_values.json), types included: True stays True, None stays None, 1 is not 1.0. The graph the
compiler reads (`rasp.tracr.lower.to_sops`) gives the same values under `rasp.sops.evaluate`."""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from corpus import CASES, Case, encode, recorded
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import sops, tracr
from rasp.errors import CompileError, RaspRuntimeError
from rasp.tools.pyprogram import PythonProgram, load_python_program
from rasp.tracr.evaluate import evaluate
from rasp.tracr.lower import to_sops


@cache
def _program(target: str) -> PythonProgram:
    return load_python_program(target)


def _exact(values: Any) -> str:
    return json.dumps([encode(v) for v in values])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_rasp_tracr_gives_tracr_values(case: Case) -> None:
    program = _program(case.target).program
    for xs, want in recorded()[case.key]["rows"]:
        if isinstance(want, dict):  # tracr raised: so must we, with the same exception
            with pytest.raises(Exception) as info:
                program(xs)
            assert type(info.value).__name__ == want["error"], xs
            continue
        assert _exact(program(xs)) == json.dumps(want), xs


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_lowered_graph_gives_tracr_values(case: Case) -> None:
    lowered = _program(case.target).sop
    for xs, want in recorded()[case.key]["rows"]:
        if isinstance(want, dict):
            with pytest.raises(RaspRuntimeError):
                sops.evaluate(lowered, xs)
            continue
        got = sops.evaluate(lowered, xs)
        assert isinstance(got, sops.SeqValue)
        assert _exact(got.values) == json.dumps(want), xs


def test_every_program_of_the_corpus_is_recorded() -> None:
    assert {case.key for case in CASES} == set(recorded())


def _tuple_width(comparison: Any, keys: Any) -> Any:
    return tracr.numerical(tracr.SelectorWidth(tracr.Select(keys, keys, comparison)))


def test_tuples_a_comparison_orders_are_never_ordered_as_their_text() -> None:
    """A tuple travels as a string token; tracr orders tuples element by element, and the token's
    text orders (2, 0) after (10, 0). The lowered graph raises where tracr orders tuples (the
    compiler then refuses: no model holds that order), never giving the text's order."""
    pair = tracr.SequenceMap(lambda x, i: (x, i), tracr.tokens, tracr.indices)
    for comparison in (tracr.Comparison.LT, tracr.Comparison.GEQ):
        width = _tuple_width(comparison, pair)
        assert evaluate(width, [2, 10]) != evaluate(width, [10, 2])  # tracr orders them
        lowered = to_sops(width)
        for xs in ([2, 10], [10, 2]):
            with pytest.raises(RaspRuntimeError, match="tuple"):
                sops.evaluate(lowered, xs)
        with pytest.raises(CompileError):
            compile_sop(width, [2, 10], 4)


def test_tuples_equal_as_tracr_compares_them_are_one_key() -> None:
    """(1,) == (1.0,) in tracr (Python's tuple equality), though their tokens' texts differ: the
    lowered graph and the model select both."""
    keys = tracr.Map(lambda x: (x,) if x < 2 else (x / 2,), tracr.tokens)  # 1 -> (1,), 2 -> (1.0,)
    for comparison in (tracr.Comparison.EQ, tracr.Comparison.NEQ):
        width = _tuple_width(comparison, keys)
        inputs = [[1, 2], [2, 1, 1], [2]]
        want = [evaluate(width, xs) for xs in inputs]
        assert want[0] == ([2, 2] if comparison is tracr.Comparison.EQ else [0, 0])
        assert [list(sops.evaluate(to_sops(width), xs).values) for xs in inputs] == want
        assert run_compiled(compile_sop(width, [1, 2], 4), inputs) == want


def test_tuples_holding_numpy_or_other_numbers_equal_as_tracr_compares_them() -> None:
    """A numpy integer inside a nested tuple (a map's `((np.int64(x),),)`), a Fraction or a Decimal
    equals the Python number it holds, as tracr's `==` finds; their equality tokens differed, so
    the select missed the key, certified (a width of 1 for tracr's 2)."""
    import numpy as np

    for number in (np.int64, Fraction, Decimal, np.float32):
        keys = tracr.SequenceMap(
            lambda x, i, number=number: ((number(x),),) if i == 0 else ((x,),),
            tracr.tokens,
            tracr.indices,
        )
        width = _tuple_width(tracr.Comparison.EQ, keys)
        inputs = [[1, 1], [0, 0, 1], [1]]
        want = [evaluate(width, xs) for xs in inputs]
        assert want[0] == [2, 2]
        assert [list(sops.evaluate(to_sops(width), xs).values) for xs in inputs] == want
        assert run_compiled(compile_sop(width, [0, 1], 4), inputs) == want


def test_tuples_ordered_on_some_inputs_only_are_refused_located() -> None:
    """Keys that are tuples for the tokens 1 and 2 and a number for 3: tracr orders the tuples of
    [1, 2] (widths [0, 1]) and raises on [1, 3] (a tuple against a number). The lowered graph raised
    on both, so the compiler took [1, 2] for an input without a value and certified a model giving
    [0, 0] there; the order check it reached is now the refusal."""
    keys = tracr.Map(lambda x: (x,) if x < 3 else x, tracr.tokens)
    width = _tuple_width(tracr.Comparison.LT, keys)
    assert evaluate(width, [1, 2]) == [0, 1]
    with pytest.raises(CompileError, match=r"cannot order the key \(1,\)"):
        compile_sop(width, [1, 2, 3], 4)


def test_tuples_holding_dicts_or_sets_equal_as_tracr_compares_them() -> None:
    """({1: 0},) == ({1.0: 0},) and ({1},) == (frozenset({1.0}),) in tracr; their tokens read the
    dict's and set's repr, so the select missed the key, certified. A value of another class (whose
    repr and == may be anything) is refused."""
    for make in (lambda x, i: {x if i else float(x): 0}, lambda x, i: {x} if i else frozenset({x})):
        keys = tracr.SequenceMap(lambda x, i, make=make: (make(x, i),), tracr.tokens, tracr.indices)
        width = _tuple_width(tracr.Comparison.EQ, keys)
        inputs = [[1, 1], [0, 0, 1], [1]]
        want = [evaluate(width, xs) for xs in inputs]
        assert want[0] == [2, 2]
        assert run_compiled(compile_sop(width, [0, 1], 4), inputs) == want
    odd = tracr.Map(lambda x: (range(x),), tracr.tokens)
    with pytest.raises(CompileError, match="which holds range"):
        compile_sop(_tuple_width(tracr.Comparison.EQ, odd), [0, 1], 4)

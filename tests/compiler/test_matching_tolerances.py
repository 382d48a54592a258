"""The certifier's matching tolerances (docs/compiler.md, 'The certificate'): where a value is
matched to a recorded or listed one within float64 noise, either the match is exact now (the
embedding's record, a twin of whole numbers at the decoder) or the noise it allows cannot make a
certified model wrong nor a bound too small (`bounds.Linear`'s one-hot match, the grid margin's
sparse walk), pinned here."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from compiler import compile_sop
from compiler.bounds import DimErrors, Linear
from compiler.certificate import Certificate
from compiler.certify import recheck
from compiler.model import CompiledModel
from compiler.reach import Reach, Reading
from rasp.errors import CompileError
from tests.compiler.limit_checks import agrees_everywhere, program

BIG = 2**53  # from here float64 holds whole numbers only: 2^53 + 1 is none, 2^53 + 2 is one
SUM_OF_VIEWS = "res = aggregate(select(indices, indices, ==), tokens_float * 3 + indices);"


def _recheck(model: CompiledModel, edit: dict[str, np.ndarray] | None = None) -> Certificate:
    meta: Any = json.loads(json.dumps(model.metadata))
    return recheck({**model.weights, **(edit or {})}, meta)


@pytest.fixture(scope="module")
def views() -> CompiledModel:
    # `indices` is a number the embedding writes (0..3 by position), read by the map's MLP
    model = compile_sop(program(SUM_OF_VIEWS, "res"), [0.1, 0.2, 0.3], 4, name="res")
    assert model.metadata["certificate"]["ok"]
    return model


def test_an_embedding_number_off_by_less_than_1e_9_is_refused(views: CompiledModel) -> None:
    # 1e-10 where position 1 holds indices = 0: within the old 1e-9 match, carried by nothing
    # (the walk read the 0 it assumed, exact), so it re-checked as proved
    w_pos = views.weights["pos_embed.W_pos"].copy()
    d = views.metadata["residual"].index("indices")
    assert w_pos[1, d] == 0.0
    w_pos[1, d] = np.float32(1e-10)
    cert = _recheck(views, {"pos_embed.W_pos": w_pos})
    assert not cert.ok
    assert list(cert.errors) == [
        "the embedding writes indices = 1.00000001e-10 for position 1 (index 0), where the "
        "program has indices = 0"
    ]


def test_an_unedited_embedding_still_re_checks(views: CompiledModel) -> None:
    assert _recheck(views).ok


def test_whole_numbers_past_2_53_are_not_float64_twins() -> None:
    # 2^53 and 2^53 + 2 (ints) are within 1e-9 of each other: the output listed them once, the
    # embedding's record took token 2^53 + 2 as 2^53, and the model, certified, gave 2^53 for it
    sop = program("res = aggregate(select(indices, indices, <=), tokens_int);", "res")
    with pytest.raises(CompileError, match="a snap decision has margin 0"):
        compile_sop(sop, [BIG, BIG + 2], 3, name="res")


@pytest.mark.parametrize("vocab", [[BIG, BIG + 4], [2**60, 2**60 + 256]])
def test_distinct_big_ints_copied_as_numbers_are_refused(vocab: list[int]) -> None:
    sop = program("res = aggregate(select(indices, indices, <=), tokens_int);", "res")
    with pytest.raises(CompileError, match="snap decision"):
        compile_sop(sop, vocab, 2, name="res")


def test_big_ints_far_apart_still_compile_and_agree() -> None:
    # a twin needs within 1e-9 of each other: 2^53 and 2^54 are not, and float32 holds both
    sop = program("res = aggregate(select(indices, indices, <=), tokens_int);", "res")
    model = compile_sop(sop, [BIG, 2 * BIG], 3, name="res")
    agrees_everywhere(sop, model, [BIG, 2 * BIG], 3)


# -- bounds.Linear: a number of one-hot dimensions matched to the dimension that realises it ------


def _shared(misfit: float, coefs: tuple[float, float], b: float) -> Linear:
    """A one-hot s-op read twice (`bounds.Linear._shared`): as its values (p: dim 3; q: dim 4;
    either: one of the two) and as a number b + coefs[hot] whose program value misses it by up
    to `misfit`."""
    one_of = (((3, 1.0),), ((4, 1.0),), ((3, 1.0), (4, 1.0)))
    cat = Reading("a", True, one_of, (), ("p", "q", "either"))
    terms = ((0, b), (3, coefs[0]), (4, coefs[1]))
    num = Reading("a_num", False, (terms,), (), (), misfit=misfit)
    w = np.array([[0.0], [0.0], [0.0], [1.0], [-1.0]])
    zero = np.zeros(5)
    errors = DimErrors(zero, zero, np.ones(5), np.zeros(5, dtype=np.int64))
    return Linear(w, np.zeros(1), [cat, num], [0, 1], errors, (0, 1, 2))


def test_a_number_that_float64_rounds_away_from_its_dimension_still_finds_it() -> None:
    # dim 3 is 0.2 + 0.1 exactly (0.3000000000000000166...) and the program's value 0.3 is
    # within the misfit of it, but float64's 0.2 + 0.1 is 0.30000000000000004, two ulps' worth
    # further: matched only within the misfit, the state's one dimension was not found and the
    # state (a real one) read as unrealisable (NaN) and skipped. The relative 1e-12 only ever adds
    # dimensions to a state's candidates, whose spread then counts as error (next test).
    exact = Fraction(0.2) + Fraction(0.1)
    misfit = float(abs(exact - Fraction(0.3)))
    assert abs((0.2 + 0.1) - 0.3) > misfit
    ev = _shared(misfit, (0.1, 7.0), 0.2).at([0, 1], np.array([[0.0, 0.3]]))
    assert ev.value[0, 0] == 1.0 and ev.error[0, 0] == 0.0


def test_a_number_two_dimensions_may_realise_counts_their_spread() -> None:
    # 1 and 1 + 1e-13 are both within 1e-12 of the value 1: either dim may be hot, and the map
    # reads 1 or -1 there, so the error covers the difference (2): a tolerance too wide only
    # adds candidates, never drops the one that holds the value
    ev = _shared(0.0, (1.0, 1.0 + 1e-13), 0.0).at([0, 1], np.array([[2.0, 1.0]]))
    assert ev.value[0, 0] == 1.0 and ev.error[0, 0] == 2.0


def test_the_embedding_record_takes_the_listed_number_itself() -> None:
    # tokens_int's one-hot coefficients 2^53 and 2^53 + 2 lie within 1e-9 of each other: the
    # record took the first listed number within it, 2^53, for both tokens
    sop = program("res = aggregate(select(indices, indices, <=), tokens_int);", "res")
    model = compile_sop(sop, [BIG, BIG + 2], 3, name="res", require_certificate=False)
    (record,) = Reach.from_json(model.metadata["reach"]).inputs or ()
    assert record.at == (BIG, BIG + 2)


# -- programs aimed at the matching points: each certified and right on every input, or refused --

CERTIFIED = [
    # embeddings and views of 0.1 + 0.2
    ([0.1, 0.2, 0.30000000000000004, 0.3], "res = tokens_float * 10;"),
    ([0.1, 0.2, 0.3], "res = aggregate(select(indices, indices, ==), tokens_float * 3);"),
    (list("abc"), "res = (indices * 0.1 + indices * 0.2) == indices * 0.3;"),
    ([0.30000000000000004, 0.3], "res = tokens_float == 0.3;"),
    ([0.1, 0.1000000000000001], "res = (tokens_float + 0.2) == 0.30000000000000004;"),
    ([0.1, 0.2], "res = (tokens_float + 0.1) * 3 + indices;"),
    ([0.1, 0.2, 0.7], "res = tokens_float * 3 + indices * 0.1 > 1.0;"),
    # near-duplicate outputs and values less than 1e-9 apart (numbers within 1e-6 as promised)
    ([1.0, 1.0000000001], "res = aggregate(select(indices, indices, <=), tokens_float);"),
    ([1.0, 1.0000000005], "res = tokens_float > 1.0000000002;"),
    ([0.0, 0.0000000005, 1.0], "res = aggregate(select(indices, indices, <=), tokens_float);"),
    (list("abc"), "res = aggregate(select(indices, indices, <=), indices * 0.000000001 + 1);"),
    ([0.001, 0.0010000000001], "res = aggregate(select(indices, 0, ==), tokens_float) * 1000000;"),
    (
        list("abc"),
        'x = {"a": 0.1, "b": 0.2, "c": 0.30000000000000004}[tokens];'
        "res = aggregate(select(tokens, tokens, ==), x) * 10 + x;",
    ),
]


@pytest.mark.parametrize(("vocab", "text"), CERTIFIED)
def test_matching_point_programs_certify_and_agree(vocab: list[Any], text: str) -> None:
    sop = program(text, "res")
    model = compile_sop(sop, vocab, 3, name="res")
    assert model.metadata["certificate"]["ok"]
    agrees_everywhere(sop, model, vocab, 3)


REFUSED = [
    (
        [1.0, 1.0000000005, 2.0],
        "res = aggregate(select(tokens_float, tokens_float, <), tokens_float);",
        "tokens less than 1e-09 apart",
    ),
    (
        [10000000000, 10000000001],
        "res = aggregate(select(indices, indices, <=), tokens_int);",
        "a snap decision has margin 0",
    ),
    (
        list("abc"),
        "x = aggregate(select(tokens, tokens, ==), indices * 0.000000001); res = x > 0.0000000015;",
        "gives True at 2e-09 and False at",
    ),
]


@pytest.mark.parametrize(("vocab", "text", "reason"), REFUSED)
def test_matching_point_programs_are_refused_located(vocab: list[Any], text: str, reason: str):
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "res"), vocab, 3, name="res")
    rendered = refused.value.render()
    assert reason in rendered and "<test>:1:" in rendered

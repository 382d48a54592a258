"""The certifier's matching tolerances (docs/compiler.md, 'The certificate'): where a value is
matched to a recorded or listed one within float64 noise, either the match is exact now (the
embedding's record, a twin of whole numbers at the decoder) or the noise it allows cannot make a
certified model wrong nor a bound too small (`bounds.Linear`'s one-hot match, the grid margin's
sparse walk), pinned here."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from compiler import compile_sop
from compiler.certificate import Certificate
from compiler.certify import recheck
from compiler.model import CompiledModel
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

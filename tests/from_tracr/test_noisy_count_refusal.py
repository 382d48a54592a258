"""A count whose select compares s-ops computed with float32 error (a comparison of a mean) is
decoded from a 1/(w+1) that the scores' error moves: `make_count(make_pair_balance(tokens, "a",
"b"), -1)` is certified at N = 8 and, as written (its default form), refused from N = 10. The
refusal names the count and the error of its head's scores, and hints at what helps, instead of
the generic "fewer values" (tracr_lib_campaign.py seed 780234 --big --deep --their-lib, #35, in
its general form). The compile now keeps the form with the difference read as one mean of votes
there (compiler.vote_form, tests/compiler/test_vote_form.py); these tests turn that form off to
see the default's refusal."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from compiler.forms import Forms
from compiler.graph import Graph, IRNode, Op
from compiler.noisy_sides import NoisySides, noisy_sides
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.sops import Comparison
from rasp.tracr import lib

VOCAB = ["a", "b", "c"]


@pytest.fixture
def no_vote_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default form's refusal, not replaced by the vote form's model, nor by the build with
    the balance a table over its means' one-hots (compiler.side_build)."""
    monkeypatch.setattr(Forms, "votes_differ", lambda self: False)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)


def _count_of_a_balance() -> rasp.SOp:
    return lib.make_count(lib.make_pair_balance(rasp.tokens, "a", "b"), -1)


def test_the_count_of_a_balance_compiles_at_8() -> None:
    assert compile_sop(_count_of_a_balance(), VOCAB, 8).metadata["certificate"]["ok"]


@pytest.mark.usefixtures("no_vote_form")
def test_its_refusal_at_16_names_the_count_and_its_noisy_scores() -> None:
    with pytest.raises(CompileError) as info:
        compile_sop(_count_of_a_balance(), VOCAB, 16)
    first = info.value.diagnostics[0]
    assert "relu decision" in first.message and "count_-1.frac=" in first.message
    assert first.hint is not None
    assert "'count_-1' is a count decoded from the 1/(w+1) its head writes" in first.hint
    assert "scores carry float32 error up to 0.0" in first.hint
    assert "smaller maximum length" in first.hint and "tokens, indices" in first.hint


def _count_of_a_vote_mean(n_minus: int = -1) -> rasp.SOp:
    """The balance the hint asks for: one mean of a vote per key over make_frac_prevs' selector."""
    votes = rasp.numerical(
        rasp.Map(lambda t: 1 if t == "a" else -1 if t == "b" else 0, rasp.tokens)
    )
    prevs = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return lib.make_count(rasp.numerical(rasp.Aggregate(prevs, votes, default=0)), n_minus)


@pytest.mark.usefixtures("no_vote_form")
def test_its_hint_names_the_means_and_the_one_mean_of_votes() -> None:
    # (the hint named no s-op: "such as a comparison of a mean")
    with pytest.raises(CompileError) as info:
        compile_sop(_count_of_a_balance(), VOCAB, 10)
    hint = info.value.diagnostics[0].hint
    assert hint is not None and "such as a comparison of a mean" not in hint
    assert "its select reads 'pair_balance', computed from the means 'opens' and 'closes'" in hint
    assert (
        "'pair_balance', a difference of two means over one selector, is read exactly when "
        "written as one mean over that selector (of bools_open - bools_close per key)"
    ) in hint


def test_the_one_mean_of_votes_is_certified_where_the_difference_is_refused() -> None:
    # what the hint promises: one dimension, compared in the integer band without error
    model = compile_sop(_count_of_a_vote_mean(), VOCAB, 16)
    assert model.metadata["certificate"]["ok"]


def test_a_count_of_one_mean_names_it_without_a_vote() -> None:
    """A side computed from one mean names it, and no vote (there is no difference to rewrite)."""
    nodes = [
        IRNode(0, Op.INDICES, "indices", (), None, "indices"),
        IRNode(1, Op.SELECT, "prevs", (0, 0), None, "prevs", comparison=Comparison.LEQ),
        IRNode(2, Op.TOKENS, "tokens", (), None, "tokens"),
        IRNode(3, Op.MAP, "is_a", (2,), None, "is_a", fn=lambda t: t == "a", named=True),
        IRNode(4, Op.AGGREGATE, "frac", (1, 3), None, "frac", value=0, named=True),
        IRNode(5, Op.MAP, "_map_1", (4,), None, "map(frac)", fn=lambda x: x == 1),
        IRNode(6, Op.CONST, "_true", (), None, "True", value=True),
        IRNode(7, Op.SELECT, "_select_1", (5, 6), None, "select", comparison=Comparison.EQ),
        IRNode(8, Op.SELECTOR_WIDTH, "count", (7,), None, "count", named=True),
    ]
    sides = noisy_sides(Graph(tuple(nodes), 8), "count")
    assert sides == NoisySides(read=("frac",), means=("frac",), vote=None)
    assert noisy_sides(Graph(tuple(nodes), 8), "no such count") is None

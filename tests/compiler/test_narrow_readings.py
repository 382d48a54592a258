"""Readings that do not grow with N: a one-hot read as a number keeps only its non-zero columns, and
under causal attention `select(indices, indices, <=)` is the mask itself (no columns at all)."""

from __future__ import annotations

import itertools
import random

import pytest
import sop_builders as B
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import sops as S

N = 40


def _inputs(vocab: str, count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    short = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    return short + [[rng.choice(vocab) for _ in range(rng.randint(5, N))] for _ in range(count)]


def _agree(sop: S.SOp, model, inputs: list[list[str]]) -> None:
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = list(S.evaluate(sop, tokens).values)
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9), tokens


@pytest.mark.exactness
def test_a_one_hot_read_as_a_number_lays_out_only_its_non_zero_columns() -> None:
    # the original's length: 1 / aggregate(select(1, 1, ==), indicator(indices == 0))
    indices = S.IndicesSOp(name="indices")
    first = B.mapped(lambda i: int(i == 0), indices, name="first", text="indicator(indices == 0)")
    every = S.Select(keys=S.ConstSOp(value=1), queries=S.ConstSOp(value=1), comparison=B.EQ)
    share = S.AggregateSOp(selector=every, sop=first, default=0, name="share")
    length = B.mapped(lambda x: round(1 / x), share, name="n", text="round(1 / share)")
    model = compile_sop(length, list("ab"), N)
    labels = model.metadata["residual"]
    assert [lb for lb in labels if lb.startswith("indices")] == ["indices:0"]
    _agree(length, model, _inputs("ab", 100, seed=3))


@pytest.mark.exactness
def test_under_causal_attention_the_prefix_select_is_the_mask() -> None:
    sop = B.frac_prevs("a")
    causal = compile_sop(sop, list("ab"), N, causal=True)
    plain = compile_sop(sop, list("ab"), N)
    assert causal.metadata["config"]["attention_dir"] == "causal"
    assert not any(lb.startswith("indices") for lb in causal.metadata["residual"])
    assert any(lb.startswith("indices:") for lb in plain.metadata["residual"])
    assert causal.param_count() * 20 < plain.param_count()
    inputs = _inputs("ab", 200, seed=4)
    _agree(sop, causal, inputs)
    _agree(sop, plain, inputs[:50])


@pytest.mark.exactness
def test_a_strict_prefix_select_is_not_the_mask() -> None:
    # key < query excludes the query itself, which the causal mask includes: kept as columns
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    before = S.Select(keys=indices, queries=indices, comparison=B.LT)
    is_a = B.mapped(lambda x: int(x == "a"), t, name="is_a", text="indicator(tokens == 'a')")
    sop = S.AggregateSOp(selector=before, sop=is_a, default=0, name="before")
    model = compile_sop(sop, list("ab"), 12, causal=True)
    assert any(lb.startswith("indices:") for lb in model.metadata["residual"])
    _agree(sop, model, [list(t) for n in range(1, 7) for t in itertools.product("ab", repeat=n)])


@pytest.mark.exactness
def test_a_side_compared_only_with_constants_joins_as_its_classes() -> None:
    # the paper's BOS trick: (tokens == tokens) or (key index == 0); the key side's joint reading is
    # tokens x {index 0, other}, not tokens x N indices
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    same = S.Select(keys=t, queries=t, comparison=B.EQ)
    first = S.Select(keys=indices, queries=S.ConstSOp(value=0), comparison=B.EQ)
    is_first = B.mapped(lambda i: int(i == 0), indices, name="is_first", text="indices == 0")
    share = S.AggregateSOp(selector=S.SelectOr(left=same, right=first), sop=is_first, default=0)
    hist = B.mapped(lambda x: round(1 / x) - 1, share, name="hist", text="round(1 / share) - 1")
    model = compile_sop(hist, list("abc"), N)
    joint = [lb for lb in model.metadata["residual"] if lb.startswith("(tokens,")]
    assert len(joint) == 6, joint  # 3 tokens x 2 classes of indices
    assert model.param_count() < 10_000
    _agree(hist, model, _inputs("abc", 200, seed=5))

"""Numerical addressing (compiler.addressing): `select(indices, q, ==)` with q a number and exactly one
key per query is one parabola-scored head over (indices, indices^2), not an N x N one-hot block.
Matching, its variant for queries that may select no key or several, is tested in test_matching.py."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
import sop_builders as B
from runtime_helpers import as_runtime, run_compiled

from compiler import addressing, compile_sop
from compiler.certify import recheck
from compiler.reach import Reach
from programs import VOCABULARIES
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import load_file

N = 40
ROOT = Path(__file__).resolve().parents[2]


def _inputs(vocab: list[str], count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    short = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    long = [[rng.choice(vocab) for _ in range(rng.randint(5, N))] for _ in range(count)]
    return short + long + [[rng.choice(vocab) for _ in range(N)] for _ in range(8)]


@pytest.fixture(scope="module")
def reverse_model():
    return compile_sop(B.reverse(), list("abc"), N)


@pytest.mark.exactness
def test_reverse_is_addressed_by_number_and_agrees_with_the_interpreter(reverse_model) -> None:
    labels = reverse_model.metadata["residual"]
    assert "indices^2" in labels and not any(lb.startswith("indices:") for lb in labels)
    assert not any(lb.startswith("opp:") for lb in labels)  # the query is a free view, no one-hot
    inputs = _inputs(list("abc"), 300, seed=1)
    batched = run_compiled(reverse_model, inputs)  # one padded batch of mixed lengths
    runtime = as_runtime(reverse_model)
    for k, (tokens, got) in enumerate(zip(inputs, batched, strict=True)):
        want = list(S.evaluate(B.reverse(), tokens).values)
        assert got == want, tokens
        if k % 25 == 0:  # single inputs too: no padding at all
            assert runtime.run([tokens])[0] == want


def test_numerical_addressing_keeps_reverse_small_and_linear() -> None:
    at = {n: compile_sop(B.reverse(), list("abc"), n).param_count() for n in (64, 128)}
    assert at[64] < 10_000
    assert at[128] < 2.2 * at[64]  # linear in N (the positional and length-decoding rows)


@pytest.mark.parametrize("program", sorted(VOCABULARIES))
def test_no_library_model_is_larger_at_n_16_than_at_n_40(program: str) -> None:
    # addressing and matching apply at every N: below N = 32 they used to compare one-hots of the
    # index, and reverse was 14,627 parameters at N = 16 against 3,523 at N = 40
    interp = load_file(ROOT / "programs" / f"{program}.rasp")
    name = interp.last_assigned
    sop = interp.get(name)
    vocab = list(VOCABULARIES[program])
    small, large = (compile_sop(sop, vocab, n, name=name).param_count() for n in (16, 40))
    assert small <= large


def test_the_reach_stores_the_key_as_a_vector_reading_and_rechecks(reverse_model) -> None:
    meta = json.loads(json.dumps(reverse_model.metadata))  # as read back from a file
    reach = Reach.from_json(meta["reach"])
    vectors = [r for r in reach.readings if r.vector]
    assert len(vectors) == 1 and vectors[0].size == N
    assert vectors[0].terms[3] == ((6, 3.0), (7, 9.0))  # (indices, indices^2) at index 3
    assert Reach.from_json(reach.to_json()) == reach
    assert recheck(reverse_model.weights, meta).ok


def test_a_query_that_can_miss_every_key_is_matched_not_addressed_by_parabola() -> None:
    # position n - 1 selects nothing (index n does not exist): BOS's default must win there, which
    # the parabola (nearest key wins) would not give; matching (compiler.addressing.plan_match)
    # scores -c (q - k)^2 with BOS at -c/2, q = indices + 1 read from (indices, indices^2)
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    nxt = B.mapped(lambda i: i + 1, indices, name="nxt", text="indices + 1")
    after = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=nxt, comparison=S.Comparison.EQ),
        sop=t,
        default="-",
        name="after",
    )
    model = compile_sop(after, list("ab"), N)
    labels = model.metadata["residual"]
    assert "indices^2" in labels and not any(lb.startswith("indices:") for lb in labels)
    inputs = _inputs(list("ab"), 60, seed=2)
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(after, tokens).values)
        assert got[-1] == "-"


@pytest.mark.exactness
def test_a_query_a_step_mlp_computes_as_one_number_is_addressed() -> None:
    # `(indices + 1) % length` is no affine view: a step MLP computes it as one number, and the
    # parabola reads that number. Matching also needed its square, stepped a layer later: 3 layers
    # and 29,300 parameters at N = 40 before, 2 and 17,534 now.
    t, indices, length = B.tokens(), S.IndicesSOp(name="indices"), S.LengthSOp(name="length")
    nxt = B.mapped(lambda i, n: (i + 1) % n, indices, length, name="nxt", text="(i + 1) % n")
    rotate = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=nxt, comparison=S.Comparison.EQ),
        sop=t,
        name="rotate",
    )
    model = compile_sop(rotate, list("abc"), N)
    labels = model.metadata["residual"]
    assert "nxt" in labels and not any(lb.startswith("nxt.sq") for lb in labels)
    assert len(model.metadata["layers"]) == 2
    inputs = _inputs(list("abc"), 60, seed=3)
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == [*tokens[1:], tokens[0]]


def test_the_certifier_refuses_a_parabola_too_flat_for_softmax(monkeypatch) -> None:
    # with a small scale c the gap between the best key and the next is below what softmax needs
    # to give the next one weight exactly 0: the certifier, not the planner, has the last word
    monkeypatch.setattr(addressing, "NEEDED_GAP", 4.0)
    with pytest.raises(CompileError) as err:
        compile_sop(B.reverse(), list("abc"), N)
    text = " ".join(d.message for d in err.value.diagnostics)
    assert "softmax" in text and "reverse" in text


def test_bos_sits_below_every_real_key_as_index_minus_one(reverse_model) -> None:
    w = reverse_model.weights
    ix = {lb: i for i, lb in enumerate(reverse_model.metadata["residual"])}
    layer = next(
        k
        for k, layer in enumerate(reverse_model.metadata["layers"])
        if any(h["name"] == "reverse" for h in layer["attn"])
    )
    w_k = w[f"blocks.{layer}.attn.W_K"][0]  # [d_model, d_head]
    key_bos, key_3 = w_k[ix["bos"]], 3 * w_k[ix["indices"]] + 9 * w_k[ix["indices^2"]]
    w_q = w[f"blocks.{layer}.attn.W_Q"][0]
    scale = np.abs(w_q[ix["one"]]).max()
    assert scale >= addressing.NEEDED_GAP
    # the two builder columns: BOS reads (-1, 1) like a key at index -1
    assert np.allclose(key_bos[:2] / key_3[:2], [-1 / 3, 1 / 9])


def _reverse_checks(model) -> tuple[int, dict]:
    layer = next(
        k
        for k, layer in enumerate(model.metadata["layers"])
        if any(h["name"] == "reverse" for h in layer["attn"])
    )
    (check,) = [
        c
        for c in model.metadata["certificate"]["checks"]
        if c["block"] == "reverse" and c["kind"] == "softmax"
    ]
    return layer, check


def test_a_whole_number_query_scores_exactly_in_a_power_of_4_head() -> None:
    # length - indices - 1 is a whole-number sum of exact dims (the decoded length, the positional
    # index): every score is a whole multiple of c, so the certified error is 0. Five tokens make
    # the value side 5 wide (the default, never taken, has no column); the head is widened to 16
    # so that the division by sqrt(d_head) is exact too.
    model = compile_sop(B.reverse(), list("abcde"), N)
    layer, check = _reverse_checks(model)
    assert model.config["layers"][layer]["d_head"] == 16
    assert check["bound"] == 0.0 and check["margin"] >= addressing.NEEDED_GAP


@pytest.mark.slow
@pytest.mark.exactness
def test_exact_addressing_takes_reverse_to_512() -> None:
    # The error estimate for inexact queries (about 3 u c N^2) refuses numerical addressing from
    # about N = 400 on, and the one-hot fallback of `length - indices - 1` is too large there.
    n = 512
    model = compile_sop(B.reverse(), list("abc"), n)
    _, check = _reverse_checks(model)
    assert check["bound"] == 0.0
    assert model.param_count() < 50_000
    rng = random.Random(7)
    inputs = [
        [rng.choice("abc") for _ in range(rng.choice([n, n - 1, rng.randint(1, n)]))]
        for _ in range(12)
    ]
    runtime = as_runtime(model)
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert got == list(S.evaluate(B.reverse(), tokens).values)

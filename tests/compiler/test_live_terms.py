"""An MLP part's output sum is bounded with gamma_k, k the terms that can be non-zero at the point
(`compiler.certify_live`): a unit decided off writes an exact 0, and adding an exact 0 is exact
in float32, so only the on units' products (and the bias) round, in any evaluation order. These
tests evaluate such sums in float32 in many orders (sequential permutations, pairwise trees, torch
CPU matmul with 1 and 2 threads) against that bound, show it tighter on a compiled model, and
check that a model whose output is wrong is still refused."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
import torch

from compiler import compile_sop
from compiler.bounds import gamma
from compiler.certify import recheck
from compiler.model import CompiledModel
from rasp.interpreter import load_source
from tests.compiler.loose_sums import count_every_weight

F32 = np.float32
# `length` times a mean: the last MLP is one gated unit per length, one of them on at each point
GATED = "m = aggregate(select(tokens, tokens, ==), indices);\nres = length * m;"


def _sequential(products: list[np.float32], order: list[int]) -> np.float32:
    acc = F32(0.0)
    for i in order:
        acc = F32(acc + products[i])
    return acc


def _pairwise(values: list[np.float32]) -> np.float32:
    while len(values) > 1:
        pairs = [F32(values[i] + values[i + 1]) for i in range(0, len(values) - 1, 2)]
        values = pairs + ([values[-1]] if len(values) % 2 else [])
    return values[0]


def _sum_case(rng: random.Random, on: int, off: int, adversarial: bool) -> tuple:
    """Activations h (on units > 0, off units exactly 0), W_out's column w, bias b, float32."""
    if adversarial:
        # one large term and small ones just over a quarter of its ulp: every addition rounds,
        # all the same way, in every order that adds the small ones to the large one
        h = [1.0] + [0.75 * 2.0**-23 * (1 + rng.random() * 2**-10) for _ in range(on - 1)]
        w = [1.0] * on
    else:
        h = [rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-12, 12) for _ in range(on)]
        w = [
            rng.choice((-1, 1)) * rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-6, 6)
            for _ in range(on)
        ]
    h = h + [0.0] * off
    w = w + [
        rng.choice((-1, 1)) * rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-6, 6) for _ in range(off)
    ]
    keep = list(range(len(h)))
    rng.shuffle(keep)
    h = np.array([h[i] for i in keep], dtype=F32)
    w = np.array([w[i] for i in keep], dtype=F32)
    b = F32(rng.uniform(-4, 4)) if rng.random() < 0.7 else F32(0.0)
    return h, w, b


@pytest.mark.parametrize("adversarial", [False, True])
def test_float32_sums_in_any_order_stay_within_gamma_of_the_live_terms(adversarial: bool) -> None:
    rng = random.Random(20261208 + adversarial)
    threads = torch.get_num_threads()
    worst = 0.0  # the largest observed error as a fraction of the bound
    try:
        for trial in range(60):
            on = rng.choice((1, 2, 3, 5, 9, 25))
            off = rng.choice((0, 7, 60, 551))
            h, w, b = _sum_case(rng, on, off, adversarial)
            exact = sum(
                (Fraction(float(x)) * Fraction(float(y)) for x, y in zip(h, w)), Fraction(float(b))
            )
            k = int(np.count_nonzero(h * w)) + 1  # the live products and the bias
            size = float(np.sum(np.abs(h.astype(np.float64) * w.astype(np.float64)))) + abs(
                float(b)
            )
            bound = float(gamma(k)) * size
            products = [F32(x * y) for x, y in zip(h, w)] + [b]
            results = []
            for _ in range(20):
                order = list(range(len(products)))
                rng.shuffle(order)
                results.append(_sequential(products, order))
                results.append(_pairwise([products[i] for i in order]))
            for n_threads in (1, 2):
                torch.set_num_threads(n_threads)
                # a batch of rows, as the runtime's MLP: the same column at every row
                x = torch.from_numpy(np.tile(h, (64, 1)))
                out = torch.addmm(torch.tensor([b]), x, torch.from_numpy(w)[:, None])
                results.extend(F32(v) for v in out[:, 0].numpy())
                results.append(F32((torch.from_numpy(h) @ torch.from_numpy(w)).item() + b))
            for r in results:
                err = abs(Fraction(float(r)) - exact)
                assert err <= Fraction(bound), (trial, on, off, float(err), bound)
                worst = max(worst, float(err) / bound if bound else 0.0)
    finally:
        torch.set_num_threads(threads)
    if adversarial:  # the bound is not vacuous there: the sums err by a good part of it
        assert worst > 0.2, worst


def _model(n: int) -> CompiledModel:
    interp = load_source(GATED)
    return compile_sop(interp.get("res"), list("abc"), n)


def test_the_gated_output_bound_is_tighter_than_gamma_of_every_unit(monkeypatch) -> None:
    model = _model(16)
    new = recheck(model.weights, model.metadata)
    # the bound before: gamma of every non-zero weight of the column, whatever is on
    count_every_weight(monkeypatch)
    old = recheck(model.weights, model.metadata)
    assert new.ok and old.ok
    for a, b in zip(new.checks, old.checks, strict=True):
        assert a.bound <= b.bound, (a, b)
    (snap_new,) = [c for c in new.checks if c.sublayer == "decoder"]
    (snap_old,) = [c for c in old.checks if c.sublayer == "decoder"]
    assert snap_new.bound < 0.75 * snap_old.bound, (snap_new.bound, snap_old.bound)


def test_an_output_off_by_more_than_its_margin_is_still_refused() -> None:
    model = _model(16)
    weights = {k: v.copy() for k, v in model.weights.items()}
    # the gated units' output weights scaled by 1 + 2^-12: the output (up to 240) is then off
    # by up to ~0.06, far past its snap margin of 0.0024, where the exact output is not 0
    weights["blocks.1.mlp.W_out"] *= F32(1 + 2.0**-12)
    cert = recheck(weights, model.metadata)
    assert not cert.ok
    assert any(c.sublayer == "decoder" for c in cert.failures()), cert.failures()

"""A RASP prefix mean of a shift whose filler is 0.5 (`shift(x, 2, 0.5)`): the two keys before the
shift hold 0.5 in every input, and halves add exactly in float64 in any order
(`compiler.pinned_means.sums_exact_of`), so each mean is 0.5 * 2 plus a sum of the other keys' 0s
and 1s over i + 1: 1,259 values at N = 64. Only whole numbers were pinned before, and the mean took
every mean of i + 1 values of {0, 0.5, 1} (2,521): `mean * mean` was a 32,305,814-parameter model
at N = 64 (33,384 now)."""

from __future__ import annotations

import itertools
import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp.atoms import same_value
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate

SOURCE = """
shifted = shift(indicator(tokens == "b"), 2, 0.5);
mean = aggregate(select(indices, indices, <=), shifted);
squared = mean * mean;
"""
VOCAB = ["a", "b"]


def test_a_squared_prefix_mean_of_a_half_filled_shift_is_small() -> None:
    interp = Interpreter()
    interp.exec_program(parse(SOURCE, "pinned.rasp"))
    squared = interp.get("squared")
    model = compile_sop(squared, VOCAB, 64)
    assert model.param_count() < 50_000
    rng = random.Random(3)
    inputs = [list(t) for n in range(1, 6) for t in itertools.product(VOCAB, repeat=n)]
    inputs += [[rng.choice(VOCAB) for _ in range(rng.randint(30, 64))] for _ in range(30)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = evaluate(squared, xs).values
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), xs

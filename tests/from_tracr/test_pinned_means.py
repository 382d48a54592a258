"""A positional mean whose keys hold one known number at some positions (a shifted copy's default
before the shift) takes only the means with those numbers: the pinned keys add their total to
every sum. Averaging any i + 1 values of the s-op's whole set instead made make_pair_balance of
shift_by(28, tokens), which tracr evaluates on length-1 inputs only (a mean of several Nones
raises), an 11.7M-parameter model at N = 32 (tracr_lib_campaign.py seed 780214 --big --deep
--their-lib, #54); it is 81 parameters now."""

from __future__ import annotations

import itertools
import random

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.driver import Forms
from compiler.graph import build_graph
from compiler.pinned_means import sums_exact_of
from compiler.values import infer_values
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.tracr import lib
from rasp.tracr.lower import to_sops

VOCAB = [7, 4, 1, 5, -2]


def _values(program: rasp.SOp, vocab: list, max_len: int) -> dict[str, tuple]:
    graph = build_graph(Forms(to_sops(program), vocab, max_len)())
    sets = infer_values(graph, vocab, max_len)
    return {node.name: sets.values[node.index] for node in graph.nodes}


def test_a_balance_of_a_shifted_copy_is_none_alone() -> None:
    program = lib.make_pair_balance(lib.shift_by(6, rasp.tokens), 7, 5)
    values = _values(program, VOCAB, 8)
    # every prefix from position 6 on holds six Nones and a number: tracr raises there
    assert values["opens"] == values["pair_balance"] == (None,)
    model = compile_sop(program, VOCAB, 8)
    assert model.metadata["output"]["values"] == [None]
    assert model.param_count() < 200
    inputs = [[t] for t in VOCAB]
    assert run_compiled(model, inputs) == [program(xs) for xs in inputs] == [[None]] * 5


def test_a_prefix_mean_of_a_shifted_copy_keeps_the_defaults_in_every_sum() -> None:
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 2)
    shifted = rasp.Aggregate(back, rasp.tokens, default=0)  # 0 at positions 0 and 1
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    mean = rasp.numerical(rasp.Aggregate(upto, shifted, default=0)).named("mean")
    vocab, n = [1, 2], 6
    values = set(_values(mean, vocab, n)["mean"])
    given = set()
    inputs = [list(t) for k in range(1, n + 1) for t in itertools.product(vocab, repeat=k)]
    for xs in inputs:
        given.update(mean(xs))
    # exact: at i, keys 0 and 1 hold 0 and the others 1 or 2 (any i + 1 values of 0, 1, 2 before:
    # 2.0 among them)
    assert given == values
    assert max(values) == 4 / 3
    model = compile_sop(mean, vocab, n)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert all(same_value(g, w) for g, w in zip(got, mean(xs), strict=True)), xs


def _shifted_mean(pin: float) -> rasp.SOp:
    """The prefix mean of tokens - 1 shifted right by 2, whose first two keys hold `pin`."""
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 2)
    less = rasp.numerical(rasp.Map(lambda x: x - 1, rasp.tokens))
    shifted = rasp.numerical(rasp.Aggregate(back, less, default=pin))
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return rasp.numerical(rasp.Aggregate(upto, shifted, default=0)).named("mean")


def _agrees(program: rasp.SOp, vocab: list, n: int, inputs: list[list]) -> None:
    model = compile_sop(program, vocab, n)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert all(same_value(g, w) for g, w in zip(got, program(xs), strict=True)), xs


@pytest.mark.parametrize("pin", [0.5, 0.25, 1.5])
def test_pinned_halves_and_quarters_add_their_total_to_every_sum(pin: float) -> None:
    """Halves and quarters add exactly in float64, in any order (`sums_exact_of`): the pinned keys'
    total is part of every sum, as for whole numbers. They took every mean of i + 1 values of
    {pin, 0, 1} before: 161 means at N = 16 for 0.5 (79 now), and `mean * mean` at N = 64 was a
    32M-parameter model (33K now)."""
    program, vocab, n = _shifted_mean(pin), [1, 2], 6
    inputs = [list(t) for k in range(1, n + 1) for t in itertools.product(vocab, repeat=k)]
    given = {v for xs in inputs for v in program(xs)}
    values = _values(program, vocab, n)["mean"]
    assert set(values) == given  # exact: only the sums the interpreter computes
    assert len(_values(program, vocab, 16)["mean"]) <= 100
    _agrees(program, vocab, n, inputs)
    rng = random.Random(7)
    longer = [[rng.choice(vocab) for _ in range(rng.randint(10, 16))] for _ in range(40)]
    _agrees(program, vocab, 16, longer)


@pytest.mark.parametrize("pin", [0.1, 1 / 3])
def test_pinned_numbers_whose_sums_round_take_every_mean(pin: float) -> None:
    """Two 1/3s then four 1s add up to 4.666666666666666 in key order, 2/3 + 4 to ...667: where
    the pinned keys fall among the others changes the sum, so `pinned_means` declines and the means are every mean of the
    width's values (a superset of the interpreter's), the model still exact."""
    assert not sums_exact_of([pin, 0, 1], 6)
    program, vocab, n = _shifted_mean(pin), [1, 2], 6
    inputs = [list(t) for k in range(1, n + 1) for t in itertools.product(vocab, repeat=k)]
    given = {v for xs in inputs for v in program(xs)}
    values = set(_values(program, vocab, n)["mean"])
    assert given < values
    _agrees(program, vocab, n, inputs)


def test_exact_sums_of_a_set() -> None:
    assert sums_exact_of([0, 1, 2], 64) and sums_exact_of([0.5, 0.25, -3], 64)
    assert not sums_exact_of([2.0**-60, 1], 2)  # 1 + 2^-60 rounds to 1
    assert not sums_exact_of([0.1], 3) and not sums_exact_of([1 / 3, 0], 2)
    assert sums_exact_of([0.1], 2)  # 0.1 + 0.1 doubles it, exactly
    assert not sums_exact_of([True, 1], 4)  # a bool among numbers is averaged otherwise
    assert not sums_exact_of([2**53 + 1], 1) and not sums_exact_of([float("inf")], 1)
    assert sums_exact_of([2**40], 2**12) and not sums_exact_of([2**40], 2**13)

"""A positional mean whose keys hold one known number at some positions (a shifted copy's default
before the shift) takes only the means with those numbers: the pinned keys add their total to
every sum. Averaging any i + 1 values of the s-op's whole set instead made make_pair_balance of
shift_by(28, tokens), which tracr evaluates on length-1 inputs only (a mean of several Nones
raises), an 11.7M-parameter model at N = 32 (tracr_lib_campaign.py seed 780214 --big --deep
--their-lib, #54); it is 81 parameters now."""

from __future__ import annotations

import itertools

from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.driver import Forms
from compiler.graph import build_graph
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

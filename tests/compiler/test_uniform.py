"""S-ops that hold one value at every position, and keys that differ given them
(compiler.uniform): an EQ select over such keys selects at most one key, so its aggregate copies
one value instead of averaging."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp import sops as S
from tests.compiler.test_total_orders import _program  # the program's `res`
from tests.runtime_helpers import run_compiled

COUNT = 'k = selector_width(select(tokens, "a", ==));\n'


def _sets(text: str, n: int = 6):  # noqa: ANN202 (graph and value sets)
    graph = build_graph(_program(text))
    return graph, infer_values(graph, list("abc"), n)


def _assert_one_key_at_most(text: str, alphabet: str, max_len: int) -> None:
    """No query of `res`'s selector selects two keys on any input up to `max_len`."""
    root = _program(text)
    for n in range(1, max_len + 1):
        for tokens in itertools.product(alphabet, repeat=n):
            matrix = S.Evaluator(list(tokens)).matrix(root.selector)  # type: ignore[attr-defined]
            assert np.all(matrix.sum(axis=1) <= 1), (text, tokens)


def _single(text: str, n: int = 6) -> bool:
    """Whether the analysis proves that `res`'s selector selects at most one key."""
    graph, sets = _sets(text, n)
    return sets.at_most_one[graph[graph.root].inputs[0]]


@pytest.mark.parametrize(
    ("target", "single"),
    [
        ("(indices + k) % length", True),  # a rotation by the count
        ("length - 1 - indices if k > 0 else indices", True),  # reverse or not
        ("indices * (1 if k > 0 else -1)", True),
        ("indices + k * 0.5", True),
        ("indices % 2 + k", False),  # two positions share a target
        ("k", False),  # every position holds the count
        ("indices * k", False),  # all 0 when there is no "a"
        ("indices + tokens_len", False),  # (see below: read from the tokens, not uniform)
    ],
)
def test_keys_read_from_positions_and_a_uniform_count(target: str, single: bool) -> None:
    extra = 'tokens_len = 1 if tokens == "a" else 0;\n' if "tokens_len" in target else ""
    text = f"{COUNT}{extra}t = {target};\nres = aggregate(select(t, indices, ==), indices);"
    assert _single(text) is single


@pytest.mark.parametrize(
    ("definition", "uniform"),
    [
        ('u = selector_width(select(tokens, "a", ==));', True),  # the query is a constant
        ("u = selector_width(select(tokens, tokens, ==));", False),  # its own token's count
        ('u = aggregate(select(indices, 0, ==), tokens == "a");', True),  # the first token's
        ("u = aggregate(select(indices, indices, ==), indices);", False),
        ("u = length - 1;", True),
        ("u = indices * 0;", True),  # one value per length, by its relation
        ('u = 2 * selector_width(select(tokens, "a", ==)) + length;', True),
    ],
)
def test_which_sops_are_uniform(definition: str, uniform: bool) -> None:
    from compiler.uniform import is_uniform

    graph = build_graph(_program(f"{definition}\nres = u;"))
    sets = infer_values(graph, list("abc"), 5)
    flags: list[bool] = []
    for node in graph.nodes:
        flags.append(is_uniform(node, flags, sets.relation[node.index]))
    assert flags[graph.root] is uniform


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    shift=st.sampled_from(["indices", "length - 1 - indices", "indices % 2", "2 * indices"]),
    with_count=st.sampled_from(["+ k", "* k", "- 2 * k", "+ 0 * k", "+ (k % 2)"]),
)
def test_a_claim_holds_on_every_input(shift: str, with_count: str) -> None:
    """Whenever the analysis claims at most one key, no query selects two on any input."""
    text = f"{COUNT}t = {shift} {with_count};\nres = aggregate(select(t, indices, ==), indices);"
    if not _single(text, 5):
        return
    _assert_one_key_at_most(text, "abc", 5)


# a mean of the "a"s' indices: uniform, and too many values (as sets) to try each one
MEAN = 'm = aggregate(select(tokens, "a", ==), indices);\n'


@pytest.mark.parametrize(
    ("target", "single"),
    [
        ("indices + (length - m)", True),  # the original's long addition aligns its operand so
        ("m - indices", True),
        ("2 * indices + m - 1", True),
        ("(indices + m) / 2", True),
        ("indices * 0 + m", False),  # every position holds m
        ("indices - indices + m", False),  # the coefficients cancel
        ("indices % 2 + m", False),  # % states no affine form, and two positions share a key
    ],
)
def test_keys_affine_in_indices_differ_whatever_the_uniform_values(
    target: str, single: bool
) -> None:
    from compiler.uniform import MAX_UNIFORM_COMBINATIONS

    text = f"{MEAN}t = {target};\nres = aggregate(select(t, indices, ==), indices);"
    graph, sets = _sets(text, 7)
    mean = next(node.index for node in graph.nodes if node.name == "m")
    assert len(sets.values[mean]) > MAX_UNIFORM_COMBINATIONS  # not tried value by value
    assert sets.at_most_one[graph[graph.root].inputs[0]] is single
    if not single:
        return
    _assert_one_key_at_most(text, "ab", 6)


def test_affine_keys_that_float64_merges_are_not_claimed() -> None:
    # indices * 2^-20 + m * 10^12: exact keys 2^-20 apart, but float64 spaces numbers near 10^12
    # 2^-13 apart, so every position's key rounds to the same number; the error bound sees it
    text = f"{MEAN}t = indices * 0.00000095367431640625 + m * 1000000000000;\n"
    text += "res = aggregate(select(t, indices, ==), indices);"
    graph, sets = _sets(text, 7)
    assert not sets.at_most_one[graph[graph.root].inputs[0]]
    root = _program(text)
    matrix = S.Evaluator(list("bab")).matrix(root.selector)  # type: ignore[attr-defined]
    assert matrix.sum() == 0  # keys 10^12 + tiny: equal to one another, to no index
    keys = S.evaluate(
        _program(f"{MEAN}res = indices * 0.00000095367431640625 + m * 1000000000000;"), list("bab")
    )
    assert len(set(keys.values)) == 1  # the claim would have been false


def _invert_if_sorted():  # noqa: ANN202 (a rasp.tracr s-op)
    # InterpBench's case 113, as written for tracr
    from rasp import tracr as rasp

    shifter = rasp.Select(
        rasp.indices, rasp.indices, lambda x, y: x == y - 1 or (x == 0 and y == 0)
    )
    shifted = rasp.Aggregate(shifter, rasp.tokens)
    checks = rasp.SequenceMap(lambda x, y: 1 if x <= y else 0, shifted, rasp.tokens)
    zero = rasp.Select(checks, rasp.Map(lambda x: 0, rasp.indices), rasp.Comparison.EQ)
    decider = rasp.Map(lambda x: 1 if x > 0 else -1, rasp.SelectorWidth(zero))
    everything = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
    avg = rasp.Map(lambda x: x / 2 - 0.5, rasp.SelectorWidth(everything))
    diff = rasp.SequenceMap(lambda x, y: x - y, rasp.indices, avg)
    target = rasp.SequenceMap(
        lambda x, y: x + y, avg, rasp.SequenceMap(lambda x, y: x * y, decider, diff)
    )
    return rasp.Aggregate(rasp.Select(target, rasp.indices, rasp.Comparison.EQ), rasp.tokens)


@pytest.mark.exactness
def test_invert_if_sorted_copies_one_token() -> None:
    # Before, the aggregate was any mean of the tokens: 34M parameters at N = 16, refused at 32.
    program = _invert_if_sorted()
    vocab = list(range(31))
    model = compile_sop(program, vocab, 16)
    assert model.param_count() < 400_000
    rng = random.Random(16)
    inputs = [sorted(rng.choice(vocab) for _ in range(rng.randint(1, 16))) for _ in range(40)]
    inputs += [[rng.choice(vocab) for _ in range(rng.randint(1, 16))] for _ in range(40)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(tokens), tokens


def test_a_mean_of_a_uniform_sop_is_that_value() -> None:
    """Every key holds the count, so any mean of them is the count (or the default): its values
    are whole numbers, not every fraction of the count's values (defs 2203200: its output's
    values lay 8.5e-6 apart, refused by the output snap)."""
    text = COUNT + "res = aggregate(select(indices, indices, <), k, 1);\n"
    graph, sets = _sets(text, 8)
    assert {float(v) for v in sets.of(graph.nodes[-1])} == set(map(float, range(9)))


def test_a_chain_over_a_mean_of_a_count_compiles_and_agrees() -> None:
    """Defs 2203200's reduction: refused before by its output snap (3.65e-6 against 1.6e-4)."""
    text = (
        COUNT
        + "v0 = aggregate(select(indices, indices, <), k, 1);\n"
        + 'c = shift(v0, 2, 1) + indicator(tokens == "b");\n'
        + "def q(x, n) { return x if n == 0 else q((x * c + n) % 4, n - 1); }\n"
        + 'res = q(indicator(tokens == "c") - 1, 6) + round(length / 2);\n'
    )
    root = _program(text)
    model = compile_sop(root, list("abc"), 8)
    inputs = [list(t) for n in range(1, 6) for t in itertools.product("abc", repeat=n)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert list(got) == list(S.evaluate(root, tokens).values), tokens

"""A conjunction that compares a count of keys satisfying Q, and requires Q, selects at most one key
(compiler.count_keys): long addition's nearest-carry selector."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp import sops as S
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse
from tests.runtime_helpers import as_runtime, run_compiled

LONG_ADDITION = Path(__file__).resolve().parents[1] / "compat" / "programs" / "long_addition.rasp"


def _program(text: str) -> Interpreter:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp


def _single(root: S.Node, name: str, vocab: str, n: int) -> bool:
    graph = build_graph(root)
    values = infer_values(graph, list(vocab), n)
    (node,) = [node for node in graph.nodes if node.name == name]
    return values.at_most_one[node.index]


def _carry_text(order: str, predicate: str, query: str, outer: str) -> str:
    return f"""
q = {predicate};
c = selector_width(select(indices, indices, {order}) and q);
nearest = select(c, {query}, ==) and {outer};
carry = aggregate(nearest, indicator(tokens == "a"), 0);
"""


def test_long_additions_nearest_carry_selects_one_key() -> None:
    interp = load_file(LONG_ADDITION)
    assert _single(interp.get("longsum"), "nearest", "0123456789+", 6)


@pytest.mark.parametrize(
    ("order", "predicate", "query", "outer"),
    [
        (">", 'not select(tokens, "b", ==)', "c - 1", "later"),  # the outer conjunction lacks q
        ("!=", 'select(tokens, "b", ==)', "c - 1", "q"),  # every q-key has the same count
        (">", "select(tokens, tokens, <)", "c - 1", "q"),  # q depends on the query, no class
        ("<", 'select(tokens, "b", ==)', "c", 'select(tokens, "a", ==)'),  # another predicate
    ],
)
def test_what_the_rule_does_not_cover(order: str, predicate: str, query: str, outer: str) -> None:
    text = "later = select(indices, indices, >);\n" + _carry_text(order, predicate, query, outer)
    assert not _single(_program(text).get("carry"), "nearest", "abc", 6)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    order=st.sampled_from(["<", "<=", ">", ">="]),
    token=st.sampled_from("abc"),
    comparison=st.sampled_from(["==", "!=", "<", ">="]),
    negate=st.booleans(),
    query=st.sampled_from(["c", "c - 1", "c + 1", "indices", "length - indices - 1", "2"]),
    later=st.sampled_from(["", " and select(indices, indices, >)", " and select(1, 1, ==)"]),
    within_class=st.booleans(),
)
def test_the_proof_holds_on_every_input(
    order: str,
    token: str,
    comparison: str,
    negate: bool,
    query: str,
    later: str,
    within_class: bool,
) -> None:
    """Whenever the rule claims one key, the interpreter's selector never selects two. With
    `within_class`, c counts only keys of the key's own token, and q requires the query's."""
    predicate = ("not " if negate else "") + f'select(tokens, "{token}", {comparison})'
    if within_class:
        predicate = f"select(tokens, tokens, ==) and ({predicate})"
    text = _carry_text(order, predicate, query, "q" + later)
    carry = _program(text).get("carry")
    assert _single(carry, "nearest", "abc", 5)
    nearest = carry.selector
    for n in range(1, 6):
        for tokens in itertools.product("abc", repeat=n):
            matrix = S.Evaluator(list(tokens)).matrix(nearest)  # [query, key]
            assert matrix.sum(axis=1).max() <= 1, (text, tokens)


@pytest.mark.exactness
def test_the_first_occurrence_of_each_token_is_one_key() -> None:
    # `seen` counts the earlier keys of the key's own token: within one token it grows with the
    # position, so `seen == 0` and the query's token select one key. Without the proof the
    # aggregate of `indices` was a mean of any subset of positions, refused at N = 40 (its
    # values closer than float32 resolves)
    text = """
seen = selector_width(select(tokens, tokens, ==) and select(indices, indices, <));
first = select(tokens, tokens, ==) and select(seen, 0, ==);
first_pos = aggregate(first, indices);
"""
    root = _program(text).get("first_pos")
    assert _single(root, "first", "abc", 8)
    model = compile_sop(root, list("abc"), 40, name="first_pos")
    rng = random.Random(3)
    inputs = [list(t) for n in range(1, 5) for t in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(5, 40))] for _ in range(60)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.exactness
def test_long_addition_is_small_and_exact_at_n_16() -> None:
    """The carry copies a 0 or a 1 instead of averaging up to N of them: (s + carry) % 10 has 10
    values, not 1,247 (163M parameters at N = 32 before, 156K now)."""
    root = load_file(LONG_ADDITION).get("longsum")
    model = compile_sop(root, list("0123456789+"), 16, name="longsum")
    assert model.param_count() < 150_000
    assert len(model.metadata["output"]["values"]) == 10
    rng = random.Random(7)
    inputs = [list("9" * 7 + "+" + "1"), list("1+" + "9" * 14), list("99999999+99999")]
    for _ in range(120):
        left = rng.randint(1, 9)
        right = rng.randint(1, 16 - left - 1)
        digits = [rng.choice("0123456789") for _ in range(left + right)]
        inputs.append(digits[:left] + ["+"] + digits[left:])
    runtime = as_runtime(model)
    for tokens, got in zip(inputs, run_compiled(runtime, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.parametrize(
    ("required", "single"),
    [
        ("select(is_a, True, ==)", True),  # is_a = tokens == "a": "a" both ways
        ('select(tokens, "a", <=)', True),  # over {a, b, c}: "a" alone
        ('not select(tokens, "a", !=)', True),
        ("select(is_a, False, ==)", False),  # b and c
        ('select(tokens, "b", <=)', False),  # a and b
    ],
)
def test_a_predicate_written_otherwise_is_the_same_where_it_holds_on_the_same_tokens(
    required: str, single: bool
) -> None:
    # the second "a": its rank among the a's before it is 1, and the conjunction requires an "a"
    # (however written); without the proof a mean of positions, refused from N = 64 on
    text = f"""
is_a = tokens == "a";
rank = selector_width(select(tokens, "a", ==) and select(indices, indices, <));
second = select(rank, 1, ==) and {required};
res = aggregate(second, indices, -1);
"""
    root = _program(text).get("res")
    assert _single(root, "second", "abc", 8) is single
    if not single:
        return
    selector = root.selector
    for n in range(1, 7):
        for tokens in itertools.product("abc", repeat=n):
            assert S.Evaluator(list(tokens)).matrix(selector).sum(axis=1).max() <= 1


def test_a_map_that_raises_on_a_value_makes_no_claim() -> None:
    # 1 / (tokens_int - 1) raises at "1": the predicate is compared as written, so it differs
    text = """
rank = selector_width(select(tokens_int, 2, ==) and select(indices, indices, <));
odd = 1 / (tokens_int - 1);
second = select(rank, 1, ==) and select(odd, 1, ==);
res = aggregate(second, indices, -1);
"""
    assert not _single(_program(text).get("res"), "second", "012", 6)


@pytest.mark.exactness
def test_the_second_a_written_two_ways_compiles_at_n_256() -> None:
    text = """
is_a = tokens == "a";
rank = selector_width(select(tokens, "a", ==) and select(indices, indices, <));
res = aggregate(select(rank, 1, ==) and select(is_a, True, ==), indices, -1);
"""
    root = _program(text).get("res")
    model = compile_sop(root, list("abc"), 256, name="res")
    assert model.param_count() < 40_000  # 27,475
    rng = random.Random(5)
    inputs = [list(t) for n in range(1, 4) for t in itertools.product("abc", repeat=n)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(4, 256))] for _ in range(40)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens

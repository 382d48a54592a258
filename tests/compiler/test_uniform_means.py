"""Means of uniform s-ops (compiler.values: `equal_values` where the averaged s-op holds one value
at every position of an input): the value sets still hold every value the interpreter computes,
for whole and non-whole numbers, counts, lengths and means of means, under any selector."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler.blocks import value_key
from compiler.graph import build_graph
from compiler.pinned_means import copy_means
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse

# uniform s-ops: one value per input, no per-position relation (but `length`, kept as a control)
SOURCES = [
    'selector_width(select(tokens, "a", ==))',  # a count
    'aggregate(select(tokens, "a", !=), indicator(tokens == "b"), 0)',  # a fraction
    'aggregate(select(tokens, "b", ==), selector_width(select(tokens, "c", ==)) * 0.1, 0.5)',
    'aggregate(select(tokens, "c", !=), indicator(tokens == "a") / 3, 1)',  # a mean of thirds
    "length",
]
# maps of them: whole, non-whole (0.1 and a third do not add up exactly), and ints below 2^53
# whose sums of n pass it (the interpreter sums them as Python ints, then rounds: six or seven
# copies of these average to another float than float64's adds give)
BIG = "2189097779530261 if u > 0 else 4453205198755745"
MAPS = ["u", "u / 3", "u * 0.1", "u + 0.5", "u * u - 1", BIG]
SELECTORS = [
    "select(indices, indices, <)",
    "select(indices, indices, <=)",
    "select(tokens, tokens, ==)",
    'select(tokens, "a", ==)',
    "select(indices, indices, !=)",
    "select(tokens, tokens, <)",
]
DEFAULTS = ["0", "1", "0.5"]


def _interpreted(text: str) -> Interpreter:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp


@settings(max_examples=60, deadline=None)
@given(
    source=st.sampled_from(SOURCES),
    fn=st.sampled_from(MAPS),
    selector=st.sampled_from(SELECTORS),
    default=st.sampled_from(DEFAULTS),
    again=st.sampled_from(SELECTORS),
    n=st.integers(2, 7),
)
@example(SOURCES[0], BIG, SELECTORS[2], "0", SELECTORS[0], 7)  # seven copies, summed as ints
def test_every_value_the_interpreter_gives_is_in_the_set(
    source: str, fn: str, selector: str, default: str, again: str, n: int
) -> None:
    """Exhaustive over inputs of "abc" (past length 5: "ab") of length 1..n: `res` (a mean of a
    map of a uniform s-op) and `res2` (a mean of the uniform `w`, itself such a mean) hold at
    every position a value of their sets."""
    text = (
        f"u = {source};\nv = {fn};\nres = aggregate({selector}, v, {default});\n"
        f'w = aggregate(select(tokens, "b", ==), v, 0);\nres2 = aggregate({again}, w, {default});\n'
        "both = res + res2;\n"  # one graph holds them all
    )
    interp = _interpreted(text)
    roots = {name: interp.get(name) for name in ("u", "v", "w", "res", "res2")}
    graph = build_graph(interp.get("both"))
    alphabet = "abc" if n <= 5 else "ab"
    try:
        sets = infer_values(graph, list(alphabet), n)
    except CompileError:
        return  # a refusal claims nothing
    by_name = {node.name: node for node in graph.nodes}
    for tokens in (t for m in range(1, n + 1) for t in itertools.product(alphabet, repeat=m)):
        for name in (name for name in roots if name in by_name):  # (`v = u` is named u)
            allowed = {value_key(x) for x in sets.of(by_name[name])}
            for got in S.evaluate(roots[name], list(tokens)).values:
                assert value_key(got) in allowed, (text, name, tokens, got)


def test_copy_means_hold_an_int_s_exact_sum() -> None:
    """Ints with |v| * n past 2^53 are summed as Python ints and then rounded (rasp.sops):
    nine copies of 8943887316608867 average to 8943887316608868.0, not the float adds' value."""
    v = 8943887316608867
    assert (9 * v) * 1.0 / 9 == 8943887316608868.0
    found = copy_means([v], 12)
    assert found is not None and 8943887316608868.0 in found
    for k in range(2, 13):
        assert (k * v) * 1.0 / k in found and (k * -v) * 1.0 / k in copy_means([-v], 12)


@pytest.mark.parametrize(
    "text",
    [
        'm = aggregate(select(tokens, tokens, <), count(tokens, "a"), -100000);\n'
        "res = aggregate(select(length, m, >), 0, 1);",
        'm = aggregate(select(tokens, tokens, <=), count(tokens, "a"));\n'
        "res = aggregate(select(length, m, >), 0, 1);",
    ],
)
def test_noisy_mean_tests_programs_now_compile_small_and_agree(text: str) -> None:
    """The programs test_threshold_sides and test_side_tables wrote as noisy means (refused at
    N = 24 with a default of -100000, or proved only by later builds) read a mean of a count:
    known to be the count, they compile small at N = 24 and agree."""
    from compiler import compile_sop
    from rasp.errors import Source
    from rasp.interpreter import load_source
    from tests.runtime_helpers import run_compiled

    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, S.SOp)
    model = compile_sop(root, list("abc"), 24)
    assert model.metadata["certificate"]["ok"] and model.param_count() < 20_000
    inputs = [list(t) for k in range(1, 6) for t in itertools.product("abc", repeat=k)]
    inputs += [list("abc" * 8), list("a" * 24), list("cb" * 12)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert list(got) == list(S.evaluate(root, tokens).values), tokens

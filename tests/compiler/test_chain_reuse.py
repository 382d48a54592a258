"""compiler.map_values.chain_values takes the value of the map it analysed last, where a chain
over the same sources extends it (`x = x + length` in a loop), instead of evaluating the whole
chain again at every combination: the value sets and relations are exactly those of the full
evaluation, on generated chains that share sources, read earlier steps and fail on the way."""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import map_values
from compiler.graph import graph_and_index
from compiler.values import ValueSets, infer_values
from tests.compiler.test_total_orders import _program

STEPS = [
    "v{a} + length",
    "v{a} - v{b}",
    "v{a} * v{b}",
    "v{a} % (v{b} + 2)",  # (raises where v{b} is -2: dropped, as the interpreter errors)
    "v{a} if v{b} > 1 else length - v{a}",
    "min(v{a}, indices)",
    "v{a} / (indices - 1)",  # (raises at index 1)
]


@st.composite
def chains(draw: st.DrawFn) -> str:
    """A chain of maps over indices and length (and tokens, without a relation, sometimes),
    each step reading the one before and, often, an earlier one."""
    first = draw(
        st.sampled_from(["indices", "indices + length", 'indices if tokens == "a" else 0'])
    )
    lines = ["v0 = indices;", f"v1 = {first};"]
    for k in range(2, 2 + draw(st.integers(1, 12))):
        b = draw(st.integers(0, k - 1))
        lines.append(f"v{k} = {draw(st.sampled_from(STEPS)).format(a=k - 1, b=b)};")
    return "\n".join(lines) + f"\nres = v{len(lines) - 1};"


def _sets(text: str, reuse: bool) -> ValueSets:
    graph, _ = graph_and_index(_program(text))
    real = map_values.MapValues._extends
    if not reuse:  # (every chain evaluated whole, as before)
        map_values.MapValues._extends = lambda *_: (None, [])  # type: ignore[method-assign,assignment]
    try:
        return infer_values(graph, list("ab"), 4)
    finally:
        map_values.MapValues._extends = real  # type: ignore[method-assign]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(chains())
def test_a_chain_reusing_the_last_map_gives_the_full_evaluations_sets(text: str) -> None:
    reused, full = _sets(text, True), _sets(text, False)
    assert reused.values == full.values
    assert reused.relation == full.relation


def test_a_long_chain_of_sums_is_analysed_in_near_linear_time() -> None:
    text = "x = indices;\n" + "x = x + length;\n" * 600 + "res = x;"
    start = time.perf_counter()
    reused = _sets(text, True)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    full = _sets(text, False)
    slow = time.perf_counter() - start
    assert reused.values == full.values and reused.relation == full.relation
    assert fast < slow  # (measured about 4x at 600 maps)

"""Means of whole numbers whose sums pass 2^53 (compiler.means): the interpreter sums an int column
as Python ints, rounds the sum to a float once, then divides (`rasp.sops`), where float64 adds in
any order would round at each add. The value sets still hold every value it computes, for ints
near 2^53 / N, past 2^53, negative, and mixed with floats (a float column adds float64s in key
order), under any selector; or the compile is refused with a located reason."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler.blocks import value_key
from compiler.graph import build_graph
from compiler.means import MeanValues
from compiler.pinned_means import copy_means
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse

BIG = 2**53
SIGN = st.sampled_from([1, -1])
# ints whose sums of a few pass 2^53, ints past it (no float64 holds most of them), small ones
INTS = st.one_of(
    st.builds(lambda k, d, s: s * (BIG // k + d), st.integers(1, 7), st.integers(-3, 3), SIGN),
    st.builds(lambda m, d, s: s * (m * BIG + d), st.integers(1, 16), st.integers(-5, 5), SIGN),
    st.integers(-(2**62), 2**62),
    st.integers(-3, 3),
)
# floats a RASP literal writes as such (repr without an exponent)
FLOATS = st.sampled_from([0.5, -1.5, 0.1, 9007199254740994.0, -4503599627370497.5])
VALUES = st.one_of(INTS, INTS, INTS, FLOATS)
SELECTORS = [
    "select(indices, indices, <=)",
    "select(indices, indices, !=)",
    "select(tokens, tokens, ==)",
    "select(tokens, tokens, <=)",
    'select(tokens, "a", ==)',
    "select(v, v, ==)",
]
COUNT = 'selector_width(select(tokens, "a", ==))'


def _source(kind: int, a: object, b: object, c: object) -> str:
    """`v`: a map of tokens, an affine map of a count (uniform: one value per input), or of
    indices (a relation per position)."""
    if kind == 0:
        return f'v = {a!r} if tokens == "a" else ({b!r} if tokens == "b" else {c!r});\n'
    if kind == 1:
        return f"u = {COUNT};\nv = (u + {c!r}) * {a!r};\n"
    return f"v = indices * {a!r} + {b!r};\n"


def _check(text: str, alphabet: str, n: int) -> None:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    roots = {name: interp.get(name) for name in ("v", "res")}
    graph = build_graph(interp.get("res"))
    try:
        sets = infer_values(graph, list(alphabet), n)
    except CompileError as err:
        # a refusal claims nothing, but it says where and why
        assert all(d.span is not None and d.message for d in err.diagnostics), text
        return
    by_name = {node.name: node for node in graph.nodes}
    for tokens in (t for m in range(1, n + 1) for t in itertools.product(alphabet, repeat=m)):
        for name, root in roots.items():
            allowed = {value_key(x) for x in sets.of(by_name[name])}
            try:
                got = S.evaluate(root, list(tokens)).values
            except Exception:  # noqa: BLE001 (the interpreter refuses this input: no value)
                continue
            for i, value in enumerate(got):
                assert value_key(value) in allowed, (text, name, tokens, i, value)


PROGRAM = st.builds(
    lambda kind, a, b, c, sel, default: (
        _source(kind, a, b, c) + f"res = aggregate({sel}, v, {default!r});\n"
    ),
    st.integers(0, 2),
    VALUES,
    VALUES,
    st.one_of(VALUES, st.integers(0, 2)),
    st.sampled_from(SELECTORS),
    st.sampled_from([0, 0.5, -1]),
)


@settings(max_examples=40, deadline=None)
@given(text=PROGRAM, n=st.integers(2, 5))
@example(  # the case found: 1.8014398509481988e16 = float(3 * 6 * 3002399751580331) / 3
    text=f"u = {COUNT};\nv = (u + 1) * 3002399751580331;\n"
    "res = aggregate(select(indices, indices, <=), v, 0);\n",
    n=5,
)
@example(  # copies of one int past 2^53 (each query averages equal keys)
    text=f"u = {COUNT};\nv = (u + 1) * 3002399751580331;\n"
    "res = aggregate(select(tokens, tokens, ==), v, 0);\n",
    n=5,
)
@example(  # ints past 2^53 mixed with a float: float adds in key order, or exact int sums
    text='v = 9007199254740993 if tokens == "a" else (-0.5 if tokens == "b" else 3);\n'
    "res = aggregate(select(indices, indices, <=), v, 0);\n",
    n=4,
)
def test_every_mean_of_large_ints_is_in_the_set(text: str, n: int) -> None:
    _check(text, "ab" if n > 4 else "abc", n)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(text=PROGRAM, n=st.integers(2, 6))
def test_every_mean_of_large_ints_is_in_the_set_slow(text: str, n: int) -> None:
    _check(text, "ab" if n > 4 else "abc", n)


class _Known:
    """What `means_of` reads of the value analysis."""

    def __init__(self, n_max: int) -> None:
        self.problems: list = []
        self.n_max = n_max

    def intern(self, vals: object) -> tuple:
        return tuple(sorted(set(vals)))  # type: ignore[call-overload]


def _means(vals: list, w: int) -> set:
    node = type("Node", (), {"text": "aggregate(s, x)", "span": object()})()
    return set(MeanValues(_Known(8)).means_of(vals, w, node))  # type: ignore[arg-type]


@pytest.mark.parametrize("w", range(2, 9))
def test_int_means_are_one_rounding_of_the_exact_sum(w: int) -> None:
    """Ints past 2^53 / w: every mean of w of them is float(exact sum) / w, and only those (no
    float64 add order the interpreter never takes); a float among the values adds float64s too."""
    vals = [3002399751580331 * k for k in range(1, 7)]
    exact = {float(sum(c)) / w for c in itertools.combinations_with_replacement(vals, w)}
    assert _means(vals, w) == exact
    mixed = _means([*vals, 0.5], w)
    assert exact <= mixed
    total = 0.0  # a float column: float64 adds in key order, the largest first, then 0.5
    for _ in range(w - 1):
        total += float(vals[-1])
    assert (total + 0.5) / w in mixed


def test_small_int_means_are_unchanged() -> None:
    """Below 2^53 float64 adds ints exactly in any order: the same set as before."""
    vals = [1, 5, -7, 2**40 + 3]
    for w in range(2, 9):
        exact = {float(sum(c)) / w for c in itertools.combinations_with_replacement(vals, w)}
        assert _means(vals, w) == exact


def test_copies_of_an_int_past_2_53_are_its_exact_sums_rounded_or_float_adds() -> None:
    """`copy_means` of an int no float64 holds: an int column's exact k * v rounded once, or a
    float column's adds of float(v); not a refusal (None) that sent equal keys to every mean."""
    v = 3 * 6004799503160661  # 18014398509481983: float64 holds 18014398509481984
    found = copy_means([v, -v], 6)
    assert found is not None
    for s in (v, -v):
        total = float(s)  # one key: the int itself (not a mean)
        for k in range(2, 7):
            total += float(s)
            assert float(k * s) / k in found and total / k in found

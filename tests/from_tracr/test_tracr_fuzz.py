"""Random tracr programs (hypothesis): the lowered graph evaluates exactly as rasp.tracr (tracr's
semantics), the compiled graph gives the same values, and the compiler either refuses the program
with a located reason or gives those values on every input up to the length it was compiled for."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.resolve import resolve
from rasp import sops
from rasp import tracr as rasp
from rasp.errors import CompileError, RaspError
from rasp.tracr.lower import to_sops

VOCAB = [0, 1, 2]
MAX_LEN = 4
INPUTS = [list(t) for n in range(1, MAX_LEN + 1) for t in itertools.product(VOCAB, repeat=n)]

# (description, function) pairs: descriptions make a failing example readable.
INT_MAPS: list[tuple[str, Callable[[Any], Any]]] = [
    ("x + 1", lambda x: x + 1),
    ("x % 2", lambda x: x % 2),
    ("2 - x", lambda x: 2 - x),
    ("x / 2", lambda x: x / 2),
    ("None if x == 1 else x", lambda x: None if x == 1 else x),
]
BOOL_MAPS: list[tuple[str, Callable[[Any], Any]]] = [
    ("x > 0", lambda x: x > 0),
    ("x == 2", lambda x: x == 2),
]
PAIR_MAPS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("x + y", lambda x, y: x + y),
    ("x if x > y else y", lambda x, y: x if x > y else y),
    ("x * y", lambda x, y: x * y),
]
PREDICATES: list[tuple[str, Any]] = [
    ("EQ", rasp.Comparison.EQ),
    ("LT", rasp.Comparison.LT),
    ("GEQ", rasp.Comparison.GEQ),
    ("TRUE", rasp.Comparison.TRUE),
    ("q == k + 1", lambda k, q: q == k + 1),
    ("abs(k - q) <= 1", lambda k, q: abs(k - q) <= 1),
    ("(k + 2 * q) % 3 == 1", lambda k, q: (k + 2 * q) % 3 == 1),
]


class Named:
    """A function that prints as its description (failing examples stay readable)."""

    def __init__(self, text: str, fn: Callable[..., Any]) -> None:
        self.text, self.fn = text, fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.text


def describe(expr: rasp.RASPExpr) -> str:
    """The program as text: `Aggregate(Select(tokens, indices, q == k + 1), Map(x + 1, tokens))`."""
    if isinstance(expr, (rasp.TokensType, rasp.IndicesType, rasp.LengthType)):
        return repr(expr)
    parts = [describe(c) for c in expr.children]
    if isinstance(expr, rasp.Map):
        parts.insert(0, repr(expr.f))
    if isinstance(expr, rasp.SequenceMap):
        parts.insert(0, repr(expr.f))
    if isinstance(expr, rasp.Select):
        parts.append(repr(expr.predicate))
    if isinstance(expr, rasp.Aggregate):
        parts.append(f"default={expr.default!r}")
    return f"{type(expr).__name__}({', '.join(parts)})"


def leaves() -> st.SearchStrategy[rasp.SOp]:
    return st.sampled_from([rasp.tokens, rasp.indices, rasp.length])


@st.composite
def numbers(draw: st.DrawFn, depth: int = 2) -> rasp.SOp:
    """An s-op of (mostly) numbers."""
    if depth == 0:
        return draw(leaves())
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return draw(leaves())
    if choice == 1:
        text, f = draw(st.sampled_from(INT_MAPS))
        return rasp.Map(Named(text, f), draw(numbers(depth - 1)), simplify=False)
    if choice == 2:
        text, f = draw(st.sampled_from(PAIR_MAPS))
        return rasp.SequenceMap(Named(text, f), draw(numbers(depth - 1)), draw(numbers(depth - 1)))
    if choice == 3:
        return rasp.SelectorWidth(draw(selectors(depth - 1)))
    values = draw(st.one_of(numbers(depth - 1), bools(depth - 1)))
    default = draw(st.sampled_from([None, 0]))
    aggregate = rasp.Aggregate(draw(selectors(depth - 1)), values, default=default)
    return rasp.numerical(aggregate) if draw(st.booleans()) else aggregate


@st.composite
def bools(draw: st.DrawFn, depth: int = 1) -> rasp.SOp:
    text, f = draw(st.sampled_from(BOOL_MAPS))
    return rasp.Map(Named(text, f), draw(numbers(depth)), simplify=False)


@st.composite
def selectors(draw: st.DrawFn, depth: int = 1) -> rasp.Selector:
    text, predicate = draw(st.sampled_from(PREDICATES))
    predicate = predicate if isinstance(predicate, rasp.Comparison) else Named(text, predicate)
    keys = draw(leaves()) if depth == 0 else draw(numbers(depth - 1))
    queries = draw(leaves()) if depth == 0 else draw(numbers(depth - 1))
    select = rasp.Select(keys, queries, predicate)
    combine = draw(st.integers(0, 3))
    if combine == 1:
        return select & rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    if combine == 2:
        return select | rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    if combine == 3:
        return rasp.SelectorNot(select)
    return select


def tracr_values(program: rasp.SOp, xs: list[Any]) -> list[Any] | None:
    try:
        return program(xs)
    except Exception:  # noqa: BLE001 (tracr raises here: no value to match)
        return None


def same(got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-6)
    return bool(got == want)


def check(program: rasp.SOp) -> None:
    note(describe(program))
    lowered = to_sops(program)
    try:
        resolved = resolve(lowered, VOCAB, MAX_LEN)
    except CompileError:  # e.g. a Comparison that meets None on every input (tracr raises)
        assert all(tracr_values(program, xs) is None for xs in INPUTS)
        return
    wants: list[tuple[list[Any], list[Any]]] = []
    for xs in INPUTS:
        want = tracr_values(program, xs)
        if want is None:
            continue
        got = sops.evaluate(lowered, xs)
        assert isinstance(got, sops.SeqValue)
        assert list(got.values) == want and [type(v) for v in got.values] == [
            type(v) for v in want
        ], xs
        try:
            compiled_graph = sops.evaluate(resolved, xs)
        except RaspError:
            continue  # a Comparison met None: tracr raised there too, elsewhere in the graph
        assert isinstance(compiled_graph, sops.SeqValue)
        assert all(same(g, w) for g, w in zip(compiled_graph.values, want, strict=True)), xs
        wants.append((xs, want))
    if not wants:
        return  # tracr raises on every input: nothing to match
    try:
        model = compile_sop(program, VOCAB, MAX_LEN)
    except CompileError as err:
        assert all(d.message for d in err.diagnostics)
        return
    outputs = run_compiled(model, [xs for xs, _ in wants])
    for (xs, want), got in zip(wants, outputs, strict=True):
        assert all(same(g, w) for g, w in zip(got, want, strict=True)), (xs, got, want)


@pytest.mark.exactness
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=numbers(depth=2))
def test_random_tracr_programs(program: rasp.SOp) -> None:
    check(program)


@pytest.mark.slow
@pytest.mark.exactness
@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=numbers(depth=3))
def test_many_random_tracr_programs(program: rasp.SOp) -> None:
    check(program)

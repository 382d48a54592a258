"""A map reading one s-op more than once (`max(v0, v0)`): at a position that s-op holds one
value, so the value analysis maps each of its values once, not pairs of them (for a mean by
tokens at N = 40, past a minute: compiler fuzz numeric seed 1710110)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from compiler import compile_sop, map_values
from compiler.graph import build_graph
from compiler.values import infer_values
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import Evaluator
from tests.runtime_helpers import run_compiled

PROGRAM = """
v0 = aggregate(select(tokens, tokens, ==), indices, 0);
m = max(v0, v0);
"""
VOCAB = ["0", "1", "2"]


def _interpreter() -> Interpreter:
    interp = Interpreter()
    interp.exec_program(parse(PROGRAM, "<test>"))
    return interp


def _values(name: str, n: int) -> dict[str, tuple]:
    graph = build_graph(_interpreter().get(name))
    found = infer_values(graph, VOCAB, n)
    return {node.name: found.values[node.index] for node in graph.nodes}


def test_max_of_an_sop_with_itself_maps_each_value_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # `max(v0, v0)` is `v0 if v0 > v0 else v0`: a map of (v0, v0 > v0, v0), whose analysis at
    # N = 40 applied the function to pairs of v0's values past 100,000 times (over a minute in
    # all); once per value, 38,302 calls
    calls = 0
    original = map_values.apply_map

    def counted(fn: Any, args: Any) -> tuple[bool, Any]:
        nonlocal calls
        calls += 1
        if calls > 60_000:
            raise RuntimeError("the map's function applied over 60,000 times")
        return original(fn, args)

    monkeypatch.setattr(map_values, "apply_map", counted)
    values = _values("m", 40)
    assert set(values["m"]) == set(values["v0"])


def test_maps_reading_an_sop_twice_agree_with_the_interpreter() -> None:
    interp = _interpreter()
    inputs = [list(t) for n in range(1, 6) for t in itertools.product(VOCAB, repeat=n)]
    for name in ("m",):
        sop = interp.get(name)
        got = run_compiled(compile_sop(sop, VOCAB, 5, name=name), inputs)
        for tokens, row in zip(inputs, got, strict=True):
            assert row == list(Evaluator(tokens).value(sop).values), (name, tokens)  # type: ignore[union-attr]

"""Compiling deep s-op graphs: a chain of thousands of steps (a loop, or a recursion as deep as the
original RASP runs) compiles or is refused cleanly, never with a RecursionError."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.errors import CompileError, Source
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate
from tests.runtime_helpers import run_compiled

# 300 sums of two s-ops in a chain: the planners read each map's inputs as they plan it, several
# Python frames per map (compiler.encode.Readings.reading), so a chain of them recurses (a chain
# of maps of one s-op no longer does; nor does compiler.selector_cases on a deep selector, whose
# value analysis took 25 s here)
DEEP_CHAIN = "x = indices;\nfor i in range(300) { x = x + length; }\ny = x;"


def _sop(text: str, name: str = "y") -> object:
    interp = Interpreter()
    interp.exec_program(parse(text, "t.rasp"))
    return interp.get(name)


@pytest.mark.parametrize(("step", "tokens"), [("x = x + 1;", "ab"), ("x = not x;", "ba")])
def test_a_deep_chain_of_maps_compiles_without_the_big_stack(
    step: str, tokens: str, monkeypatch: Any
) -> None:
    import sys

    from compiler import compile_sop, driver

    # (PlanContext.chain_value and chain_values, MapSupports.support and MapValues.chain_values
    # walked a chain recursively, a frame or more per map: only rasp.deep_stack's limit ran it;
    # is_positional once failed at about 330 maps even so)
    start = "indices" if "+" in step else 'tokens == "a"'
    y = _sop(f"x = {start};\nfor i in range(1200) {{ {step} }}\ny = x;")
    monkeypatch.setattr(driver, "run_deep", lambda fn: fn())
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # (Python's usual limit, below the chain's 1,200 maps)
    try:
        compiled = compile_sop(y, ["a", "b"], 3, name="y", source=Source("t.rasp", ""))
    finally:
        sys.setrecursionlimit(limit)
    assert run_compiled(compiled, [list(tokens)]) == [list(evaluate(y, tokens).values)]


def test_a_chain_deeper_than_the_raised_limit_is_refused_cleanly(monkeypatch: Any) -> None:
    from compiler import compile_sop
    from rasp import deep_stack

    y = _sop(DEEP_CHAIN)
    monkeypatch.setattr(deep_stack, "RECURSION_LIMIT", 1200)  # (as a chain past 50,000 frames)
    with pytest.raises(CompileError, match="nests too deeply to compile"):
        compile_sop(y, ["a", "b"], 3, name="y", source=Source("t.rasp", ""))


def test_without_a_big_stack_a_deep_chain_is_refused_saying_why(monkeypatch: Any) -> None:
    # (rasp.deep_stack's fallback: no thread with a big stack, so Python's usual limit applies)
    import threading

    from compiler import compile_sop

    y = _sop(DEEP_CHAIN)

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    with pytest.raises(CompileError) as caught:
        compile_sop(y, ["a", "b"], 3, name="y", source=Source("t.rasp", ""))
    text = caught.value.render()
    assert "nests too deeply to compile" in text, text
    assert "it could not start (can't start new thread)" in text

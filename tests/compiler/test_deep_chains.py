"""Compiling deep s-op graphs: a chain of thousands of steps (a loop, or a recursion as deep as the
original RASP runs) compiles or is refused cleanly, never with a RecursionError."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.errors import CompileError, Source
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate


def _sop(text: str, name: str = "y") -> object:
    interp = Interpreter()
    interp.exec_program(parse(text, "t.rasp"))
    return interp.get(name)


def test_a_1500_deep_chain_of_maps_of_indices_compiles() -> None:
    from compiler import compile_sop

    # (is_positional walked such a chain recursively: RecursionError at about 330 maps)
    y = _sop("x = indices;\nfor i in range(1500) { x = x + 1; }\ny = x;")
    compiled = compile_sop(y, ["a", "b"], 3, name="y", source=Source("t.rasp", ""))
    assert compiled is not None
    assert list(evaluate(y, "ab").values) == [1500, 1501]


def test_a_chain_deeper_than_the_raised_limit_is_refused_cleanly(monkeypatch: Any) -> None:
    from compiler import compile_sop
    from rasp import deep_stack

    y = _sop("x = indices;\nfor i in range(1500) { x = x + 1; }\ny = x;")
    monkeypatch.setattr(deep_stack, "RECURSION_LIMIT", 1200)  # (as a chain past 50,000 frames)
    with pytest.raises(CompileError, match="nests too deeply to compile"):
        compile_sop(y, ["a", "b"], 3, name="y", source=Source("t.rasp", ""))


def test_without_a_big_stack_a_deep_chain_is_refused_saying_why(monkeypatch: Any) -> None:
    # (rasp.deep_stack's fallback: no thread with a big stack, so Python's usual limit applies)
    import threading

    from compiler import compile_sop

    y = _sop("x = indices;\nfor i in range(1500) { x = x + 1; }\ny = x;")

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    with pytest.raises(CompileError) as caught:
        compile_sop(y, ["a", "b"], 3, name="y", source=Source("t.rasp", ""))
    text = caught.value.render()
    assert "nests too deeply to compile" in text, text
    assert "it could not start (can't start new thread)" in text

"""What the interpreter tests share: run a program text, read a name's value, evaluate an s-op."""

from __future__ import annotations

from typing import Any

from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate


def run(text: str, interp: Interpreter | None = None) -> Interpreter:
    """`text` run as the file t.rasp (in `interp`, else a fresh interpreter)."""
    interp = interp or Interpreter()
    interp.exec_program(parse(text, "t.rasp"))
    return interp


def value(text: str, name: str = "x") -> Any:
    """What `name` holds after `text` runs."""
    return run(text).get(name)


def seq(text: str, tokens: Any, name: str = "x") -> list[Any]:
    """The values of the s-op `name` on the input `tokens`."""
    result = evaluate(value(text, name), tokens)
    return list(result.values)

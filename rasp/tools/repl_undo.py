"""Undo for the REPL's definition-time check (`rasp.tools.repl`): a session's bindings, and the
names of its nodes, saved and put back."""

from __future__ import annotations

from dataclasses import dataclass

from rasp.interpreter import Interpreter
from rasp.results import Bindings
from rasp.sops import Node


@dataclass(frozen=True)
class SavedBindings:
    bindings: Bindings
    node_names: list[tuple[Node, str | None]]


class BindingUndo:
    """Undo for the REPL's definition-time check.

    The interpreter binds a name before the REPL can test the value on the running example; when the
    test fails, the REPL puts the old bindings back (as the original, which never binds a failing
    value). Assignment also renames the assigned node (`tokens = tokens_int;` names tokens_int
    "tokens"), so the names of every visible node are restored too.
    """

    def __init__(self, interpreter: Interpreter) -> None:
        self._interpreter = interpreter

    def snapshot(self) -> SavedBindings:
        get = self._interpreter.get
        nodes = [v for n in self._interpreter.names() if isinstance(v := get(n), Node)]
        return SavedBindings(self._interpreter.snapshot(), [(n, n.name) for n in nodes])

    def restore(self, saved: SavedBindings) -> None:
        self._interpreter.restore(saved.bindings)
        for node, name in saved.node_names:
            node.name = name

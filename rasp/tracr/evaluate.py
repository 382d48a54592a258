"""tracr's evaluator: the value of an expression on one input, with tracr's semantics.

Every expression class defines `_evaluate(inputs, xs)` from its children's values; this module only
walks the graph (children first, each expression once per input) so deep programs do not recurse.
Errors are the exceptions tracr raises (a `ValueError` when a categorical comparison meets None, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rasp.tracr.expr import RASPExpr, Value, type_said
from rasp.walks import first_visits


class RASPEvaluator:
    """The interface of tracr's evaluators."""

    def evaluate(self, expr: RASPExpr, xs: Sequence[Value]) -> Any:
        raise NotImplementedError


class DefaultRASPEvaluator(RASPEvaluator):
    """tracr's default evaluator."""

    def evaluate(self, expr: RASPExpr, xs: Sequence[Value]) -> Any:
        xs = list(xs)
        values: dict[int, Any] = {}
        for node in postorder(expr):
            inputs = [values[id(child)] for child in node.children]
            values[id(node)] = node._evaluate(inputs, xs)
        return values[id(expr)]


def postorder(root: RASPExpr) -> list[RASPExpr]:
    """Every expression `root` depends on, each once, children first (iteratively)."""
    if not isinstance(root, RASPExpr):
        raise TypeError(f"expected a RASP expression, got {type_said(root)}")
    return list(first_visits(root, _children, id))


def _children(node: RASPExpr) -> Sequence[RASPExpr]:
    return node.children


def evaluate(expr: RASPExpr, xs: Sequence[Value]) -> Any:
    """The value of `expr` on the input `xs`: a list for an s-op, a [query][key] list of bools for a
    selector."""
    return DefaultRASPEvaluator().evaluate(expr, xs)

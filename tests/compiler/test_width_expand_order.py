"""compiler.widths' expansion of a selector's width into signed conjunction widths walks on a list
(`rasp.walks.unwound`) and its conjunction test without recursion: the same calls of the
selector planner, in the same order, and the same terms as the recursive form it replaces (kept
here as the reference), on generated selector formulas with shared parts."""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import HealthCheck, given, settings

from compiler.blocks import ALL_TRUE
from compiler.graph import Graph, Op, graph_and_index
from compiler.widths import SignedTerm, WidthPlanner
from tests.compiler.test_total_orders import _program
from tests.compiler.test_unwound_order import formulas


class _Recursive(WidthPlanner):
    """The recursive form of session 69 (compiler/widths.py at ed391106)."""

    def _is_conjunction(self, index: int) -> bool:
        g = self.ctx.graph
        node = g[index]
        if node.op is Op.SELECT:
            return True
        if node.op is Op.AND:
            return all(self._is_conjunction(i) for i in node.inputs)
        return node.op is Op.NOT and g[node.inputs[0]].op is Op.SELECT

    def _expand(self, index: int) -> list[SignedTerm]:
        node = self.ctx.graph[index]
        if self._is_conjunction(index):
            return [(1, self.selectors.atoms(index))]
        if node.op is Op.NOT:
            return [(1, [ALL_TRUE])] + [(-s, a) for s, a in self._expand(node.inputs[0])]
        if node.op is Op.OR:
            covering = self.selectors.covering(node)
            if covering is not None:
                return self._expand(covering)
        left, right = (self._expand(i) for i in node.inputs)
        both = [(s1 * s2, a1 + a2) for s1, a1 in left for s2, a2 in right]
        if node.op is Op.AND:
            return both
        return left + right + [(-s, a) for s, a in both]


class _Selectors:
    """A stand-in for the selector planner: each call noted, its answers made up (an atom per
    call; an OR covered by one side for some nodes)."""

    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def atoms(self, index: int) -> list[Any]:
        self.log.append(("atoms", index))
        return [("atom", index, len(self.log))]

    def covering(self, node: Any) -> int | None:
        self.log.append(("covering", node.index))
        return node.inputs[node.index % 2] if node.index % 3 == 0 else None


def _planner(kind: type[WidthPlanner], graph: Graph, log: list[Any]) -> WidthPlanner:
    planner = kind(type("Ctx", (), {"graph": graph})(), None, None, _Selectors(log))  # type: ignore[arg-type]
    return planner


def _walk(kind: type[WidthPlanner], graph: Graph) -> tuple[list[Any], list[Any]]:
    log: list[Any] = []
    planner = _planner(kind, graph, log)
    results = []
    for node in reversed(graph.nodes):  # (the root first: nothing below it known yet)
        if node.op.is_selector:
            results.append(planner._is_conjunction(node.index))
            results.append(planner._expand(node.index))
    return results, log


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas())
def test_width_expansion_works_in_the_recursions_order(text: str) -> None:
    graph, _ = graph_and_index(_program(text))
    assert _walk(WidthPlanner, graph) == _walk(_Recursive, graph)


def test_a_width_of_thousands_of_ands_and_nots_without_recursion() -> None:
    depth = 2 * sys.getrecursionlimit()
    text = "s = select(indices, indices, <);\n" + "s = s and select(tokens, tokens, ==);\n" * depth
    text += "s = not (s and select(tokens, indices, ==));\n" * depth
    graph, _ = graph_and_index(_program(text + "res = selector_width(s);"))
    planner = _planner(WidthPlanner, graph, [])
    root = graph.nodes[-1].inputs[0]
    ands = graph.nodes[root].inputs[0]
    for _ in range(depth - 1):
        ands = graph.nodes[graph.nodes[ands].inputs[0]].inputs[0]
    assert planner._is_conjunction(graph.nodes[ands].inputs[0])
    assert not planner._is_conjunction(root)
    terms = planner._expand(root)  # not(a and b): 1 - |a and b|, a depth of them
    assert len(terms) == depth + 1
    assert [sign for sign, _ in terms] == [(-1) ** k for k in range(depth + 1)]

"""The value analysis's walks of a chain of maps (compiler.key_predicates, compiler.count_keys)
visit each node once: a loop whose body reads its variable three times, `acc = acc - x if acc >
k else acc + 1`, made the tree walks take 3^k steps (defs fuzz seed 2202086 at N = 5: killed
at 600 s of wall clock, at least 96 s of CPU; 4.1 s now)."""

from __future__ import annotations

from compiler import count_keys
from compiler.graph import Graph, IRNode, Op, build_graph
from compiler.key_predicates import evaluate_at, map_sources
from rasp import sops as S
from rasp.errors import Source
from rasp.interpreter import load_source

LOOPS = 12  # 3^12 = 531,441 paths through the chain


class _Counted:
    """The graph, counting the nodes looked up (every walk reads a node through `graph[i]`)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.reads = 0

    def __getitem__(self, index: int) -> IRNode:
        self.reads += 1
        return self.graph[index]


def _chain() -> tuple[Graph, int, int]:
    """The loop's graph, its output's index and that of the source `tokens_int`."""
    text = f"""
x = tokens_int + 1;
acc = x;
for k in range({LOOPS}) {{
    acc = acc - x if acc > k else acc + 1;
}}
res = acc;
"""
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, S.SOp)
    graph = build_graph(root)
    (source,) = [n.index for n in graph.nodes if n.op is Op.TOKENS]
    return graph, graph.root, source


def test_map_sources_walks_each_node_once() -> None:
    graph, root, source = _chain()
    counted = _Counted(graph)
    assert map_sources(counted, root) == [source]  # type: ignore[arg-type]
    assert counted.reads <= 2 * len(graph)


def test_evaluate_at_computes_each_node_once() -> None:
    graph, root, source = _chain()

    def interpreted(token: int) -> int:
        acc = x = token + 1
        for k in range(LOOPS):
            acc = acc - x if acc > k else acc + 1
        return acc

    for token in (0, 1, 2, 5):
        counted = _Counted(graph)
        assert evaluate_at(counted, root, {source: token}) == interpreted(token)  # type: ignore[arg-type]
        assert counted.reads <= 2 * len(graph)


def test_largest_reading_walks_each_node_once() -> None:
    graph, root, source = _chain()
    counted = _Counted(graph)
    assert count_keys._largest_reading(counted, root, source) == [root]  # type: ignore[arg-type]
    counted = _Counted(graph)
    # from another source's view: nothing of the chain is computed from it alone
    assert count_keys._largest_reading(counted, root, root + 1) == []  # type: ignore[arg-type]
    assert counted.reads <= 4 * len(graph)

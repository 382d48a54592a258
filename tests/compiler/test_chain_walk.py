"""A chain of maps evaluated per combination of its sources (`PlanContext.chain_function`, the
map planners' rows) calls each map once per combination, however often the chain reads it: walked
as a tree, a `def` called in a loop re-evaluated its inner maps once per path (fuzz defs seed
1910140 at N = 4: 200 calls per row for 30 maps, 13 s of an 18 s compile). Its results are the
tree walk's, failures included, as are `chain_value`'s (one evaluation, walked iteratively)."""

from __future__ import annotations

import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from compiler.graph import Graph, Op
from compiler.map_values import apply_map
from compiler.plan_context import PlanContext


def _context(nodes: list[SimpleNamespace]) -> PlanContext:
    # (chain_function and chain_value read the graph alone)
    return PlanContext(Graph(tuple(nodes), len(nodes) - 1), None, ())  # type: ignore[arg-type]


def tree_value(nodes: list[SimpleNamespace], index: int, env: dict[int, Any]) -> tuple[bool, Any]:
    """The reference: the chain walked as a tree, recursively, inputs left to right, stopping at
    the first map that raises ((False, None) then)."""
    if index in env:
        return True, env[index]
    node = nodes[index]
    if node.op is Op.CONST:
        return True, node.value
    args = []
    for i in node.inputs:
        ok, v = tree_value(nodes, i, env)
        if not ok:
            return False, None
        args.append(v)
    return apply_map(node.fn, args)


def _node(op: Op, inputs: tuple[int, ...] = (), fn: Callable | None = None, value: Any = None):
    return SimpleNamespace(op=op, inputs=inputs, fn=fn, value=value)


def test_a_map_read_along_many_paths_is_called_once_per_combination() -> None:
    calls = [0]

    def plus(x: Any, y: Any) -> Any:
        calls[0] += 1
        return x + y

    # x_k = x_{k-1} + x_{k-1}: a tree walk calls 2^16 - 1 maps, the chain 16
    nodes = [_node(Op.TOKENS)] + [_node(Op.MAP, (k - 1, k - 1), plus) for k in range(1, 17)]
    chain = _context(nodes).chain_function(16, [0])
    assert chain([3]) == (True, 3 * 2**16)
    assert calls[0] == 16


def test_the_chain_gives_the_tree_walks_values_and_failures() -> None:
    rng = random.Random(7)
    fns = [
        lambda x, y: x - y,
        lambda x, y: x // y,  # fails at y == 0, as the tree walk does
        lambda x, y: x * y % 7,
        lambda x: -x,
        lambda x: 1 / x,  # fails at 0
    ]
    for trial in range(40):
        nodes = [_node(Op.TOKENS), _node(Op.INDICES), _node(Op.CONST, value=2)]
        for index in range(3, 14):
            fn = rng.choice(fns)
            arity = fn.__code__.co_argcount
            nodes.append(_node(Op.MAP, tuple(rng.randrange(index) for _ in range(arity)), fn))
        ctx = _context(nodes)
        sources = [0, 1, 0] if trial % 2 else [1, 0]  # (equal sources: the last one's value)
        for index in (13, 8, 2, 0):
            chain = ctx.chain_function(index, sources)
            for combo in ([0, 1, 5], [3, 0, -2], [4, 4, 1], [1, 2, 0]):
                combo = combo[: len(sources)]
                env = dict(zip(sources, combo, strict=True))
                want = tree_value(nodes, index, env)
                assert chain(combo) == want, (trial, index, combo)
                assert ctx.chain_value(index, env) == want, (trial, index, combo)

"""What the s-op rewrites applied before the stages (`compiler.counts`, `compiler.order_digits`,
both from `compiler.driver.prepare`) share: the compiler's own value sets of a few s-ops, and a
node rebuilt over rewritten children."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.graph import build_graph
from compiler.values import ValueSets, infer_values
from rasp import sops


class ValueFacts:
    """Value sets of some s-ops, from one run of the compiler's value analysis over a graph that
    reads them all: a chain of two-input maps, as `compiler.resolve` builds, started at `tokens`,
    which has no relation, so that no link is analysed position by position. Raises CompileError
    where the analysis does (the compile itself then reports it, in its own words)."""

    def __init__(self, nodes: Sequence[sops.SOp], vocab: Sequence[Atom], max_len: int) -> None:
        chain: sops.SOp = sops.TokensSOp()
        for node in {n.id: n for n in nodes}.values():
            chain = sops.MapSOp(fn=_zero, inputs=(node, chain), text="facts")
        self.index = {n.id: i for i, n in enumerate(sops.walk(chain))}
        self.sets: ValueSets = infer_values(build_graph(chain), vocab, max_len)

    def values(self, node: sops.Node) -> tuple[Atom, ...]:
        return self.sets.values[self.index[node.id]]


def _zero(*args: Any) -> int:
    return 0


def rebuilt(node: sops.Node, new: dict[int, sops.Node]) -> sops.Node:
    """`node` itself when none of its children changed, else a copy reading the new children
    (`new`: by old node id, every child's replacement, itself where unchanged)."""
    if all(new[c.id] is c for c in node.children()):
        return node
    swap: dict[str, Any] = {
        f.name: new[getattr(node, f.name).id]
        for f in dataclasses.fields(node)
        if f.init and isinstance(getattr(node, f.name), sops.Node)
    }
    if isinstance(node, sops.MapSOp):
        swap["inputs"] = tuple(new[c.id] for c in node.inputs)
    return dataclasses.replace(node, **swap)

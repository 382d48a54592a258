"""What the s-op rewrites applied before the stages (`compiler.counts`, `compiler.order_digits`,
both from `compiler.forms.prepare`) share: which s-ops depend on positions alone and their
values at one length, the compiler's own value sets of a few s-ops, and a node rebuilt over
rewritten children."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.graph import graph_and_index
from compiler.values import ValueSets, infer_values
from rasp import sops
from rasp.errors import RaspError


def positional_nodes(order: list[sops.Node]) -> tuple[set[int], set[int]]:
    """Nodes whose value at each position depends only on (index, length) (constants, indices,
    length, maps, selects, widths and aggregates of them), and those among them that read indices
    or length at all (the others are constants)."""
    positional: set[int] = set()
    moving: set[int] = set()
    for node in order:
        children = node.children()
        if isinstance(node, (sops.IndicesSOp, sops.LengthSOp)):
            positional.add(node.id)
            moving.add(node.id)
        elif isinstance(node, sops.ConstSOp):
            positional.add(node.id)
        elif isinstance(
            node,
            (
                sops.MapSOp,
                sops.Select,
                sops.SelectAnd,
                sops.SelectOr,
                sops.SelectNot,
                sops.SelectorWidthSOp,
                sops.AggregateSOp,
            ),
        ) and all(c.id in positional for c in children):
            positional.add(node.id)
            if any(c.id in moving for c in children):
                moving.add(node.id)
    return positional, moving


# Each compile asks for the same scope several times (the size prediction's probes, then each form
# it builds), and at N = 1024 one pass over every length takes about a second.
@functools.lru_cache(maxsize=16)
def positional_widths(selector: sops.Selector, max_len: int) -> tuple[tuple[int, ...], ...] | None:
    """Per length n = 1..max_len, the keys the positional `selector` (`positional_nodes`) selects
    at each query, as the interpreter computes them (it reads no token, so any input of that
    length gives them); None where the interpreter raises at some length."""
    out = []
    for n in range(1, max_len + 1):
        try:
            matrix = sops.Evaluator([None] * n, compiling=True).matrix(selector)  # [query, key]
        except RaspError:
            return None
        out.append(tuple(int(w) for w in matrix.sum(axis=1)))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def positional_values(sop: sops.SOp, max_len: int) -> tuple[tuple[Any, ...], ...] | None:
    """Per length n = 1..max_len, the positional `sop`'s values, as `positional_widths`."""
    out = []
    for n in range(1, max_len + 1):
        try:
            out.append(sops.Evaluator([None] * n, compiling=True).seq(sop).values)
        except RaspError:
            return None
    return tuple(out)


class ValueFacts:
    """Value sets (and selectors' at-most-one facts) of some nodes, from one run of the compiler's
    value analysis over a graph that reads them all: a chain of two-input maps (no large product),
    started at `tokens`, which has no relation, so that no link is analysed position by position;
    a selector is read through its width. Raises CompileError where the analysis does (the
    compile itself then reports it, in its own words)."""

    def __init__(self, nodes: Sequence[sops.Node], vocab: Sequence[Atom], max_len: int) -> None:
        chain: sops.SOp = sops.TokensSOp()
        for node in {n.id: n for n in nodes}.values():
            read = sops.SelectorWidthSOp(selector=node) if isinstance(node, sops.Selector) else node
            chain = sops.MapSOp(fn=_zero, inputs=(read, chain), text="facts")  # type: ignore[arg-type]
        graph, self.index = graph_and_index(chain)  # not walk positions: leaves are shared
        self.sets: ValueSets = infer_values(graph, vocab, max_len)

    def values(self, node: sops.Node) -> tuple[Atom, ...]:
        return self.sets.values[self.index[node.id]]

    def at_position(self, node: sops.Node, position: int) -> tuple[Atom, ...] | None:
        """The values `node` may take at `position` of an input of any length, where the analysis
        has its relation (values per position and length); else None."""
        rel = self.sets.relation[self.index[node.id]]
        if rel is None:
            return None
        found: dict[Any, Atom] = {}
        for n in range(position + 1, self.sets.max_len + 1):
            for v in rel.get((position, n), ()):
                found.setdefault((type(v), repr(v)), v)
        return tuple(found.values())

    def at_most_one(self, selector: sops.Node) -> bool:
        return self.sets.at_most_one[self.index[selector.id]]

    def never_empty(self, selector: sops.Node) -> bool:
        """Whether the selector selects a key for every query of every input (`ValueSets`)."""
        return self.sets.never_empty[self.index[selector.id]]


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

"""S-ops the value analysis shows to be a constant, or the length, compiled as one.

An s-op whose value set is one value (`selector_width(select(length, v0 - length, <=))` with
`v0 - length` never positive: 0 on every input; an aggregate whose selector selects no key: its
default) is that constant wherever the interpreter gives it a value: the stages read it from the
`one` dimension, as a written constant, and build nothing for it or for what only it reads (the
planners walk from the output). A width that is n at every position of every length n (its
selector selects every key: `select(indices, length, <)`) is the length: the planners read it as
`length` (one shared head) instead of a head over its selector. The names, spans and texts stay
the node's own, so the residual labels and the refusals name it as the program does.

An aggregate whose selector selects a key for every query of every input (`ValueSets.never_empty`:
`select(indices, 1, <=)`, `select(tokens, tokens, ==)`) never takes its default, and its value
set leaves it out; the default becomes one of the values it has (the number nearest 0 among
them, else the first), so a string default of a mean of numbers is no obstacle and a categorical
copy has no column for a value it never holds. (BOS still carries the default, with a weight the
certificate bounds.)
"""

from __future__ import annotations

import math
from dataclasses import replace

from compiler.blocks import Atom, is_number, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.values import ValueSets

# what is already as cheap as it gets (a leaf), or not an s-op
_KEPT = (Op.TOKENS, Op.INDICES, Op.LENGTH, Op.CONST, Op.SELECT, Op.AND, Op.OR, Op.NOT)


def fold_constants(graph: Graph, values: ValueSets) -> Graph:
    """`graph` with each s-op of one value a constant and each width equal to the length a
    length; `graph` itself where there is none. Node indices (and so the value sets) are kept."""
    key = ("folded", id(graph))  # every build of one analysis folds the same graph alike
    found = values.memo.get(key)
    if found is not None and found[0] is graph:
        return found[1]
    nodes = list(graph.nodes)
    for node in graph.nodes:
        if node.op in _KEPT:
            continue
        vals = values.values[node.index]
        if len(vals) == 1:
            nodes[node.index] = _as(node, Op.CONST, value=vals[0])
        elif node.op is Op.SELECTOR_WIDTH and _is_length(values, node.index):
            nodes[node.index] = _as(node, Op.LENGTH)
        elif node.op is Op.AGGREGATE and values.never_empty[node.inputs[0]]:
            stand_in = _untaken_default(node.value, vals)
            if stand_in is not None:
                nodes[node.index] = replace(node, value=stand_in)
    folded = graph if nodes == list(graph.nodes) else Graph(tuple(nodes), graph.root)
    values.memo[key] = (graph, folded)  # (the graph kept alive: its id stays its own)
    return folded


def _as(node: IRNode, op: Op, value: object = None) -> IRNode:
    return replace(node, op=op, inputs=(), fn=None, kind=None, comparison=None, value=value)


def _untaken_default(default: Atom, vals: tuple[Atom, ...]) -> Atom | None:
    """A value of `vals` to stand for a default never taken; None where the default is one of
    them already (or there is none)."""
    if not vals or any(value_key(v) == value_key(default) for v in vals):
        return None
    numbers = [v for v in vals if is_number(v) and math.isfinite(v)]
    return min(numbers, key=lambda v: (abs(v), v < 0)) if numbers else vals[0]


def _is_length(values: ValueSets, index: int) -> bool:
    """Whether the node is n at every position of every length n (its relation says so)."""
    rel = values.relation[index]
    return rel is not None and all(
        len(vs) == 1 and type(vs[0]) is int and vs[0] == n for (_, n), vs in rel.items()
    )

"""What a refused count's select reads with float32 error, by name, for its refusal's hint
(compiler.refusals): the s-ops its sides are computed from through maps that come from means, and
whether one of them is an affine map of two means over one selector.

`make_count(make_pair_balance(tokens, "a", "b"), -1)` counts the keys where `opens - closes` is -1.
The two means are two dimensions, and the step MLP that compares their difference rounds a sum of
three products in any order: the key's one-hot carries that error into the count's scores. One
mean of a vote per key (1 where `opens` counts it, -1 where `closes` does) is one dimension, which
the step reads in the integer band exactly: that program certifies at N = 32 where this one is
refused from N = 10. The hint says so; rewriting the program is the writer's choice, since
tracr's `opens - closes` and the mean of votes can differ in their last bits.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from compiler.graph import Graph, IRNode, Op
from compiler.rounded import unrounded

_SELECTORS = (Op.SELECT, Op.AND, Op.OR, Op.NOT)
# a line's value at a probe, computed two ways (the map's own expression, a·x + b·y): a few roundings
_LINE = 1e-12


@dataclass(frozen=True)
class NoisySides:
    """The s-ops a count's select reads that come from means (`read`), the means (`means`), and
    the text of a vote that makes one of them one mean (`vote`, "bools_open - bools_close")."""

    read: tuple[str, ...]
    means: tuple[str, ...]
    vote: tuple[str, str] | None  # (the map of two means, the vote per key)
    mean: bool = False  # the refused block is an aggregate's mean, not a width


def noisy_sides(graph: Graph, width: str) -> NoisySides | None:
    """For the selector width (or aggregate) named `width`: what its select reads from means;
    None where it reads no mean (or there is no such width)."""
    kinds = (Op.SELECTOR_WIDTH, Op.AGGREGATE)
    node = next((n for n in graph.nodes if n.op in kinds and n.name == width), None)
    if node is None:
        return None
    read: list[str] = []
    means: list[str] = []
    vote: tuple[str, str] | None = None
    for select in _selects(graph, node.inputs[0]):
        for side in select.inputs:
            found = means_under(graph, side)
            if not found:
                continue
            read.append(_named_along(graph, side))
            means += [graph[i].name for i in found]
            vote = vote or _vote(graph, side)
    if not means:
        return None
    return NoisySides(
        tuple(dict.fromkeys(read)),
        tuple(dict.fromkeys(means)),
        vote,
        node.op is Op.AGGREGATE,
    )


def _selects(graph: Graph, index: int) -> list[IRNode]:
    node = graph[index]
    if node.op is Op.SELECT:
        return [node]
    return [s for i in node.inputs if graph[i].op in _SELECTORS for s in _selects(graph, i)]


def through_maps(graph: Graph, starts: list[int]) -> Iterator[IRNode]:
    """The nodes `starts` are computed from through maps, the starts included (a map's inputs
    followed, nothing else's), each visited once (maps that share inputs)."""
    seen: set[int] = set()
    stack = list(reversed(starts))
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        node = graph[i]
        yield node
        if node.op is Op.MAP:
            stack.extend(reversed(node.inputs))


def means_under(graph: Graph, index: int) -> list[int]:
    """The aggregates `index` is, or is computed from through maps (a mean's own inputs not
    followed)."""
    return [node.index for node in through_maps(graph, [index]) if node.op is Op.AGGREGATE]


def _named_along(graph: Graph, index: int) -> str:
    """The s-op as the program names it: the first named one up a chain of one-input maps, but
    never an input (`indicator(tokens == a)` is not `tokens`: a vote of `tokens - tokens` named
    nothing), where the s-op's own text says it."""
    node = graph[index]
    while not node.named and node.op is Op.MAP and len(node.inputs) == 1:
        node = graph[node.inputs[0]]
    if node.named and node.op not in (Op.TOKENS, Op.INDICES, Op.LENGTH):
        return node.name
    start = graph[index]
    return start.name if start.named else start.text


def affine_vote(graph: Graph, index: int) -> tuple[str, str] | None:
    """`_vote`, for the other refusals' hints (compiler.mean_sums)."""
    return _vote(graph, index)


def _vote(graph: Graph, index: int) -> tuple[str, str] | None:
    """(the map's name, its vote per key) for the first map up from `index` that is a·m1 + b·m2
    of two means over one selector with default 0, else None."""
    node = graph[index]
    while node.op is Op.MAP:
        if len(node.inputs) == 2:
            m1, m2 = (graph[i] for i in node.inputs)
            if (
                m1.op is Op.AGGREGATE
                and m2.op is Op.AGGREGATE
                and m1.inputs[0] == m2.inputs[0]
                and m1.value == 0
                and m2.value == 0
                and (ab := _coefficients(node)) is not None
            ):
                v1, v2 = (_named_along(graph, m.inputs[1]) for m in (m1, m2))
                return node.name, _combination(ab, v1, v2)
            return None
        if len(node.inputs) != 1:
            return None
        node = graph[node.inputs[0]]
    return None


def _coefficients(node: IRNode) -> tuple[float, float] | None:
    """(a, b) where the map is a·x + b·y at a few points, up to float64's rounding of those terms
    (a few units in the last place: _LINE of |a·x| + |b·y|), else None. Only a hint's words
    depend on it (the vote it names is one mean of the same values): a map 10^-10 off a line
    at a probe, which the old absolute 10^-9 took for one, is no such vote."""
    fn = unrounded(node.fn)  # (a tracr output's 12 digits would move it off its line)
    if fn is None:
        return None
    try:
        zero = float(fn(0, 0))
        a, b = float(fn(1, 0)) - zero, float(fn(0, 1)) - zero
        probes = ((0.5, 0.25), (0.25, 0.75), (1.0, 1.0))
        line = all(
            abs(float(fn(x, y)) - (a * x + b * y)) <= _LINE * (abs(a * x) + abs(b * y))
            for x, y in probes
        )
    except Exception:  # (the program's own function: any failure means "not a line")
        return None
    return (a, b) if line and zero == 0 and a and b else None


def _combination(ab: tuple[float, float], v1: str, v2: str) -> str:
    def term(c: float, name: str) -> str:
        size = abs(c)
        return name if size == 1 else f"{size:g} * {name}"

    a, b = ab
    first = term(a, v1) if a > 0 else f"-{term(a, v1)}"
    return f"{first} {'+' if b > 0 else '-'} {term(b, v2)}"


def side_maps(graph: Graph) -> frozenset[str]:
    """The maps a select reads as a side that are computed from means (through maps): the
    sides the driver's table build computes from their inputs' one-hots (compiler.side_tables)."""
    return frozenset(
        graph[side].name
        for node in graph.nodes
        if node.op is Op.SELECT
        for side in node.inputs
        if graph[side].op is Op.MAP and means_under(graph, side)
    )

"""A selector read as a predicate on its keys, for proving what a conjunction selects
(compiler.count_keys): the selectors it is the conjunction of, whether each depends on the key
alone or is a class `select(x, x, ==)`, and a key-only one's signature, which makes
`select(tokens, "a", ==)` and `select(is_a, True, ==)` with `is_a = tokens == "a"` one predicate
(the set of the tokens' values where it holds). Also the s-ops a chain of maps is computed from,
and its value where they take given values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compiler.blocks import Atom, value_key
from compiler.graph import Graph, IRNode, Op
from rasp import sops
from rasp.walks import Steps, first_visits, unwound

# A key-only predicate is compared by its truth on its source's values up to this many.
MAX_SOURCE_VALUES = 10_000


def conjuncts_of(graph: Graph, index: int) -> list[int]:
    """The selectors `index` is the conjunction of (nested `and`s flattened)."""
    # (a stack, not recursion: thousands of ands nest as deep; leftmost conjunct first)
    found: list[int] = []
    stack = [index]
    while stack:
        at = stack.pop()
        if graph[at].op is Op.AND:
            stack.extend(reversed(graph[at].inputs))
        else:
            found.append(at)
    return found


def key_only(graph: Graph, index: int) -> bool:
    """Whether the selector's value for a (key, query) pair depends on the key alone."""
    return unwound(_key_only_steps(graph, index))


def _key_only_steps(graph: Graph, index: int) -> Steps[bool]:
    node = graph[index]
    if node.op is Op.SELECT:
        return graph[node.inputs[1]].op is Op.CONST
    if node.op in (Op.NOT, Op.AND, Op.OR):
        for i in node.inputs:  # (the first False ends it, as `all` does)
            if not (yield _key_only_steps(graph, i)):
                return False
        return True
    return False


def is_class(graph: Graph, index: int) -> bool:
    """Whether the selector is `select(x, x, ==)`: key and query in one class of one s-op."""
    node = graph[index]
    return (
        node.op is Op.SELECT
        and node.comparison is sops.Comparison.EQ
        and node.inputs[0] == node.inputs[1]
    )


def signature(
    graph: Graph, index: int, values: Callable[[int], Sequence[Atom]] | None = None
) -> tuple[Any, ...]:
    """Structural identity of a key-only selector: `not nine` written twice is one predicate (the
    IR keeps every call as its own node); s-ops other than constants are compared as nodes. With
    value sets, a `select(k, constant, op)` whose k is a chain of one-input maps of a source s is
    the set of s's values where it holds: `select(tokens, "a", ==)` and `select(is_a, True, ==)`
    with `is_a = tokens == "a"` are one predicate."""
    node = graph[index]
    if is_class(graph, index):
        return (Op.SELECT, node.comparison, node.inputs[0], "class")
    if node.op is Op.SELECT:
        keys, queries = node.inputs
        constant = graph[queries]
        if values is not None:
            holds = _holds_on_source(graph, keys, node, constant.value, values)
            if holds is not None:
                return holds
        return (Op.SELECT, node.comparison, keys, (Op.CONST, value_key(constant.value)))
    parts = [signature(graph, i, values) for i in node.inputs]
    if values is not None and all(p[0] == "holds" for p in parts):
        # `not`, `and`, `or` of predicates of one source: where they hold on its values
        sources = {p[1] for p in parts}
        if len(sources) == 1:
            (source,) = sources
            if node.op is Op.NOT:
                every = frozenset(value_key(v) for v in values(source))
                return ("holds", source, every - parts[0][2])
            sets = [p[2] for p in parts]
            joined = frozenset.intersection(*sets) if node.op is Op.AND else frozenset.union(*sets)
            return ("holds", source, joined)
    return (node.op, *parts)


def _holds_on_source(
    graph: Graph,
    keys: int,
    select: IRNode,
    constant: Atom,
    values: Callable[[int], Sequence[Atom]],
) -> tuple[Any, ...] | None:
    """("holds", s, the keys of s's values where `select(keys, constant, op)` holds) when `keys`
    is s or a chain of one-input maps of s; None where a map or comparison raises on a value (the
    interpreter fails there: no claim)."""
    source = keys
    while graph[source].op is Op.MAP and len(graph[source].inputs) == 1:
        source = graph[source].inputs[0]
    comparison = select.comparison
    assert comparison is not None
    if len(values(source)) > MAX_SOURCE_VALUES:
        return None
    held = []
    for value in values(source):
        try:
            if comparison.apply(evaluate_at(graph, keys, {source: value}), constant):
                held.append(value_key(value))
        except Exception:  # noqa: BLE001 (a program's function may raise anything)
            return None
    return ("holds", source, frozenset(held))


def map_sources(graph: Graph, index: int) -> list[int]:
    """The s-ops other than maps and constants that `index` is computed from by maps, each once,
    in the order a walk of the chain meets them first."""

    # each node walked once (rasp.walks.first_visits): a loop's `acc = acc - x if acc > k else
    # acc + 1` reads acc three times, and a walk of the tree took 3^k steps (defs fuzz seed
    # 2202086); the sources are the chain's leaves, met in the same order either way
    def chain(i: int) -> Sequence[int]:
        node = graph[i]
        return node.inputs if node.op is Op.MAP else ()

    return [i for i in first_visits(index, chain, key=int) if graph[i].op not in (Op.MAP, Op.CONST)]


def evaluate_at(graph: Graph, index: int, at: dict[int, Atom]) -> Atom:
    """Node `index` where its sources take the values `at` (raises where a map does)."""
    # each node computed once (the values of the nodes a map reads several times kept): as
    # map_sources' walk, a tree's evaluation of a loop's chain took 3^k calls
    known: dict[int, Atom] = dict(at)

    def value(i: int) -> Atom:
        if i in known:
            return known[i]
        node = graph[i]
        result = node.value if node.op is Op.CONST else node.fn(*(value(j) for j in node.inputs))
        known[i] = result
        return result

    return value(index)

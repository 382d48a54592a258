"""Maps of a single-key copy moved before the copy (`BuildOptions.moved_maps`).

`round(shift(x, 1, d))` maps the copy of one key's x (or the default d where no key is selected);
where the selector selects at most one key at every query (`ValueSets.at_most_one`), that is the
copy of `round(x)` with the default `round(d)`: at each position the same value, as the
interpreter copies one key's value as it is (no mean). Built so, the map reads x where x is
written (its sources' readings, often a number stepped once) and the copy moves the map's few
values, where the map over the copy reads the copy's one-hot of x's many values (docs/compiler.md,
"Builds kept where no larger": 24,506 parameters in 4 layers, moved 15,049 in 3). A map of
several copies by one such selector moves too (`shift(a, 1, 0) + shift(b, 1, 0)` is
`shift(a + b, 1, 0)`: every copy copies the same key, or none).

Not moved: a map of anything besides such copies and constants (`round(shift(x) + indices)` is
no map of the copied values alone), copies whose selector may select several keys (a mean of the
mapped values is not the map of the mean) or by two selectors (two keys), and a map that fails
on some value of the sources (all combinations, up to MAX_CHECKED of them) or on the defaults:
the interpreter never computes it on values no query copies, so the moved map would fail where
the program does not. `compiler.smaller_builds` keeps such a build only where it is proved and
no larger; the certifier checks it as any other.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

from compiler.graph import Graph, IRNode, Op
from compiler.map_values import apply_map
from compiler.picks import Pick
from compiler.values import ValueSets

# the moved map's name: the map's own with this suffix, a helper's label (`x~select`): the tools
# pair program s-ops with labels by name, and no program s-op computes it. Without a leading
# "_": a generated label no graph of the program has reads to them as a file's older names.
SUFFIX = "~before_copy"
# the most combinations of the copied sources' values a map is tried on before it moves
MAX_CHECKED = 4096


def movable(graph: Graph, values: ValueSets) -> frozenset[str]:
    """The names of the maps of `graph` (with `values`, its analysis) that `move_maps` moves."""
    return frozenset(node.name for node in graph.nodes if _moved(graph, values, node) is not None)


def move_maps(graph: Graph, values: ValueSets, names: frozenset[str]) -> Graph:
    """`graph` with each map named in `names` that `movable` allows written as the copy of the map
    of the copied s-ops: the map keeps its name, span and index order and becomes the aggregate;
    the map of the sources is a new node just before it. `graph` itself where none moves. The
    node indices after a moved map shift: the caller analyses the new graph's values afresh."""
    moves: dict[int, Move] = {}
    for node in graph.nodes:
        if node.name in names:
            found = _moved(graph, values, node)
            if found is not None:
                moves[node.index] = found
    if not moves:
        return graph
    taken = {node.name for node in graph.nodes}
    at: dict[int, int] = {}  # old index -> new index
    nodes: list[IRNode] = []

    def add(node: IRNode, inputs: tuple[int, ...]) -> int:
        index = len(nodes)
        nodes.append(replace(node, index=index, inputs=inputs))
        return index

    for node in graph.nodes:
        inputs = tuple(at[i] for i in node.inputs)
        if node.index not in moves:
            at[node.index] = add(node, inputs)
            continue
        move = moves[node.index]
        sources = ", ".join(dict.fromkeys(_named(graph[s]) for s in move.sources.values()))
        mapped = replace(
            node,
            name=_fresh(node.name.lstrip("_") + SUFFIX, taken),
            named=False,
            local=None,
            text=f"{node.text}, moved before the copy of {sources}",
        )
        # the map of the sources: each copy's place among the map's inputs taken by its source
        read = tuple(at[move.sources.get(i, i)] for i in node.inputs)
        source_map = add(mapped, read)
        aggregate = replace(node, op=Op.AGGREGATE, fn=None, value=move.default)
        at[node.index] = add(aggregate, (at[move.selector], source_map))
    return Graph(tuple(nodes), at[graph.root])


@dataclass(frozen=True)
class Move:
    """A map moved before its copies: their one selector, each copy's source by the copy's
    index, and the moved copy's default (the map of the copies' defaults)."""

    selector: int
    sources: dict[int, int]
    default: Any


def _moved(graph: Graph, values: ValueSets, node: IRNode) -> Move | None:
    """How `node` moves before the copies it maps, where it can, else None."""
    if node.op is not Op.MAP or node.fn is None or isinstance(node.fn, Pick):
        return None
    copies = [graph[i] for i in dict.fromkeys(node.inputs) if graph[i].op is not Op.CONST]
    if not copies or any(c.op is not Op.AGGREGATE for c in copies):
        return None
    selectors = {c.inputs[0] for c in copies}
    if len(selectors) != 1 or not values.at_most_one[copies[0].inputs[0]]:
        return None  # (copies by two selectors may copy two keys)
    sources = {c.index: c.inputs[1] for c in copies}
    if any(graph[s].op is Op.CONST for s in sources.values()):
        return None  # (a copy of a constant is folded: nothing to move)
    distinct = list(dict.fromkeys(sources.values()))
    sets = [values.values[s] for s in distinct]
    if math.prod(len(v) for v in sets) > MAX_CHECKED:
        return None

    def at(value_of: dict[int, Any]) -> tuple[bool, Any]:
        args = [value_of[i] if i in value_of else graph[i].value for i in node.inputs]
        try:
            return apply_map(node.fn, args)
        except Exception:  # noqa: BLE001 (a user's map on values it never met: not moved)
            return False, None

    for combo in itertools.product(*sets):
        by_source = dict(zip(distinct, combo, strict=True))
        if not at({c: by_source[s] for c, s in sources.items()})[0]:
            return None
    ok, default = at({c.index: c.value for c in copies})
    if not ok:
        return None
    return Move(copies[0].inputs[0], sources, default)


def _named(node: IRNode) -> str:
    """A source as the moved map's text names it: its name where the program gave one."""
    return node.name if node.named else node.text


def _fresh(name: str, taken: set[str]) -> str:
    """`name`, or it with the first free number after it; noted as taken."""
    found, n = name, 2
    while found in taken:
        found, n = f"{name}{n}", n + 1
    taken.add(found)
    return found

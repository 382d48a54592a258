"""Maps of a single-key copy moved before the copy (`BuildOptions.moved_maps`).

`round(shift(x, 1, d))` maps the copy of one key's x (or the default d where no key is selected);
where the selector selects at most one key at every query (`ValueSets.at_most_one`), that is the
copy of `round(x)` with the default `round(d)`: at each position the same value, as the
interpreter copies one key's value as it is (no mean). Built so, the map reads x where x is
written (its sources' readings, often a number stepped once) and the copy moves the map's few
values, where the map over the copy reads the copy's one-hot of x's many values (docs/compiler.md,
"Builds kept where no larger": 24,506 parameters in 4 layers, moved 15,049 in 3). A map of
several copies by one such selector moves too (`shift(a, 1, 0) + shift(b, 1, 0)` is
`shift(a + b, 1, 0)`: every copy copies the same key, or none). A chain moves whole: a map of
moved maps (and of copies by their selector) is the copy of the map of their source maps
(`round(shift(x, 1, d)) % 3` is `shift(round(x) % 3, 1, round(d) % 3)`), checked on every value
its source maps take; `innermost` names each chain's first map, which moves alone too.

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
    """The names of the maps of `graph` (with `values`, its analysis) that `move_maps` moves: each
    map of copies, and each map of those maps once they move (a chain)."""
    return frozenset(graph[i].name for i in _moves(graph, values, None))


def innermost(graph: Graph, names: frozenset[str]) -> frozenset[str]:
    """The maps named in `names` that read the copies of `graph` itself, not a map that moves
    before them: each chain's first (all that moved before chains did)."""
    return frozenset(
        node.name
        for node in graph.nodes
        if node.name in names and all(graph[i].op in (Op.AGGREGATE, Op.CONST) for i in node.inputs)
    )


def move_maps(graph: Graph, values: ValueSets, names: frozenset[str]) -> Graph:
    """`graph` with each map named in `names` that `movable` allows written as the copy of the map
    of the copied s-ops: the map keeps its name, span and index order and becomes the aggregate;
    the map of the sources is a new node just before it (in a chain, the next map's source map
    reads it). `graph` itself where none moves. The node indices after a moved map shift: the
    caller analyses the new graph's values afresh. (A copy no s-op reads any more stays, read by
    no block: the planner builds what the output reads.)"""
    moves = _moves(graph, values, names)
    if not moves:
        return graph
    taken = {node.name for node in graph.nodes}
    at: dict[int, int] = {}  # old index -> new index
    before: dict[int, int] = {}  # a moved map's old index -> its source map's new index
    nodes: list[IRNode] = []

    def add(node: IRNode, inputs: tuple[int, ...]) -> int:
        index = len(nodes)
        nodes.append(replace(node, index=index, inputs=inputs))
        return index

    def source_at(index: int, move: Move) -> int:
        """Where the source map reads the map's input `index`: its copy's source, a moved map's
        own source map, or the input itself (a constant)."""
        if index not in move.sources:
            return at[index]
        moved, source = move.sources[index]
        return before[source] if moved else at[source]

    def copied(move: Move) -> list[str]:
        """The s-ops a moved map's copies copy, as its text names them (a chain's, its first's)."""
        found: list[str] = []
        for moved, source in move.sources.values():
            found += copied(moves[source]) if moved else [_named(graph[source])]
        return found

    for node in graph.nodes:
        inputs = tuple(at[i] for i in node.inputs)
        if node.index not in moves:
            at[node.index] = add(node, inputs)
            continue
        move = moves[node.index]
        sources = ", ".join(dict.fromkeys(copied(move)))
        mapped = replace(
            node,
            name=_fresh(node.name.lstrip("_") + SUFFIX, taken),
            named=False,
            local=None,
            text=f"{node.text}, moved before the copy of {sources}",
        )
        # the map of the sources: each copy's place among the map's inputs taken by its source
        read = tuple(source_at(i, move) for i in node.inputs)
        source_map = add(mapped, read)
        before[node.index] = source_map
        aggregate = replace(node, op=Op.AGGREGATE, fn=None, value=move.default)
        at[node.index] = add(aggregate, (at[move.selector], source_map))
    return Graph(tuple(nodes), at[graph.root])


@dataclass(frozen=True)
class Move:
    """A map moved before its copies: their one selector; by each copied input's index, its
    source: (False, the copied s-op's index), or (True, the index of a map moved before its copy,
    whose source map it reads: a chain); the moved copy's default (the map of the copies'
    defaults); and the values its source map takes on every combination checked (None where they
    are not hashable: no map of it moves)."""

    selector: int
    sources: dict[int, tuple[bool, int]]
    default: Any
    values: tuple[Any, ...] | None


def _moves(graph: Graph, values: ValueSets, names: frozenset[str] | None) -> dict[int, Move]:
    """By index: how each map named in `names` (None: any) moves, in graph order, so that a map
    of maps that move (and of copies by their selector) moves after them."""
    moves: dict[int, Move] = {}
    for node in graph.nodes:
        if names is None or node.name in names:
            found = _moved(graph, values, node, moves)
            if found is not None:
                moves[node.index] = found
    return moves


def _moved(graph: Graph, values: ValueSets, node: IRNode, moves: dict[int, Move]) -> Move | None:
    """How `node` moves before the copies it maps (each a copy of `graph`, or a map in `moves`:
    the copy of its source map), where it can, else None."""
    if node.op is not Op.MAP or node.fn is None or isinstance(node.fn, Pick):
        return None
    inputs = [i for i in dict.fromkeys(node.inputs) if graph[i].op is not Op.CONST]
    if not inputs:
        return None
    # by input: its selector, its source, its default and its source's values
    copies: dict[int, tuple[int, tuple[bool, int], Any, tuple[Any, ...] | None]] = {}
    for i in inputs:
        inner = graph[i]
        if i in moves:
            move = moves[i]
            copies[i] = (move.selector, (True, i), move.default, move.values)
        elif inner.op is Op.AGGREGATE:
            source = inner.inputs[1]
            copies[i] = (inner.inputs[0], (False, source), inner.value, values.values[source])
        else:
            return None
    selectors = {c[0] for c in copies.values()}
    if len(selectors) != 1 or not values.at_most_one[next(iter(selectors))]:
        return None  # (copies by two selectors may copy two keys)
    sources = {i: c[1] for i, c in copies.items()}
    if any(not moved and graph[s].op is Op.CONST for moved, s in sources.values()):
        return None  # (a copy of a constant is folded: nothing to move)
    source_values = {c[1]: c[3] for c in copies.values()}
    distinct = list(source_values)
    sets = [source_values[key] for key in distinct]
    if any(v is None for v in sets) or math.prod(len(v) for v in sets) > MAX_CHECKED:  # type: ignore[arg-type]
        return None

    def at(value_of: dict[int, Any]) -> tuple[bool, Any]:
        args = [value_of[i] if i in value_of else graph[i].value for i in node.inputs]
        try:
            return apply_map(node.fn, args)
        except Exception:  # noqa: BLE001 (a user's map on values it never met: not moved)
            return False, None

    results: list[Any] = []
    for combo in itertools.product(*sets):  # type: ignore[arg-type]
        by_source = dict(zip(distinct, combo, strict=True))
        ok, value = at({c: by_source[s] for c, s in sources.items()})
        if not ok:
            return None
        results.append(value)
    ok, default = at({i: c[2] for i, c in copies.items()})
    if not ok:
        return None
    return Move(next(iter(selectors)), sources, default, _distinct(results))


def _distinct(found: list[Any]) -> tuple[Any, ...] | None:
    """`found` once each, in order (by type too: True is not 1 to a map); None where a value is
    not hashable."""
    try:
        return tuple({(type(v), v): v for v in found}.values())
    except TypeError:
        return None


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

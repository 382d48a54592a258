"""Maps of a single-key copy moved before the copy (`BuildOptions.moved_maps`).

`round(shift(x, 1, d))` maps the copy of one key's x (or the default d where no key is selected);
where the selector selects at most one key at every query (`ValueSets.at_most_one`), that is the
copy of `round(x)` with the default `round(d)`: at each position the same value, as the
interpreter copies one key's value as it is (no mean). Built so, the map reads x where x is
written (its sources' readings, often a number stepped once) and the copy moves the map's few
values, where the map over the copy reads the copy's one-hot of x's many values: mixed fuzz
2155505's reduction at N = 12, 14,782 parameters instead of 65,715.

Not moved: a map of anything besides that copy and constants (`round(shift(x) + indices)` is no
map of the copied value alone), a copy whose selector may select several keys (a mean of the
mapped values is not the map of the mean), and a map that fails on some value of x or on d (the
interpreter never computes it on a value no query copies, so the moved map would fail where the
program does not). `compiler.smaller_builds` keeps such a build only where it is proved and no
larger; the certifier checks it as any other.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.graph import Graph, IRNode, Op
from compiler.map_values import apply_map
from compiler.picks import Pick
from compiler.values import ValueSets

# the moved map's name: the map's own with this suffix, a helper's label (`x~select`): the tools
# pair program s-ops with labels by name, and no program s-op computes it. Without a leading
# "_": a generated label no graph of the program has reads to them as a file's older names.
SUFFIX = "~before_copy"


def movable(graph: Graph, values: ValueSets) -> frozenset[str]:
    """The names of the maps of `graph` (with `values`, its analysis) that `move_maps` moves."""
    return frozenset(node.name for node in graph.nodes if _moved(graph, values, node) is not None)


def move_maps(graph: Graph, values: ValueSets, names: frozenset[str]) -> Graph:
    """`graph` with each map named in `names` that `movable` allows written as the copy of the map
    of the copied s-op: the map keeps its name, span and index order and becomes the aggregate;
    the map of the source is a new node just before it. `graph` itself where none moves. The
    node indices after a moved map shift: the caller analyses the new graph's values afresh."""
    moves: dict[int, tuple[IRNode, object]] = {}
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
        copy, default = moves[node.index]
        selector, source = copy.inputs
        name = _fresh(node.name.lstrip("_") + SUFFIX, taken)
        mapped = replace(
            node,
            name=name,
            named=False,
            local=None,
            text=f"{node.text}, moved before the copy of {graph[source].text}",
        )
        # the map of the source: the copy's place among the map's inputs taken by the source
        read = tuple(at[source] if i == copy.index else at[i] for i in node.inputs)
        source_map = add(mapped, read)
        aggregate = replace(node, op=Op.AGGREGATE, fn=None, value=default)
        at[node.index] = add(aggregate, (at[selector], source_map))
    return Graph(tuple(nodes), at[graph.root])


def _moved(graph: Graph, values: ValueSets, node: IRNode) -> tuple[IRNode, object] | None:
    """(the copy map `node` reads, the moved copy's default) where `node` can move, else None."""
    if node.op is not Op.MAP or node.fn is None or isinstance(node.fn, Pick):
        return None
    read = {i for i in node.inputs if graph[i].op is not Op.CONST}
    if len(read) != 1:
        return None
    copy = graph[read.pop()]
    if copy.op is not Op.AGGREGATE or not values.at_most_one[copy.inputs[0]]:
        return None
    source = copy.inputs[1]
    if graph[source].op is Op.CONST:
        return None  # (a copy of a constant is folded: nothing to move)

    def at(value: object) -> tuple[bool, object]:
        args = [value if i == copy.index else graph[i].value for i in node.inputs]
        return apply_map(node.fn, args)

    if not all(at(v)[0] for v in values.values[source]):
        return None
    ok, default = at(copy.value)
    if not ok:
        return None
    return copy, default


def _fresh(name: str, taken: set[str]) -> str:
    """`name`, or it with the first free number after it; noted as taken."""
    found, n = name, 2
    while found in taken:
        found, n = f"{name}{n}", n + 1
    taken.add(found)
    return found

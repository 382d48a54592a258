"""The compile's last build: s-ops the value analysis finds to be of the position alone, read as
maps of `indices` (`BuildOptions.positions`), where every other build and form is unproved.

`compiler.position_functions` rewrites an s-op of the position alone before the stages, but it
knows one by its inputs (indices, length, constants and what is built of them alone). An s-op that
reads the tokens can still be one number at each position: in mixed fuzz seed 2155505 `--causal`,

    v0 = selector_width((select(0.5, tokens_int, <) or select("'", tokens, !=))
                        and select(indices, indices, <=)) + aggregate(..., indices + 1, True)

is 1.5 i + 2 on every input (`"'" != t` holds for every token, so the selector is the prefix),
which the value analysis sees (`selector_cases`: the selector must select every key it can, and
the relation is one value at each (i, n)). Built as written, v0 is a head's width and an MLP's
one-hot, its shifted copy a head over that one-hot, and the output's mean of
`round(shift(v0, 1, False))` reads the copy's columns times values up to 18: their error summed
to 0.00935 against a snap margin of 0.00379 at N = 12 (refused at N = 12 to 28). Read as a map
of indices, the copy and the map of it are written by the positional embedding, exact, and the
output's mean is one head over them (N = 12: 2 layers, 3,302 parameters, proved).

`fold_positions` replaces each s-op (not a selector, not already a map of indices and constants)
whose relation is one value at every (i, n), the same value of the same type at every length n > i,
by a map of `indices` through the table of those values: the interpreter's own values, as the
analysis found them, as `compiler.constants` makes an s-op of one value a constant. Its name,
span and text stay its own. Tried after every other build and form (`compiler.driver`), so that no
program another build proves changes (a copy of one position's value read beside a token's s-op
is cheaper as a head than as a map over the index one-hot: `compiler.position_functions`);
certified as every build is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from compiler import build_facts
from compiler.alternatives import form_instead
from compiler.build_trials import Builds, Kept
from compiler.constants import fold_constants
from compiler.graph import Graph, IRNode, Op
from compiler.position_functions import AtPosition, identical_value
from compiler.values import ValueSets

POSITIONS = "with s-ops of the position alone read as maps of indices"

# already as cheap as it gets, or no s-op
_KEPT = (Op.TOKENS, Op.INDICES, Op.LENGTH, Op.CONST, Op.SELECT, Op.AND, Op.OR, Op.NOT)


def position_tables(graph: Graph, values: ValueSets) -> dict[int, tuple[Any, ...]]:
    """By node index: the value at each position 0..N-1 of every s-op of `graph` that reads more
    than indices and constants and whose relation gives it one value at every (i, n), the same at
    every length (an s-op of one value is a constant already: `compiler.constants`)."""
    indices = _indices(graph)
    if indices is None:
        return {}
    tables: dict[int, tuple[Any, ...]] = {}
    # (an s-op of the position reads indices, which comes before it in the graph's order)
    for node in graph.nodes[indices + 1 :]:
        if node.op in _KEPT or _embedded(graph, node):
            continue
        table = _table(values, node.index)
        if table is not None:
            tables[node.index] = table
    return tables


def foldable(graph: Graph, values: ValueSets) -> frozenset[str]:
    """The names of the s-ops `fold_positions` folds in the graph a build plans (`graph` with its
    constants folded, `compiler.constants`)."""
    tables = position_tables(fold_constants(graph, values), values)
    return frozenset(graph[i].name for i in tables)


def fold_positions(graph: Graph, values: ValueSets) -> Graph:
    """`graph` with each s-op of `position_tables` a map of indices through its table; `graph`
    itself where there is none. Node indices (and so the value sets) are kept."""
    tables = position_tables(graph, values)
    if not tables:
        return graph
    indices = _indices(graph)
    assert indices is not None  # (position_tables found none without it)
    nodes = list(graph.nodes)
    for index, table in tables.items():
        nodes[index] = replace(
            graph[index],
            op=Op.MAP,
            inputs=(indices,),
            fn=AtPosition(table),
            kind=None,
            comparison=None,
            value=None,
        )
    return Graph(tuple(nodes), graph.root)


def _indices(graph: Graph) -> int | None:
    return next((node.index for node in graph.nodes if node.op is Op.INDICES), None)


def _embedded(graph: Graph, node: IRNode) -> bool:
    """A map of indices and constants alone: the positional embedding writes it as it is."""
    return node.op is Op.MAP and all(graph[i].op in (Op.INDICES, Op.CONST) for i in node.inputs)


def _table(values: ValueSets, index: int) -> tuple[Any, ...] | None:
    rel = values.relation[index]
    if rel is None or len(values.values[index]) < 2:
        return None
    at: dict[int, Any] = {}
    for (i, _), vals in rel.items():
        if len(vals) != 1:
            return None
        if i in at:
            if not identical_value(at[i], vals[0]):
                return None  # depends on the length
        else:
            at[i] = vals[0]
    if sorted(at) != list(range(values.max_len)):
        return None
    return tuple(at[i] for i in range(values.max_len))


def positions_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    max_len: int,
    max_params: int | None,
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved, or where the prepared default form (`graph()`) has no s-op to
    fold (`Builds.folds`), or where some decision the certifier refused in `kept` (a build of
    that form) is computed from none of them (folded, it fails too); else the build `keep_proved`
    keeps among that form's builds with them folded (each of its alternatives too) where it is
    proved, or `kept` with why not among its tried."""
    if kept.certificate.ok:
        return kept
    build = builds()
    names = build.folds()
    if not names:
        return kept
    kept_names = {node.name for node in kept.graph.nodes}
    if names <= kept_names and build_facts.untouched_failure(kept, names):
        return kept
    return form_instead(
        kept,
        build,
        graph(),
        lambda options: replace(options, positions=True),
        POSITIONS,
        max_len,
        max_params,
        note,
    )

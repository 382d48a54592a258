"""A select side that compares an exact s-op of a few values with one mean, stepped over the
mean's number with the exact s-op's one-hot as context (`threshold_sides`, the side build's
smaller alternative to its tables: compiler.side_build).

`res = aggregate(select(length, m, >), 0, 1)` with m a mean of counts reads the map `length > m`.
The default steps it over the difference `length - m`: two dimensions, whose step pairs round
their sum in any order, so the side's one-hot carries that rounding, which the head's score scale
multiplies past the output's snap (2.27 against 0.5 at N = 16). The side tables (compiler.
side_tables) are exact but list a row per reachable (m, length) pair: 32M parameters at N = 16, and
103,704 rows at N = 24, refused. But for each value c of the exact s-op the boolean changes only
where m crosses c: one step over m's number per change, its threshold set by c's one-hot
(`map_steps.context_steps`, the steps of every context value sharing pairs). With x one dimension
and the context's one-hot exact (the embedding's, or a step's in the integer band), each pair's
dot product is one addition in the integer band (compiler.step_mlp): the side's one-hot is written
exactly, whatever m's error, as long as that error stays below half the gap between m's reachable
values on either side of each threshold, which the step checks while planning and the certifier
checks against m's worst-case error at every reachable point. Where the context is not exact, m
is not read as one number, or the steps cannot be resolved, the build is refused, located.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler import map_steps
from compiler.blocks import Encoded, Encoding
from compiler.graph import Graph, IRNode, Op
from compiler.map_rows import Rows
from compiler.mlp import exact_reading
from compiler.noisy_sides import through_maps
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from rasp.errors import CompileError, Diagnostic

THRESHOLDS = "with select sides over a mean stepped per value of an exact s-op"
# the most values of the exact s-op (a context column each, and the step pairs' thresholds)
MAX_CONTEXT_VALUES = 512
# the inputs an exact context is computed from (through maps): their one-hots are the embedding's
_EXACT_INPUTS = (Op.TOKENS, Op.INDICES, Op.LENGTH, Op.CONST)

RowsOf = Callable[[IRNode, tuple[int, ...]], Rows]


def threshold_sides(graph: Graph) -> frozenset[str]:
    """The maps, by name, that a select reads as a side, or that such a side (a map) reads
    directly, which are functions of one aggregate and one s-op computed from the tokens, the
    indices and the length alone (`_split`): those the threshold build steps over the aggregate's
    number (whether it is one number is the plan's to say)."""
    sides = [i for node in graph.nodes if node.op is Op.SELECT for i in node.inputs]
    read = [j for i in sides if graph[i].op is Op.MAP for j in graph[i].inputs]
    return frozenset(graph[i].name for i in (*sides, *read) if _split(graph, graph[i]) is not None)


def _split(graph: Graph, node: IRNode) -> tuple[int, int] | None:
    """(the aggregate, the other input) of a map of exactly two non-constant inputs, one an
    aggregate and the other computed from the inputs alone; else None."""
    if node.op is not Op.MAP:
        return None
    direct = tuple(dict.fromkeys(i for i in node.inputs if graph[i].op is not Op.CONST))
    if len(direct) != 2:
        return None
    means = [i for i in direct if graph[i].op is Op.AGGREGATE]
    if len(means) != 1:
        return None
    other = direct[1 - direct.index(means[0])]
    if not all(n.op in _EXACT_INPUTS or n.op is Op.MAP for n in through_maps(graph, [other])):
        return None
    return means[0], other


def threshold_side(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    encoding: Encoding,
    rows_of: RowsOf,
) -> Encoded:
    """Map `node` (one of `threshold_sides`) as steps over its aggregate's number with the other
    input's exact one-hot as context, built into `built`; `rows_of` gives the map's rows over
    a support (`MapRows.rows`). CompileError, located at the map, where it cannot be."""
    g = ctx.graph
    split = _split(g, node)
    if split is None:
        raise CompileError([_refused(node, "it is not a map of one aggregate and one exact s-op")])
    mean, other = split
    if not ctx.is_mean(g[mean]):
        raise CompileError([_refused(node, f"'{g[mean].text}' is not read as one number")])
    if len(ctx.values(other)) > MAX_CONTEXT_VALUES:
        many = f"'{g[other].text}' has more than {MAX_CONTEXT_VALUES} values"
        raise CompileError([_refused(node, many)])
    context = reader.reading(other, Encoding.CATEGORICAL)
    if not exact_reading(context, built.exact):
        # (a noisy context's weight, about 2**23 in the integer band, would swamp the steps)
        raise CompileError([_refused(node, f"the one-hot of '{g[other].text}' is not exact")])
    support = tuple(i for i in dict.fromkeys(node.inputs) if i in split)
    rows = rows_of(node, support)
    return map_steps.map_steps(ctx, reader, built, node, support, mean, rows, encoding, gates=False)


def _refused(node: IRNode, why: str) -> Diagnostic:
    return Diagnostic(
        f"'{node.text}' cannot be stepped over its mean per value of an exact s-op: {why}",
        node.span,
    )

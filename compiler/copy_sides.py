"""Select sides that are copies (a single-key aggregate), or maps of copies, of numbers: the
side build's second try (`compiler.side_build`), with those copies built as one number each.

`y = load_from_location(c + v2 * v2, 2)` with c a count: the default copies x's one-hot, which
x's own step MLP wrote with its rounding (1.6e-5: x is a map of two dimensions) and which the
copy's softmax passes on with its weights' error (1.7e-4); the select `select(y, y, ==)` reads
that one-hot at a score scale that turns it into a score error of 0.05, past a width's steps
(a relu margin of 3 against 3.32 at N = 5; defs 2044002). Copied as one number (the
`numeric_copies` build, `compiler.plan_context.PlanContext.is_mean`), y errs by its head's
weights times the values' spread (0.01 there), far inside half the gap between two of its values
(0.5); the select's one-hot of y is then a step over that one number, in the integer band: the
same 0 or 1 in every evaluation order, a snap of the noisy copy onto its reachable values, whose
ReLU margins the certifier checks against the copy's worst-case error as any step's.
"""

from __future__ import annotations

from compiler.graph import Graph, Op
from compiler.noisy_sides import means_under, through_maps

COPIES = "with select sides copied as numbers and snapped"


def side_copies(graph: Graph) -> frozenset[str]:
    """The aggregates, by name, whose output a select reads as a side, itself or through maps (a
    mean's own inputs not followed): those that select at most one key are its copies."""
    found: set[str] = set()
    for node in graph.nodes:
        if node.op is not Op.SELECT:
            continue
        for side in node.inputs:
            found.update(graph[i].name for i in means_under(graph, side))
    return frozenset(found)


def side_sources(graph: Graph) -> frozenset[str]:
    """The s-ops, by name, that a select reads as a side, itself or through maps (whose sources
    a joint reading reads): those a block computes, not the inputs or constants, whose one-hots
    the side build may snap (compiler.snap_one_hot)."""
    inputs = (Op.TOKENS, Op.INDICES, Op.CONST)
    sides = [i for node in graph.nodes if node.op is Op.SELECT for i in node.inputs]
    return frozenset(node.name for node in through_maps(graph, sides) if node.op not in inputs)

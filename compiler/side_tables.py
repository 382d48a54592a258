"""A select side computed from means, as one table over its inputs' one-hots (`table_sides`).

`select(max(v0, v1), length - v1, !=)` with v0, v1 means: the default steps `length - v1` over
v1's number with the length as context, and the step's output one-hot carries the rounding of its
activations (9e-5 at N = 8), which the head's score scale turns into a weight error that moves the
mean it takes past its snap (0.15 of score error, 3.4 against a snap margin of 0.5). A mean's own
one-hot, decoded from its number by a step over it alone, is exact; a table over exact one-hots
writes exact values. So where the default is not proved and a select reads a map of means
(`compiler.noisy_sides.side_maps`), the driver builds the program again with each such map a
table over its direct inputs, each read as its one-hot (a mean or width decoded first, a map as it
is planned); a row is a saturating pair (`mlp.table_mlp(clamp=True)`) wherever an input is not
known exact, so an input map's noise below 1/(3k) is dropped too. The certifier checks the table's
ReLUs against its inputs' worst error as it checks every MLP; nothing is taken on trust. A table
over too many rows is refused while planning, and that build is not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from compiler import mlp
from compiler.blocks import Atom, Encoded, Encoding, value_key
from compiler.graph import IRNode, Op
from compiler.map_rows import Rows
from compiler.plan_context import PlanContext
from compiler.plan_state import Built
from compiler.readings import materialise
from compiler.snap_one_hot import snapped

ReadRows = Callable[[IRNode, tuple[int, ...], tuple[int, ...]], tuple[list[Encoded], Rows]]


def side_table(
    ctx: PlanContext,
    built: Built,
    node: IRNode,
    read_rows: ReadRows,
    encoding: Encoding,
    classes: tuple[Encoded, Mapping[object, Atom]] | None = None,
) -> Encoded:
    """Map `node` as a clamped table over its direct inputs' one-hots, built into `built`;
    `read_rows` gives their categorical readings and the map's rows over them
    (`MapPlanner._read_rows`). `classes`: the one-hot of a select's classes of the map's values
    and each value's class by `value_key` (`SelectorPlanner._class_reading`), written instead."""
    g = ctx.graph
    direct = tuple(dict.fromkeys(i for i in node.inputs if g[i].op is not Op.CONST))
    readings, rows = read_rows(node, direct, direct)
    if ctx.options.snapped_sides:
        readings = [snapped(built, r) for r in readings]
    # pairs, not a dict: (1,) and (1.0,) are different rows
    if classes is None:
        out, table = materialise(built, node, encoding, ctx.values(node.index)), list(rows)
    else:
        out, rep = classes
        built.bound_one_hot(out)
        table = [(t, rep[value_key(v)]) for t, v in rows]
    spec = mlp.table_mlp(
        readings,
        table,
        out,
        op=node.text,
        name=node.name,
        exact=built.exact,
        clamp=True,
    )
    built.add_mlp(spec)
    return out

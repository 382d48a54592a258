"""A one-hot of a few values written with error, written again exactly (`snapped`).

A categorical copy or mean (`aggregate(select(...), x)` of a few values read as their one-hot)
has columns near 0 and 1, off by the head's weight error (1e-4 at N = 12); a map's one-hot that a
step MLP writes over several dimensions (a width's 1/(w+1) and a mean) is off by that step's
rounding. A select that reads such a one-hot multiplies its error by its score scale, and a table
over it (compiler.side_tables, a disjunction's joint) by its weights: enough to move a width's
1/(w+1) or a mean past its steps. Each column is snapped by a step pair over that column alone,
with `one` as its only other product: one addition, in the integer band (compiler.step_mlp), so
the pair writes exactly 0 or 1 in every evaluation order. The certifier checks each pair's ReLUs
against the column's worst-case error at every reachable state, as any step's; a column too
noisy for that is refused there, never trusted.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler import step_mlp
from compiler.blocks import Dim, Encoded, Encoding, MLPSpec
from compiler.mlp import exact_reading
from compiler.plan_state import Built

# the error a snapped column's steps are planned for: far above a head's weight error (~1e-4),
# far below the half gap of 0.5 (the certifier checks the real one)
SNAP_NOISE = 0.01
# the most values a one-hot is snapped for: a pair of units and a dimension per column
MAX_SNAPPED_VALUES = 16


SNAP_SUFFIX = "~snap"  # a snapped one-hot's residual name: its reading's, then this


def snaps_some(residual: Iterable[str]) -> bool:
    """Whether a sketch's residual (its labels, `NAME:value`) holds a snapped one-hot: a build
    asked to snap that snaps none is a model tried before."""
    return any(SNAP_SUFFIX in label.split(":")[0] for label in residual)


def snapped(built: Built, reading: Encoded) -> Encoded:
    """`reading`, or where it is a one-hot of 2 to MAX_SNAPPED_VALUES values not known exact,
    that one-hot written again exactly: for two values, one step over its second column writing
    both; for more, a step per column writing a dimension of its own."""
    values = reading.values
    if not reading.is_categorical or not 2 <= len(values) <= MAX_SNAPPED_VALUES:
        return reading
    if exact_reading(reading, built.exact):
        return reading
    name = f"{reading.name}{SNAP_SUFFIX}"
    if len(values) == 2:
        out = Encoded.materialised_categorical(name, values)
        if not _built(built, name):
            built.bound_one_hot(out)
            built.add_mlp(_step(built, reading, 1, out, (values[0], values[1])))
        return out
    columns = []
    for j in range(len(values)):
        column = Encoded.materialised_numerical(f"{name}{j}", (0, 1))
        if not _built(built, column.name):
            built.bounds[Dim(column.name)] = 1.0
            built.add_mlp(_step(built, reading, j, column, (0, 1)))
        columns.append(column.number)
    return Encoded(name, Encoding.CATEGORICAL, values, one_hot=tuple(columns))


def _built(built: Built, name: str) -> bool:
    """Whether the snap MLP `name` is built already (another select or table read it)."""
    return any(spec.name == name for spec in built.mlps)


def _step(built: Built, reading: Encoded, j: int, out: Encoded, written: tuple) -> MLPSpec:
    """The step over column j of `reading` writing `written[0]` below 0.5, `written[1]` above."""
    x = Encoded(f"{reading.name}.column{j}", Encoding.NUMERICAL, (0, 1), number=reading.one_hot[j])
    return step_mlp.numeric_mlp(
        x,
        [(0.0, written[0]), (1.0, written[1])],
        out,
        op=f"{reading.name} snapped",
        name=out.name,
        x_error=SNAP_NOISE,
        exact=built.exact,
    )

"""Whether a whole number the output decodes to is an int or a float, per length and position.

The interpreter's type for a whole number depends on how it was computed: an aggregate that selects
one key gives that key's value itself (the int 1), one that selects several their mean as a float
(1.0), and `c + f` is an int only where both are. The decoder gives a whole number one type by a
fixed rule: on a list of values (a numerical output's snap targets), the int where the int is
listed (0 for a listed 0 and 0.0), else the listed float; on a one-hot (categorical) output, its
column's value, one of the two (the value analysis merges 0 and 0.0); on a grid, the int where the
denominator is 1 or the position is among `int_positions`. Where positions decide the types (the
output's value sets per (position, length), compiler.grid's relation), that rule can be wrong: the
shifted copy of a prefix mean plus the mean, `c + f`, is the int 0 at position 0 of a one-token
input and the float 0.0 elsewhere.

`whole_types` gives the decoder those facts (`output.whole_types`: format version 7, or 8 for a
one-hot output): per input length n, n flags, one per position: "i" where every whole number the
output may take there is an int, "f" where every one is a float, "." where it may be either or none
is whole (the rule stands). They are written only where the rule would give some cell's whole
numbers the wrong type. On a grid a cell that may give either, an int among them, is an "i" cell,
as a list's rule decodes it (a tracr mean of one selected False is the int 0, never 0.0).
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.blocks import Atom
from compiler.grid import grid_cell
from compiler.output_grid import OutputGrid
from compiler.relations import Relation

INTS, FLOATS, EITHER = "i", "f", "."


def whole_types(
    relation: Relation | None,
    max_len: int,
    listed: Sequence[Atom] | None,
    grid: OutputGrid | None,
) -> tuple[str, ...] | None:
    """Per length 1..max_len, the flags of its positions (module doc), for an output decoded on
    the `listed` values or on `grid` (one of them); None where the rule already gives every whole
    number its type, or nothing is known per position (no relation)."""
    if relation is None or (listed is None) == (grid is None):
        return None
    listed_ints = {v for v in listed or () if type(v) is int}
    per_set: dict[int, tuple[str, bool]] = {}  # interned set -> (flag, the listed type wrong)
    cells = [[EITHER] * n for n in range(1, max_len + 1)]
    wrong = False
    for (i, n), vals in relation.items():
        found = per_set.get(id(vals))
        if found is None:
            found = per_set[id(vals)] = _flag(vals, listed_ints)
        flag, twin = found
        cells[n - 1][i] = flag
        if flag == EITHER or wrong:
            continue
        if grid is None:
            wrong = twin  # a whole number whose listed twin has the other type
        else:
            as_int = _grid_denominator(grid, i, n) == 1 or i in grid.int_positions
            wrong = as_int != (flag == INTS)
    if grid is not None:
        # a grid cell that may give either: the int, as a list's rule gives it (a tracr mean of
        # one selected True is the int 1, which `rasp verify` takes for True; 1.0 it does not,
        # and it takes the int 1 for a mean's 1.0 too)
        for (i, n), vals in relation.items():
            as_int = _grid_denominator(grid, i, n) == 1 or i in grid.int_positions
            if cells[n - 1][i] == EITHER and not as_int and any(type(v) is int for v in vals):
                cells[n - 1][i], wrong = INTS, True
    return tuple("".join(row) for row in cells) if wrong else None


def is_whole(value: Atom) -> bool:
    """An int, or a float with a whole value (not a bool): a number either type may give."""
    return type(value) is int or (type(value) is float and value.is_integer())


def _flag(vals: Sequence[Atom], listed_ints: set[int]) -> tuple[str, bool]:
    """A cell's flag, and whether the listed values would give one of its whole numbers the
    other type: a whole float whose int is listed (decoded as that int), or an int listed only
    as a float (a one-hot output over the merged values lists 0.0 for the int 0 and 0.0)."""
    ints = floats = int_twin = float_twin = False
    for v in vals:
        if type(v) is int:
            ints = True
            float_twin = float_twin or v not in listed_ints
        elif type(v) is float and v.is_integer():
            floats = True
            int_twin = int_twin or int(v) in listed_ints
    if ints == floats:
        return EITHER, False
    return (INTS, float_twin) if ints else (FLOATS, int_twin)


def _grid_denominator(grid: OutputGrid, i: int, n: int) -> int:
    return grid.denominators[grid_cell(grid.axis, i, n)]


__all__ = ["EITHER", "FLOATS", "INTS", "is_whole", "whole_types"]

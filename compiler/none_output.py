"""An output that is a number standing in for tracr's None, decoded as None (`output.none_at`,
format version 9).

`compiler.resolve` copies numbers with tracr's default None as one number, a stand-in below them
for None, and maps the stand-in back to None after the copy. Where that map is the program's
output, its one-hot of every value the copy takes was the output (1,639 of them for
make_sort_unique of sorted prefix means at N = 20: 28.4M parameters); the copied number itself is
one logit, snapped to the listed values, the stand-in among them decoded as None (311,270).
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.blocks import Atom, OutputGrid, is_number
from compiler.graph import IRNode, Op
from compiler.output_types import whole_types
from compiler.relations import Relation
from compiler.resolve import none_stand_in


def stand_in_of(root: IRNode) -> Atom | None:
    """The number `root`, a map back to None of one s-op, decodes as None; else None."""
    return none_stand_in(root.fn) if root.op is Op.MAP and len(root.inputs) == 1 else None


def listed(
    marker: Atom,
    values: tuple[Atom, ...],
    grid: OutputGrid | None,
    types: tuple[str, ...] | None,
    relation: Callable[[], Relation | None],
    max_len: int,
) -> tuple[Atom | None, OutputGrid | None, tuple[str, ...] | None]:
    """(`output.none_at`, grid, whole types) of the copied number's output: snapped to its list
    (the stand-in is a listed number; a grid's values are listed instead, and the certifier has
    the last word on the snap), and no number decodes as None where the copy never gives the
    stand-in (a copy that always selects a key)."""
    if grid is not None:
        grid, types = None, whole_types(relation(), max_len, values, None)
    given = any(is_number(v) and v == marker for v in values)
    return marker if given else None, grid, types

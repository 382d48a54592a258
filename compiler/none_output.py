"""An output that is a number standing in for tracr's None, decoded as None (`output.none_at`,
format version 9).

`compiler.resolve` copies numbers with tracr's default None as one number, a stand-in below them
for None, and maps the stand-in back to None after the copy. Where that map is the program's
output, its one-hot of every value the copy takes was the output (1,639 of them for
make_sort_unique of sorted prefix means at N = 20: 28.4M parameters); the copied number itself is
one logit, snapped to the listed values, the stand-in among them decoded as None (311,270).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from compiler.blocks import Atom, is_number
from compiler.fits import float64_twins
from compiler.graph import IRNode, Op
from compiler.mean_markers import none_stand_in
from compiler.output_grid import OutputGrid
from compiler.output_types import whole_types
from compiler.relations import Relation


def stand_in_of(root: IRNode) -> Atom | None:
    """The number `root`, a map back to None of one s-op, decodes as None; else None."""
    return none_stand_in(root.fn) if root.op is Op.MAP and len(root.inputs) == 1 else None


def apart(marker: Atom, values: Iterable[Atom]) -> bool:
    """Whether no number of `values` but the stand-in itself is a float64 twin of it: the snap
    targets merge twins (`fits.snap_targets`), and the stand-in, 1 below the least value, is one
    of 10000000000.5 (1e-10 relative), so the copied value decoded as None (or the stand-in as
    that number): tracr's shift_by(1, x) over such tokens was certified, wrong on 627 of 1,604
    inputs. A value of None is no number: the map back's one-hot tells it apart."""
    return not any(
        is_number(v) and v != marker and float64_twins(float(v), float(marker)) for v in values
    )


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

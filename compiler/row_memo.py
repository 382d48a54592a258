"""What the planners derive from a map's reachable rows alone, kept for every build of a program.

`compiler.alternatives` plans a program several times from one value analysis, and a map's
planners (`coarse_steps`, `linear_steps`, `gates.context_fits`, the affine fit) read all of its
rows each time: `m * indices` over a mean m at N = 32 lists 322K rows, and each of three builds
spent ~4 s deriving the same classes, sums and fits from them.

`map_rows.MapRows` hands a build the rows the value analysis listed, before any canonical table
of that build merged them, as `AnalysisRows`: a list (each build its own copy) carrying a dict
shared by every copy. `derived` keeps a result there; a list filtered or merged by a build is a
plain list again, and its results are computed afresh. Nothing may change an `AnalysisRows` in
place (nothing does: a build filters into a new list).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class AnalysisRows(list):
    """A map's rows as the value analysis listed them; `shared` is the same dict in every copy."""

    __slots__ = ("shared",)

    def __init__(self, rows: Any, shared: dict[Hashable, Any]) -> None:
        super().__init__(rows)
        self.shared = shared


def derived(rows: list, what: Hashable, compute: Callable[[], T]) -> T:
    """`compute()`, once per value analysis where `rows` are the analysis's own (`AnalysisRows`).
    `compute` must depend on nothing but `rows` and what `what` names (every other input to it is
    part of `what`), and its result is shared: a caller must not change it."""
    if not isinstance(rows, AnalysisRows):
        return compute()
    if what not in rows.shared:
        rows.shared[what] = compute()
    return rows.shared[what]

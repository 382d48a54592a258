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

from compiler.blocks import value_key

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


def rows_having(rows: list, k: int, has: Callable[[Any], bool]) -> list:
    """The rows whose support value at position `k` a reading has (`has`, which must depend on
    the value's `value_key` alone, as `Encoded.has` does): `rows` itself where every row's is
    (its derived results stay shared), else the rows kept, with derived results of their own
    shared by every build that drops the same values. A build's filtered copy was a plain list,
    its gated fits found again in each build: numeric seed 2070534 at N = 8, where no row was
    dropped, ~65 s a build."""
    distinct = derived(rows, ("values at", k), lambda: {value_key(c[k]): c[k] for c, _ in rows})
    dropped = frozenset(key for key, value in distinct.items() if not has(value))
    if not dropped:
        return rows
    kept = derived(
        rows,
        ("rows without", k, dropped),
        lambda: AnalysisRows([row for row in rows if has(row[0][k])], {}),
    )
    return AnalysisRows(kept, kept.shared)  # (a build's own list)

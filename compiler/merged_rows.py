"""A map's rows merged into its support's canonical values: once for every build whose tables agree.

`map_rows.MapRows` lists a map's rows once per value analysis (`analysis_rows`), and what the
planners derive from them (compiler.row_memo) is found once too. Where a categorical reading of a
support s-op merged equal numbers (`Built.canon`: 1.0 read as 1), each build merged the rows again
(`MapRows._merged`), and everything derived from the merged list was found afresh: numeric seed
2070534 at N = 8 planned one map of a number and a context three times, ~100 s each, most of it
merging the same rows and fitting the same lines per context value.

The merge reads nothing but the analysis's rows and, for each support s-op s, `Built.canon[s]`
and `Built.twins[s]` (all `Built.canonical` reads); it writes the map's own twins. `shared` keeps
its rows, as `AnalysisRows` with a results dict of their own, and the twins it wrote, under a key
spelling those tables exactly: their repr, where every key and value in them is a plain atom (a
bool, int, float other than NaN, str or None, or tuples of them: each repr spells its type and
value). A build whose tables spell the same key gets the same rows and writes the same twins;
one whose tables differ in any entry, or are not plain, merges anew. A refusal (equal numbers
giving two values) is not kept: the next build refuses anew.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

from compiler.blocks import Atom
from compiler.plan_state import Built
from compiler.row_memo import AnalysisRows

Rows = list[tuple[tuple[Atom, ...], Atom]]
# the twins a merge writes for its map, in order: (key of the value merged away, key of the
# value written in its place, that value), as `Built.twins[map][key][kept key] = kept`
Twins = list[tuple[tuple[str, Any], tuple[str, Any], Atom]]

_ATOMS = frozenset({bool, int, float, str, type(None)})


def shared(
    memo: dict[Hashable, Any],
    built: Built,
    index: int,
    support: tuple[int, ...],
    merge: Callable[[], tuple[Rows, Twins]],
) -> Rows:
    """The rows `merge()` gives for map `index` over `support`, with the twins it wrote applied to
    `built`: kept in `memo` (the value analysis's) for every build whose support tables spell the
    same key."""
    key = tables_key(built, support)
    if key is None:
        rows, twins = merge()
    else:
        found = memo.get(("merged rows", index, support, key))
        if found is None:
            rows, twins = merge()
            found = memo[("merged rows", index, support, key)] = (rows, {}, twins)
        rows, results, twins = found
        rows = AnalysisRows(rows, results)  # (a build's own list, its results shared)
    write_twins(built, index, twins)
    return rows


def write_twins(built: Built, index: int, twins: Twins) -> None:
    """Record in `built` that each value merged away is written as the value kept in its place."""
    for out, kept_key, kept in twins:
        built.twins.setdefault(index, {}).setdefault(out, {})[kept_key] = kept


def tables_key(built: Built, support: tuple[int, ...]) -> str | None:
    """The repr of the support's canonical tables and twins, where it spells them exactly; else
    None."""
    tables = tuple((built.canon.get(s), built.twins.get(s)) for s in support)
    return repr(tables) if _plain(tables) else None


def _plain(value: object) -> bool:
    """Whether `value` is made of plain atoms only (NaN aside), in tuples and dicts."""
    kind = type(value)
    if kind is float:
        return not math.isnan(value)  # type: ignore[arg-type]
    if kind in _ATOMS:
        return True
    if kind is tuple:
        return all(map(_plain, value))  # type: ignore[arg-type]
    if kind is dict:
        return all(map(_plain, value.keys())) and all(map(_plain, value.values()))  # type: ignore[attr-defined]
    return False

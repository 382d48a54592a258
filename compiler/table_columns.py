"""Which of a table's sources it must read (`maps.MapPlanner`'s tables over categorical s-ops).

A fused chain of maps lists its value at every reachable combination of its sources' values. Where
the outputs are a function of some of those sources alone (every two rows that agree on them give
one output), the table reads only those: the others' one-hots would multiply its rows. InterpBench's
pairwise sum, `int(t + (x if indices > 0 else 0))` with `x = shift_by(1, tokens)`, is None exactly at
index 0, so `indices` adds nothing to (t, x): 892 rows over the three at N = 9, 132 over two.

Every input's combination at a position is one of the listed rows (they are the reachable ones),
so its projection is a row of the smaller table, with the output the full table gives it.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.blocks import Atom, value_key

Rows = Sequence[tuple[tuple[Atom, ...], Atom]]


def needed_columns(rows: Rows, width: int) -> tuple[int, ...]:
    """The columns (of `width`) whose values determine every row's output; the others are dropped
    one at a time, the one with the most distinct values first (its one-hot costs most)."""
    keyed = [(tuple(map(value_key, combo)), value_key(out)) for combo, out in rows]
    kept = list(range(width))
    if width < 2 or not keyed:
        return tuple(kept)
    distinct = [len({k[c] for k, _ in keyed}) for c in range(width)]
    for c in sorted(range(width), key=lambda c: -distinct[c]):
        trial = [k for k in kept if k != c]
        if trial and _functional(keyed, trial):
            kept = trial
    return tuple(kept)


def projected(rows: Rows, columns: Sequence[int]) -> list[tuple[tuple[Atom, ...], Atom]] | None:
    """`rows` over `columns` only, one row per combination of their values; None where two rows
    that agree on them give different outputs."""
    out: dict[tuple, tuple[tuple[Atom, ...], Atom]] = {}
    for combo, value in rows:
        part = tuple(combo[c] for c in columns)
        key = tuple(map(value_key, part))
        seen = out.setdefault(key, (part, value))
        if value_key(seen[1]) != value_key(value):
            return None
    return list(out.values())


def _functional(keyed: list[tuple[tuple, object]], columns: list[int]) -> bool:
    seen: dict[tuple, object] = {}
    for key, out in keyed:
        part = tuple(key[c] for c in columns)
        if seen.setdefault(part, out) != out:
            return False
    return True

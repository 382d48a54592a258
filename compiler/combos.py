"""Vectorised enumeration of value combinations, for the value inference and the map planners.

At N = 256 a map of two per-position inputs such as `n_opens - n_closes` meets ~N^3/3 combinations
(every pair of values at every position): one Python iteration each took most of a compile. Here
each value gets an integer id and the combinations are integer arrays.

Both helpers give exactly the Python loops' results, and decline (return None) where they might
not: a value that is not a plain bool, int, float or str, a NaN (keys compare by identity) or a -0.0
(equal to 0.0 but printed differently: which object a loop keeps would matter).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compiler.blocks import Atom, value_key

MAX_CODES = 16_000_000  # combinations built as arrays at once (else the loops run)
SMALL = 64  # products enumerated in Python (below this, numpy's overhead dominates)
_BASE = 2**32  # argument code = first id * _BASE + second id
UNKNOWN = -2  # MapTable.table: an argument combination not looked up yet
TABLE_MAX = 4_000_000  # MapTable.table entries at most (32 MB)
_PLAIN = (bool, int, float, str)


def plain(value: Atom) -> bool:
    """A value whose key determines it completely (so any object with that key will do)."""
    t = type(value)
    if t is float:
        return not math.isnan(value) and (value != 0.0 or math.copysign(1.0, value) > 0)
    return t in _PLAIN


class Ids:
    """Integer ids for values by key, per argument slot; each set's ids are found once."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.objects: list[Atom] = []
        self._sets: dict[int, list[int] | None] = {}

    def of(self, values: tuple[Atom, ...]) -> list[int] | None:
        """The ids of an interned set (None: a value that is not plain)."""
        got = self._sets.get(id(values), False)
        if got is not False:
            return got  # type: ignore[return-value]
        out: list[int] | None = []
        for v in values:
            if not plain(v):
                out = None
                break
            key = value_key(v)
            i = self.ids.get(key)
            if i is None:
                i = self.ids[key] = len(self.objects)
                self.objects.append(v)
            out.append(i)  # type: ignore[union-attr]
        self._sets[id(values)] = out
        return out


def product_codes(ids: Sequence[list[int]], strides: Sequence[int]) -> np.ndarray | list[int]:
    """Codes (sum of id x stride) of itertools.product over the id lists, in its order: a list
    for small products (array overheads dominate there), else an array."""
    if math.prod(len(a) for a in ids) <= SMALL:
        return [
            sum(i * s for i, s in zip(row, strides, strict=True)) for row in itertools.product(*ids)
        ]
    codes = np.zeros(1, dtype=np.int64)
    for a, stride in zip(ids, strides, strict=True):  # row-major: the last id varies fastest
        codes = (codes[:, None] + np.array(a, dtype=np.int64)[None, :] * stride).ravel()
    return codes


def joint_rows(groups: Sequence[Sequence[tuple[Atom, ...]]]) -> list[tuple[Atom, ...]] | None:
    """The distinct rows of the products of each group's sets, in first-seen order (what a loop
    with `seen.setdefault(key(row), row)` over the groups in order gives), or None."""
    if not groups:
        return []
    width = len(groups[0])
    slots = [Ids() for _ in range(width)]
    lists = []
    total = 0
    for sets in groups:
        ids = [slot.of(s) for slot, s in zip(slots, sets, strict=True)]
        if any(a is None for a in ids):
            return None
        lists.append(ids)
        total += math.prod(len(a) for a in ids)  # type: ignore[arg-type]
    sizes = [max(len(slot.objects), 1) for slot in slots]
    if total > MAX_CODES or math.prod(sizes) >= 2**62:
        return None
    strides = [math.prod(sizes[k + 1 :]) for k in range(width)]
    pieces: list[np.ndarray] = []
    pending: list[int] = []  # small products' codes, joined into one array when needed
    for ids in lists:
        codes = product_codes(ids, strides)  # type: ignore[arg-type]
        if isinstance(codes, list):
            pending.extend(codes)
            continue
        if pending:
            pieces.append(np.array(pending, dtype=np.int64))
            pending = []
        pieces.append(codes)
    pieces.append(np.array(pending, dtype=np.int64))
    all_codes = np.concatenate(pieces)
    _, first = np.unique(all_codes, return_index=True)
    ordered = all_codes[np.sort(first)]
    columns = np.unravel_index(ordered, tuple(sizes))
    objs = [slot.objects for slot in slots]
    cols = [c.tolist() for c in columns]
    return [tuple(o[i] for o, i in zip(objs, row, strict=True)) for row in zip(*cols)]


class MapTable:
    """A map's outputs over the product of per-argument value sets (one or two arguments): each
    distinct argument pair is applied once (as the loop's `results` cache does) and remembered by
    an integer code; a set product is a bulk lookup of its codes. Large products look up an array
    indexed by the arguments' ids (a copy of `results` for the pairs seen so far) instead."""

    def __init__(self, arity: int, apply: Callable[[Sequence[Atom]], tuple[bool, Atom]]) -> None:
        self.slots = [Ids() for _ in range(arity)]
        self.apply = apply
        self.results: dict[int, int] = {}  # argument code -> out id (-1: no value)
        self.out_ids: dict[Any, int] = {}
        self.outs: list[Atom] = []
        # argument ids -> out id (-1: no value, UNKNOWN: not looked up yet), grown as ids appear
        self.table = np.full((1,) * arity, UNKNOWN, dtype=np.int64)
        self._arrays: dict[tuple[int, int], np.ndarray] = {}  # (slot, id(set)) -> its ids

    def outputs(self, sets: Sequence[tuple[Atom, ...]]) -> list[Atom] | None:
        """The distinct outputs (any order) over the product of `sets`, or None."""
        if not 1 <= len(sets) <= 2:
            return None
        ids = [slot.of(s) for slot, s in zip(self.slots, sets, strict=True)]
        if any(a is None for a in ids):
            return None
        size = math.prod(len(a) for a in ids)  # type: ignore[arg-type]
        if size > MAX_CODES:
            return None
        if size > 4 * SMALL and self._grow():  # (below, numpy's overheads dominate)
            return self._array_outputs(ids, sets)  # type: ignore[arg-type]
        if len(ids) == 1:
            codes = ids[0]
        elif size <= SMALL:
            codes = [x * _BASE + y for x in ids[0] for y in ids[1]]  # type: ignore[union-attr]
        else:
            a, b = (np.array(x, dtype=np.int64) for x in ids)
            codes = (a[:, None] * _BASE + b[None, :]).ravel().tolist()
        got = list(map(self.results.get, codes))  # C-level lookups
        if None in got:
            for k, (code, r) in enumerate(zip(codes, got, strict=True)):
                if r is None:
                    got[k] = self._apply(code, len(ids))
                    if got[k] is None:
                        return None
        found = set(got)
        found.discard(-1)
        return [self.outs[i] for i in found]

    def _array_outputs(
        self, ids: list[list[int]], sets: Sequence[tuple[Atom, ...]]
    ) -> list[Atom] | None:
        arrays = []
        for k, (a, s) in enumerate(zip(ids, sets, strict=True)):
            got = self._arrays.get((k, id(s)))
            if got is None:
                got = self._arrays[(k, id(s))] = np.array(a, dtype=np.int64)
            arrays.append(got)
        if len(arrays) == 1:
            index: tuple[np.ndarray, ...] = (arrays[0],)
        else:
            index = (arrays[0][:, None], arrays[1][None, :])
        got = self.table[index]
        missing = np.nonzero(got == UNKNOWN)
        if missing[0].size:
            args = [np.broadcast_to(i, got.shape)[missing].tolist() for i in index]
            for arg_ids in zip(*args, strict=True):
                code = arg_ids[0] if len(arg_ids) == 1 else arg_ids[0] * _BASE + arg_ids[1]
                r = self.results.get(code)
                if r is None:
                    r = self._apply(code, len(arg_ids))
                    if r is None:
                        return None
                self.table[arg_ids] = r
            got = self.table[index]
        found = np.unique(got)
        return [self.outs[i] for i in found.tolist() if i >= 0]

    def _grow(self) -> bool:
        """The table covers every id given so far (doubling, so growth is amortised); False
        where it would be larger than TABLE_MAX entries (the codes' lookups serve then)."""
        sizes = [len(slot.objects) for slot in self.slots]
        shape = self.table.shape
        if all(n <= m for n, m in zip(sizes, shape, strict=True)):
            return True
        new = tuple(max(2 * m, n) if n > m else m for n, m in zip(sizes, shape, strict=True))
        if math.prod(new) > TABLE_MAX:
            new = tuple(max(n, m) for n, m in zip(sizes, shape, strict=True))
            if math.prod(new) > TABLE_MAX:
                return False
        table = np.full(new, UNKNOWN, dtype=np.int64)
        table[tuple(slice(0, m) for m in shape)] = self.table
        self.table = table
        return True

    def _apply(self, code: int, arity: int) -> int | None:
        arg_ids = (code,) if arity == 1 else divmod(code, _BASE)
        objs = [slot.objects[i] for slot, i in zip(self.slots, arg_ids, strict=True)]
        ok, out = self.apply(objs)
        if ok and not plain(out):
            return None  # the loop keeps the last of equal keys: do not guess
        r = self.results[code] = self._out_id(out) if ok else -1
        return r

    def _out_id(self, out: Atom) -> int:
        key = value_key(out)
        i = self.out_ids.get(key)
        if i is None:
            i = self.out_ids[key] = len(self.outs)
            self.outs.append(out)
        return i

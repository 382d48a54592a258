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

from compiler import vector_maps
from compiler.blocks import Atom, value_key

MAX_CODES = 16_000_000  # combinations built as arrays at once (else the loops run)
SMALL = 64  # products enumerated in Python (below this, numpy's overhead dominates)
_BASE = 2**32  # argument code = first id * _BASE + second id
UNKNOWN = -2  # MapTable.table: an argument combination not looked up yet
TABLE_MAX = 4_000_000  # MapTable.table entries at most (32 MB)
_PLAIN = (bool, int, float, str)
_PLAIN_TYPES = frozenset(_PLAIN)


def plain(value: Atom) -> bool:
    """A value whose key determines it completely (so any object with that key will do)."""
    t = type(value)
    if t is float:
        return not math.isnan(value) and (value != 0.0 or math.copysign(1.0, value) > 0)
    return t in _PLAIN


def all_plain(values: Sequence[Atom]) -> bool:
    """`plain` of every value, the floats checked as one array."""
    types = set(map(type, values))
    if not types <= _PLAIN_TYPES:
        return False
    if float not in types:
        return True
    floats = np.array([v for v in values if type(v) is float], dtype=np.float64)
    return not (np.isnan(floats).any() or (np.signbit(floats) & (floats == 0.0)).any())


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
        out: list[int] | None = None
        if all_plain(values):
            # for plain values (type, value) splits as value_key does, and is built at C speed
            # (a set of 33K fractions per position at N = 256: 1.8M keys per analysis)
            keys = list(zip(map(type, values), values))
            ids = self.ids
            out = list(map(ids.get, keys))
            if None in out:
                # new ids in first-seen order; a plain value's key holds the value itself
                fresh = [key for key in dict.fromkeys(keys) if key not in ids]
                ids.update(zip(fresh, range(len(self.objects), len(self.objects) + len(fresh))))
                self.objects.extend(v for _, v in fresh)
                out = list(map(ids.__getitem__, keys))
        self._sets[id(values)] = out
        return out  # type: ignore[return-value]


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


class TooManyRows(Exception):
    """More distinct rows than the caller's limit (found before any row is built)."""


def joint_rows(
    groups: Sequence[Sequence[tuple[Atom, ...]]], limit: int | None = None
) -> list[tuple[Atom, ...]] | None:
    """The distinct rows of the products of each group's sets, in first-seen order (what a loop
    with `seen.setdefault(key(row), row)` over the groups in order gives), or None; TooManyRows
    where there are more than `limit`."""
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
    if limit is not None and len(first) > limit:
        raise TooManyRows
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

    def __init__(
        self,
        arity: int,
        apply: Callable[[Sequence[Atom]], tuple[bool, Atom]],
        fn: Any = None,
    ) -> None:
        self.slots = [Ids() for _ in range(arity)]
        self.apply = apply
        # `apply`'s function, where compiler.vector_maps may compute it on many arguments at once
        self.fn = fn
        self._columns: list[tuple[int, vector_maps.Column | None]] = [(0, None)] * arity
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
        if size > 4 * SMALL and self.fn is not None:
            # too many ids for the table (two prefix means at N = 256: 20K each): every code
            # computed as columns, no per-code lookup (5.6M codes, ~4 s of 16)
            got = self._column_outputs(ids)  # type: ignore[arg-type]
            if got is not None:
                return got
        if len(ids) == 1:
            codes = ids[0]
        elif size <= SMALL:
            codes = [x * _BASE + y for x in ids[0] for y in ids[1]]  # type: ignore[union-attr]
        else:
            a, b = (np.array(x, dtype=np.int64) for x in ids)
            codes = (a[:, None] * _BASE + b[None, :]).ravel().tolist()
        got = list(map(self.results.get, codes))  # C-level lookups
        if None in got:
            missing = [k for k, r in enumerate(got) if r is None]
            applied = self._apply_many([codes[k] for k in missing], len(ids))
            if applied is None:
                return None
            for k, r in zip(missing, applied, strict=True):
                got[k] = r
        found = set(got)
        found.discard(-1)
        return [self.outs[i] for i in found]

    def _column_outputs(self, ids: list[list[int]]) -> list[Atom] | None:
        """`outputs` where compiler.vector_maps computes every code of the product at once (its
        results are Python's), else None."""
        arrays = [np.array(a, dtype=np.int64) for a in ids]
        if len(arrays) == 1:
            codes = arrays[0]
        else:
            codes = (arrays[0][:, None] * _BASE + arrays[1][None, :]).ravel()
        got = self._apply_columns(codes, len(arrays))
        if got is None:
            return None
        found = np.unique(got)
        return [self.outs[i] for i in found.tolist() if i >= 0]

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
            args = [np.broadcast_to(i, got.shape)[missing] for i in index]
            codes = args[0] if len(args) == 1 else args[0] * _BASE + args[1]
            applied = self._apply_many(codes.tolist(), len(args))
            if applied is None:
                return None
            self.table[tuple(args)] = applied
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

    def _apply_many(self, codes: list[int], arity: int) -> list[int] | None:
        """Out ids (-1: no value) of distinct argument codes not looked up yet, all at once where
        compiler.vector_maps computes the function (the results are Python's), else one by one;
        None where an output is not plain."""
        if self.fn is not None and len(codes) >= SMALL:
            got = self._apply_columns(np.array(codes, dtype=np.int64), arity)
            if got is not None:
                return got.tolist()  # not kept in `results`: computing them again costs less
        out = []
        for code in codes:
            r = self.results.get(code)
            if r is None:
                r = self._apply(code, arity)
                if r is None:
                    return None
            out.append(r)
        return out

    def _apply_columns(self, array: np.ndarray, arity: int) -> np.ndarray | None:
        """Out ids (-1: no value) of the argument codes `array`, None where compiler.vector_maps
        does not compute them exactly."""
        arg_ids = (array,) if arity == 1 else (array // _BASE, array % _BASE)
        args = []
        for k, ids in enumerate(arg_ids):
            col = self._slot_column(k)
            if col is None:
                return None
            args.append(vector_maps.Column(col.num[ids], col.kind[ids], col.ok[ids]))
        got = vector_maps.apply_columns(self.fn, args)
        if got is None:
            return None
        if not vector_maps.plain(got):
            return None  # a -0.0 or NaN: the loop decides
        # one atom per distinct (type, value) result: a float64's bits name its value, per type
        result = np.full(len(array), -1, dtype=np.int64)
        bits = got.num.view(np.int64)
        for kind in np.unique(got.kind[got.ok]).tolist():
            rows = np.nonzero(got.ok & (got.kind == kind))[0]
            _, first, inverse = np.unique(bits[rows], return_index=True, return_inverse=True)
            picked = rows[first]
            values = vector_maps.atoms(
                vector_maps.Column(got.num[picked], got.kind[picked], got.ok[picked])
            )
            ids = np.array([self._out_id(v) for v in values or ()], dtype=np.int64)
            result[rows] = ids[inverse.ravel()]
        return result

    def _slot_column(self, k: int) -> vector_maps.Column | None:
        """Slot k's values as a column (None: one is not a number), extended as ids are added."""
        size, col = self._columns[k]
        objects = self.slots[k].objects
        if size == len(objects):
            return col
        if size and col is None:
            return None  # an earlier value is not a number
        new = vector_maps.column(objects[size:])
        if new is not None and col is not None:
            new = vector_maps.Column(
                np.concatenate([col.num, new.num]),
                np.concatenate([col.kind, new.kind]),
                np.concatenate([col.ok, new.ok]),
            )
        self._columns[k] = (len(objects), new)
        return new

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

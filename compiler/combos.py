"""Vectorised enumeration of value combinations, for the value inference and the map planners.

At N = 256 a map of two per-position inputs such as `n_opens - n_closes` meets ~N^3/3 combinations
(every pair of values at every position): one Python iteration each took most of a compile. Here
each value gets an integer id and the combinations are integer arrays.

Both helpers give exactly the Python loops' results, and decline (return None) where they might
not: a value that is not a plain bool, int, float or str, a NaN (keys compare by identity) or a -0.0
(equal to 0.0 but printed differently: which object a loop keeps would matter).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compiler.blocks import Atom, value_key

MAX_CODES = 16_000_000  # combinations built as arrays at once (else the loops run)
_BASE = 2**32  # argument code = first id * _BASE + second id
_PLAIN = (bool, int, float, str)


def plain(value: Atom) -> bool:
    """A value whose key determines it completely (so any object with that key will do)."""
    t = type(value)
    if t is float:
        return not math.isnan(value) and (value != 0.0 or math.copysign(1.0, value) > 0)
    return t in _PLAIN


class Ids:
    """Integer ids for values by key, per argument slot; each set's id array is built once."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.objects: list[Atom] = []
        self._sets: dict[int, np.ndarray | None] = {}

    def of(self, values: tuple[Atom, ...]) -> np.ndarray | None:
        """The ids of an interned set (None: a value that is not plain)."""
        got = self._sets.get(id(values), False)
        if got is not False:
            return got  # type: ignore[return-value]
        out: np.ndarray | None = np.empty(len(values), dtype=np.int64)
        for k, v in enumerate(values):
            if not plain(v):
                out = None
                break
            key = value_key(v)
            i = self.ids.get(key)
            if i is None:
                i = self.ids[key] = len(self.objects)
                self.objects.append(v)
            out[k] = i  # type: ignore[index]
        self._sets[id(values)] = out
        return out


def product_codes(id_arrays: Sequence[np.ndarray], sizes: Sequence[int]) -> np.ndarray:
    """Row-major codes of itertools.product over the arrays (code = ravel of the ids)."""
    if not id_arrays:
        return np.zeros(1, dtype=np.int64)
    grids = np.meshgrid(*id_arrays, indexing="ij")
    return np.ravel_multi_index(tuple(g.ravel() for g in grids), tuple(sizes))


def joint_rows(groups: Sequence[Sequence[tuple[Atom, ...]]]) -> list[tuple[Atom, ...]] | None:
    """The distinct rows of the products of each group's sets, in first-seen order (what a loop
    with `seen.setdefault(key(row), row)` over the groups in order gives), or None."""
    if not groups:
        return []
    width = len(groups[0])
    slots = [Ids() for _ in range(width)]
    arrays = []
    total = 0
    for sets in groups:
        ids = [slot.of(s) for slot, s in zip(slots, sets, strict=True)]
        if any(a is None for a in ids):
            return None
        arrays.append(ids)
        total += int(np.prod([len(a) for a in ids]))  # type: ignore[arg-type]
    sizes = [max(len(slot.objects), 1) for slot in slots]
    if total > MAX_CODES or float(np.prod(sizes, dtype=np.float64)) >= 2.0**62:
        return None
    codes = np.concatenate([product_codes(ids, sizes) for ids in arrays])  # type: ignore[arg-type]
    _, first = np.unique(codes, return_index=True)
    ordered = codes[np.sort(first)]
    columns = np.unravel_index(ordered, tuple(sizes))
    objs = [slot.objects for slot in slots]
    return [tuple(o[int(i)] for o, i in zip(objs, row, strict=True)) for row in zip(*columns)]


class MapTable:
    """A map's outputs over the product of per-argument value sets (one or two arguments): each
    distinct argument pair is applied once (as the loop's `results` cache does) and remembered by
    an integer code; a set product is a bulk lookup of its codes."""

    def __init__(self, arity: int, apply: Callable[[Sequence[Atom]], tuple[bool, Atom]]) -> None:
        self.slots = [Ids() for _ in range(arity)]
        self.apply = apply
        self.results: dict[int, int] = {}  # argument code -> out id (-1: no value)
        self.out_ids: dict[Any, int] = {}
        self.outs: list[Atom] = []

    def outputs(self, sets: Sequence[tuple[Atom, ...]]) -> list[Atom] | None:
        """The distinct outputs (any order) over the product of `sets`, or None."""
        if not 1 <= len(sets) <= 2:
            return None
        ids = [slot.of(s) for slot, s in zip(self.slots, sets, strict=True)]
        if any(a is None for a in ids):
            return None
        if float(np.prod([len(a) for a in ids], dtype=np.float64)) > MAX_CODES:  # type: ignore[arg-type]
            return None
        if len(ids) == 1:
            codes = ids[0].tolist()  # type: ignore[union-attr]
        else:
            a, b = ids
            codes = (a[:, None] * _BASE + b[None, :]).ravel().tolist()  # type: ignore[index]
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

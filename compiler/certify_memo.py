"""MLP parts checked once per compile where every input of their check is the same.

A compile certifies several builds of one program (`compiler.alternatives` and the driver's last
builds), and most of what they differ in leaves a given MLP part as it was, up to where its
dimensions sit in the residual: defs seed 2201203 at N = 5 certified one map's 12,483 units over
13,230 points in each of its 18 certifications, 5-7 s each, over 5 distinct sets of inputs
(some builds were one model twice). `sharing`
scopes a memo (the driver's, per compile); inside it `checked` keeps a part's numbers (its worst
decision, largest input error, and the error, magnitude and grid of what it writes) under a key
that spells, bit for bit, every input the check reads, with the residual dimensions renumbered in
their order (every sum over dimensions runs in the same order either way). Outside a scope (a
file re-checked, `rasp check`) every part is checked anew. The certifier's arithmetic is unchanged:
a hit returns the very numbers the same inputs gave.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from compiler.bounds import Linear
from compiler.reach import MLPReach, Reading

# A part is worth a key where its check is large (points x units): the key reads W's rows once
# more, as `unit_groups` does, and holds them; a small part is checked faster than keyed.
MIN_CELLS = 2**20
# ... and its key, held in memory for the compile, small enough (W's and W_out's non-zeros: a
# one-hot of thousands of values read by thousands of units could keep hundreds of MB)
MAX_KEY_BYTES = 2**26

_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("certify_memo", default=None)


@contextmanager
def sharing(memo: dict[Hashable, Any]) -> Iterator[None]:
    """Parts checked inside keep their numbers in `memo` (one dict per compile)."""
    token = _MEMO.set(memo)
    try:
        yield
    finally:
        _MEMO.reset(token)


def checked(key: Callable[[], Hashable | None], check: Callable[[], tuple]) -> tuple:
    """`check()`, or what it returned before in this scope for an equal `key()` (None: a part
    whose inputs the key cannot spell, checked anew). Its arrays are made read-only: shared."""
    memo = _MEMO.get()
    if memo is None:
        return check()
    spelled = key()
    if spelled is None:
        return check()
    found = memo.get(spelled)
    if found is None:
        found = memo[spelled] = _frozen(check())
    return found  # type: ignore[no-any-return]


def part_key(
    lin: Linear,
    part: MLPReach,
    coords: np.ndarray,
    wo: np.ndarray,
    out: np.ndarray,
    out_reading: Reading,
    out_terms: np.ndarray,
    b_out: np.ndarray,
) -> Hashable | None:
    """Every input `certify_mlp`'s check of one part reads, exactly (floats as their bytes or
    their repr: -0.0 is not 0.0), its residual dimensions renumbered in order; None where the
    part is small (not worth a key), its key large (MAX_KEY_BYTES), or W has a row the key
    would not hold."""
    if coords.shape[0] * lin.W.shape[1] < MIN_CELLS:
        return None
    one, bos, pad = lin.one, lin.bos, lin.pad
    used = list(dict.fromkeys(part.readings))
    readings = [lin.readings[r] for r in used]
    dims = sorted({d for r in readings for t in r.terms for d, _ in t if d != one})
    if bos in dims or pad in dims:
        return None
    held = [one, *dims]
    # every row of W not held here is bit for bit +0.0 but BOS's and PAD's (which the check
    # skips: exact zeros at real positions), as `unit_groups` reads rows
    rows = np.flatnonzero((lin.W.view(np.uint64) != 0).any(axis=1))
    if not np.isin(rows, [*held, bos, pad]).all():
        return None
    where = {d: i for i, d in enumerate(dims)}
    where[one] = -1
    placed = {int(d): i for i, d in enumerate(out)}
    err = lin.err
    # W's rows and W_out's part as their non-zero entries (bit for bit: -0.0 is one), the rest
    # +0.0: a part over a one-hot of 800 values keeps a few MB, not W's 80 MB
    weights = (_sparse(lin.W[held]), _sparse(wo))
    if sum(len(w[2]) + len(w[3]) for w in weights) + 8 * coords.size > MAX_KEY_BYTES:
        return None
    return (
        "mlp part",
        tuple(used.index(r) for r in part.readings),
        repr([_renumbered(r, where) for r in readings]),
        weights,
        _exact(lin.bias),
        *(_exact(a[held]) for a in (err.absolute, err.relative, err.magnitude, err.grid)),
        _exact(coords),
        _exact(np.array(part.outputs)),
        part.continuous,
        repr(_renumbered(out_reading, placed)),
        _exact(out_terms[out]),
        _exact(b_out[out]),
    )


def _renumbered(reading: Reading, where: dict[int, int]) -> tuple:
    """What the check reads of a reading, its dimensions renumbered by `where`."""
    terms = tuple(tuple((where[d], c) for d, c in t) for t in reading.terms)
    return (reading.categorical, reading.vector, reading.misfit, reading.numbers, terms)


def _exact(array: np.ndarray) -> tuple[str, tuple[int, ...], bytes]:
    """An array bit for bit: its type, shape and bytes."""
    array = np.ascontiguousarray(array)
    return (array.dtype.str, array.shape, array.tobytes())


def _sparse(array: np.ndarray) -> tuple[str, tuple[int, ...], bytes, bytes]:
    """A float64 array bit for bit as its type, shape, and the flat places and bytes of its
    entries that are not +0.0 (every other entry is +0.0)."""
    array = np.ascontiguousarray(array, dtype=np.float64)
    places = np.flatnonzero(array.view(np.uint64) != 0)
    return (array.dtype.str, array.shape, places.tobytes(), array.ravel()[places].tobytes())


def _frozen(result: tuple) -> tuple:
    for item in result:
        if isinstance(item, np.ndarray):
            item.flags.writeable = False
    return result

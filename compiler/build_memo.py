"""Step MLPs built once for all the builds of a program, where their inputs are identical.

`compiler.alternatives` plans a program several times from one value analysis, and most of what
the builds differ in (copies as numbers, fused maps, matching) leaves a given map's step MLP as it
was: a width times a mean at N = 6 (fuzz mixed seed 1820297) stepped the same 9,429 points into
7,288 step pairs in each of four builds, 1.6 s each. `shared` keeps what a pure builder returned
under a key spelling every input exactly (its repr, where the values are plain atoms), for the
plans made inside `sharing` (the driver's, per value analysis); outside, or where a value is not
a plain atom, it builds anew. The result is the same object each time: nothing may change an MLPSpec in place (nothing does:
assembly copies its weights into the layers), and its arrays are made read-only to keep it so.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from compiler.blocks import MLPSpec
from rasp.errors import CompileError, Diagnostic

T = TypeVar("T")

_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("build_memo", default=None)


@contextmanager
def sharing(memo: dict[Hashable, Any]) -> Iterator[None]:
    """Builds inside keep their results in `memo` (one dict per value analysis: the builds of
    one program, vocabulary and length)."""
    token = _MEMO.set(memo)
    try:
        yield
    finally:
        _MEMO.reset(token)


# the types whose repr spells a value exactly, its type included (1, 1.0, True; 0.0, -0.0)
_PLAIN = frozenset({bool, int, float, str, type(None)})


def plain(values: Iterable[object]) -> bool:
    """Whether every value is a plain atom (or a tuple of them): its repr is an exact key."""
    values = list(values)
    kinds = set(map(type, values))
    if tuple in kinds:
        return kinds <= _PLAIN | {tuple} and all(plain(v) for v in values if type(v) is tuple)  # type: ignore[arg-type]
    return kinds <= _PLAIN


def shared(
    what: Hashable,
    inputs: tuple[object, ...],
    build: Callable[[], T],
    atoms: Callable[[], Iterable[Iterable]] = tuple,
    worth: Callable[[T], bool] = lambda _: True,
) -> T:
    """`build()`, once per `sharing` scope for these `inputs`: every input `build` reads, made of
    plain atoms, floats, strings, tuples, lists and dataclasses of them (no arrays, whose repr
    abbreviates), keyed by their repr; `atoms()` lists the collections of values among them, which
    must all be plain (else the build is not shared). `what` names the build and a few cheap
    facts of its inputs: the key is spelled only where a build with these facts was kept, and a
    build is kept only where `worth(result)` (a key costs about what a small build does: dyck1's
    step MLPs at N = 256, 5 units over 30K points, 35 ms for the key and 68 ms for the build). A
    refusal (a CompileError, of that class exactly) is kept too, whatever `worth` says: a later
    build with these inputs raises a new CompileError with its diagnostics, the same text."""
    memo = _MEMO.get()
    if memo is None:
        return build()
    # the key and the test of the atoms, each made at most once per call (a key is the repr of
    # every input: spelled twice where a kept build missed, 13% of mixed 1820297 at N = 7)
    spelled: list[str] = []

    def key() -> str | None:
        if not spelled:
            spelled.append(repr(inputs) if all(map(plain, atoms())) else "")
        return spelled[0] or None

    kept: dict[str, Any] | None = memo.get(what)
    if kept is not None and (found_key := key()) is not None and found_key in kept:
        found = kept[found_key]
        if isinstance(found, _Refused):
            raise CompileError(found.diagnostics)
        return found  # type: ignore[no-any-return]
    try:
        result = build()
    except CompileError as refusal:
        # the same refusal, raised afresh for each later build with these inputs (mixed seed
        # 1820297 at N = 7: a step MLP past the pair limit refused in 18 builds, 0.5 s each)
        if type(refusal) is CompileError and (refused_key := key()) is not None:
            memo.setdefault(what, {})[refused_key] = _Refused(refusal.diagnostics)
        raise
    if worth(result) and (new_key := key()) is not None:
        memo.setdefault(what, {})[new_key] = _frozen(result)
    return result


@dataclass(frozen=True)
class _Refused:
    """A build's refusal, kept: its diagnostics (a CompileError of exactly that class)."""

    diagnostics: tuple[Diagnostic, ...]


def _frozen(result: T) -> T:
    """`result` with the arrays of its MLPSpecs read-only: shared, they must not change."""
    for spec in result if isinstance(result, tuple) else (result,):
        if isinstance(spec, MLPSpec):
            for array in (*spec.W_in.values(), spec.b_in, spec.out_rows):
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False
    return result

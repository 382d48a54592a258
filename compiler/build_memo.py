"""Step MLPs built once for all the builds of a program, where their inputs are identical.

`compiler.alternatives` plans a program several times from one value analysis, and most of what
the builds differ in (copies as numbers, fused maps, matching) leaves a given map's step MLP as it
was: a width times a mean at N = 6 (fuzz mixed seed 1820297) stepped the same 9,429 points into
7,288 step pairs in each of four builds, 1.6 s each. `shared` keeps what a pure builder returned
under a key spelling every input exactly (`exact_key`), for the plans made inside `sharing`
(the driver's, per value analysis); outside, or where an input has no exact key, it builds anew.
The result is the same object each time: nothing may change an MLPSpec in place (nothing does:
assembly copies its weights into the layers), and its arrays are made read-only to keep it so.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from enum import Enum
from typing import Any, TypeVar

import numpy as np

from compiler.blocks import Dim, Encoded, MLPSpec
from compiler.numeric import ErrorBound

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


class _NoKey(Exception):
    """An input whose exact key is not spelled here: the build is not shared."""


def exact_key(value: object) -> Hashable:
    """A key equal only for inputs a build cannot tell apart: 1, 1.0 and True differ, and so do
    0.0 and -0.0 (floats by their bits); raises _NoKey for a type it does not know."""
    kind = type(value)
    if kind is float:
        return ("f", value.hex())  # type: ignore[attr-defined]
    if kind in (int, bool, str) or value is None:
        return (kind.__name__, value)
    if kind is tuple or kind is list:
        return (kind.__name__, tuple(exact_key(v) for v in value))  # type: ignore[attr-defined]
    if kind is Dim:
        return ("Dim", value.name, exact_key(value.value), value.value_type)  # type: ignore[attr-defined]
    if kind is Encoded:
        e: Encoded = value  # type: ignore[assignment]
        return ("Encoded", e.name, e.encoding, *map(exact_key, (e.values, e.one_hot, e.number)))
    if kind is ErrorBound:
        return ("ErrorBound", exact_key(value.absolute), exact_key(value.relative))  # type: ignore[attr-defined]
    if isinstance(value, Enum):
        return (kind.__name__, value.name)
    if kind is np.float64 or kind is np.float32:  # (a type of its own to value_key)
        return (kind.__name__, float(value).hex())  # type: ignore[arg-type]
    raise _NoKey(kind.__name__)


def shared(what: str, inputs: tuple[object, ...], build: Callable[[], T]) -> T:
    """`build()`, once per `sharing` scope for these `inputs` (every input `build` reads, exact
    keys of them); a refusal is not kept (the next build with these inputs refuses anew)."""
    memo = _MEMO.get()
    if memo is None:
        return build()
    try:
        key = (what, exact_key(inputs))
    except _NoKey:
        return build()
    if key not in memo:
        memo[key] = _frozen(build())
    return memo[key]  # type: ignore[no-any-return]


def _frozen(result: T) -> T:
    """`result` with the arrays of its MLPSpecs read-only: shared, they must not change."""
    for spec in result if isinstance(result, tuple) else (result,):
        if isinstance(spec, MLPSpec):
            for array in (*spec.W_in.values(), spec.b_in, spec.out_rows):
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False
    return result

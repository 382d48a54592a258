"""numpy scalars a tracr program's functions give, kept for the functions that read them.

tracr programs compute with numpy too (`np.abs(x) > 1` is an `np.bool_`). The lowered graph holds
Python values (`rasp.tracr.boxes.plain`: the compiler, the models and the tools read those), but a
function that reads such a value computes with numpy's arithmetic in tracr: `np.True_ + np.True_`
is `True` (Python's `True + True` is 2), `np.float32(1/3) * 3` is `1.0`. Each lowered function
remembers the numpy type of each value it gave (`NumpyTypes`) and the functions reading it
(`rasp.tracr.lower.TracrFn.sources`) are given the numpy scalar back. A value the function gave
both as a numpy scalar and as a Python value (or as two numpy types) is one value to the graph:
a clash, refused by the compiler where a function reads it. So is an aggregate's default between
the function and its reader that equals a numpy scalar the function gave (`Source.default_clash`):
tracr gives the reader the default as written. numpy parts of a tuple are not kept (a tuple travels
as a string token of its Python values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasp import sops
from rasp.errors import Diagnostic
from rasp.tracr.boxes import plain


@dataclass(eq=False)  # one object, shared (compared by identity)
class NumpyTypes:
    """The numpy scalar types a program function gave, by the Python value the graph holds for
    each (`plain`), so that a function reading them computes as tracr's does; a value given both as
    numpy's and as Python's (or as two numpy types) is a `clash`: the graph holds one value."""

    types: dict[tuple[type, Any], type] = field(default_factory=dict)
    python: set[tuple[type, Any]] = field(default_factory=set)
    clash: tuple[Any, Any] | None = None
    # some function reads the values (only then are they noted); one `NumpyTypes` serves every map
    # of one Python function in a graph, as `compiler.dedupe` may keep any one of them
    read: bool = False

    def note(self, out: Any) -> None:
        if out is None or isinstance(out, (tuple, list)):
            return  # (a tuple's numpy parts are not kept: see the module doc)
        value = plain(out)
        try:
            key = (type(value), value)
            hash(key)
        except TypeError:
            return
        if isinstance(out, np.generic):
            seen = self.types.setdefault(key, type(out))
            other = (
                seen(value) if seen is not type(out) else (value if key in self.python else None)
            )
        else:
            self.python.add(key)
            seen = self.types.get(key)
            other = None if seen is None else seen(value)
        if other is not None and self.clash is None:
            self.clash = (out, other)

    def given(self, value: Any) -> Any:
        """`value` as the function gave it: its numpy scalar, where it gave one."""
        if not self.types:
            return value
        try:
            numpy_type = self.types.get((type(value), value))
        except TypeError:
            return value
        return value if numpy_type is None else numpy_type(value)


@dataclass(frozen=True)
class Source:
    """Where a reader's argument comes from: the types of the program function that gave it, and
    the defaults of the aggregates between them (a default travels as the same value as the
    function's, though tracr gives it to the reader as written, not as the function's numpy)."""

    numpy: NumpyTypes
    text: str
    defaults: tuple[Any, ...] = ()

    def given(self, value: Any) -> Any:
        return self.numpy.given(value)

    def default_clash(self) -> tuple[Any, Any] | None:
        """(a default, the numpy scalar equal to it that the function gave), where there is one:
        the graph holds one value for both, which a reader computes with differently."""
        for default in self.defaults:
            if default is None:
                continue
            try:
                numpy_type = self.numpy.types.get((type(default), default))
            except TypeError:
                continue
            if numpy_type is not None and type(default) is not numpy_type:
                return default, numpy_type(default)
        return None


def sources_of(inputs: Sequence[sops.Node]) -> tuple[Source | None, ...]:
    """Per input, the lowered program function whose value it is (through None checks and
    aggregates, which pass a value on as it is; None where none): a numpy scalar it gave is given
    to the reader as such. Each function found is marked as read (it then notes its types)."""
    found: list[Source | None] = []
    for node in inputs:
        defaults: list[Any] = []
        while True:
            fn = getattr(node, "fn", None)
            if isinstance(node, sops.MapSOp) and getattr(fn, "passes_value", False):
                node = node.inputs[0]
            elif isinstance(node, sops.AggregateSOp):
                defaults.append(node.default)
                node = node.sop
            else:
                break
        fn = getattr(node, "fn", None) if isinstance(node, sops.MapSOp) else None
        numpy = getattr(fn, "numpy", None)
        if isinstance(numpy, NumpyTypes):
            numpy.read = True
            found.append(Source(numpy, str(getattr(fn, "text", "")), tuple(defaults)))
        else:
            found.append(None)
    return tuple(found)


def comparison_problem(node: sops.Select) -> Diagnostic | None:
    """A `Comparison` select (lowered to the graph's exact comparison) of a side whose function gave
    numpy floats narrower than Python's: tracr compares those in their own precision, the other
    side rounded to it (`np.float32(0.1) == 0.1` is True), the graph and a model exactly. (A sort
    compares one s-op with itself: exact in any precision.)"""
    if node.keys is node.queries:
        return None
    for source in sources_of((node.keys, node.queries)):
        narrow = sorted(
            {
                t.__name__
                for t in (source.numpy.types.values() if source is not None else ())
                if issubclass(t, np.floating) and np.finfo(t).bits < 64
            }
        )
        if source is not None and narrow:
            return Diagnostic(
                f"a select compares the values of '{source.text}', numpy {' and '.join(narrow)}: "
                "tracr compares them in that precision (np.float32(0.1) == 0.1 is True), a "
                "compiled model exactly",
                node.span,
                "give Python floats (float(...)), or compare with a function "
                "(lambda key, query: key == query), which is given the numpy values",
            )
    return None


def default_problems(sources: Sequence[Source | None], text: str, span: Any) -> list[Diagnostic]:
    """Each aggregate default read by the function `text` (its arguments from `sources`) that equals
    a numpy scalar the function whose values the aggregate copies gave: one value to the graph,
    two to tracr's reader (the default as written)."""
    problems = []
    for source in sources:
        found = None if source is None else source.default_clash()
        if source is None or found is None:
            continue
        default, scalar = found
        problems.append(
            Diagnostic(
                f"'{text}' reads an aggregate of '{source.text}' whose default {default!r} "
                f"equals the numpy scalar {scalar!r} that '{source.text}' gives: one "
                "value to a compiled model, but tracr gives the reader the default as written and "
                "the function's value as numpy's, which compute differently",
                span,
                "give the aggregate a default the function never gives (None), or make the "
                "function return Python values (bool(...), int(...), float(...))",
            )
        )
    return problems

"""What the encoding planners build together: the blocks so far, and once-only construction.

`Built` collects the heads and MLPs in the order they are made (that order is the plan's, so it
decides the schedule and the residual layout), the |value| bound of every written dimension, the
dimensions whose value is exact in any float32 order, and which value a decoded reading uses for
equal numbers. `Memo` builds each reading once and reports a failure once, at its node, so that
independent failures are all reported and dependents are skipped (`Skip`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from compiler.blocks import (
    Atom,
    Dim,
    Encoded,
    HeadSpec,
    MLPSpec,
    PlannedHead,
    value_key,
)
from compiler.graph import IRNode
from compiler.model import OverParamLimit
from rasp.errors import CompileError, Diagnostic

T = TypeVar("T")


class Built:
    def __init__(self) -> None:
        self.heads: list[PlannedHead] = []
        self.mlps: list[MLPSpec] = []
        self.bounds: dict[Dim, float] = {}
        # dims whose value is exact in any float32 order (integer activations, exact copies)
        self.exact: set[Dim] = set()
        # node -> value key -> the value its categorical reading uses (equal numbers share a column)
        self.canon: dict[int, dict[tuple[str, Any], Atom]] = {}
        # node -> value key -> the outputs of rows whose inputs its readings read alike and whose
        # row was kept in its place (`MapRows`: 2.0 from 0.0 + 2 beside 2 from 0 + 2, 0 and 0.0
        # one column): values the canon table, built from the kept rows, may not list
        self.twins: dict[int, dict[tuple[str, Any], dict[tuple[str, Any], Atom]]] = {}
        # dims the positional embedding writes: their value at positions 0..N-1 (maps.positional)
        self.positional: dict[Dim, tuple[float, ...]] = {}
        # their s-ops: name -> (operation, the dims it is read from, its own or shared ones)
        self.embedded: dict[str, tuple[str, tuple[Dim, ...]]] = {}
        # the classes coarse steps sorted a source into, by (source, map, reading, partition):
        # a map read both as a number and as a one-hot is planned twice and shares them
        self.classes: dict[tuple[Any, ...], Encoded] = {}

    def add_head(self, spec: HeadSpec, merge_key: tuple[Any, ...]) -> None:
        self.heads.append(PlannedHead(spec, merge_key))

    def add_mlp(self, spec: MLPSpec) -> None:
        self.mlps.append(spec)

    def bound_one_hot(self, enc: Encoded) -> None:
        """A materialised one-hot: each of its dims is 0 or 1."""
        for terms in enc.one_hot:
            self.bounds[terms[0][0]] = 1.0

    def canonical(self, index: int, value: Atom) -> Atom:
        """The value a categorical reading of node `index` uses for `value`."""
        table = self.canon.get(index)
        if table is None:
            return value
        key = value_key(value)
        if key in table:
            return table[key]
        # A value whose row was merged into an equal one's: the reading writes that one's column
        # where the interpreter has this value. (Left as it is, a reader took it for a value that
        # never occurs and dropped its rows: certified and wrong there.) Where merges of several
        # supports disagree on the column, no claim.
        kept = {
            value_key(table[value_key(k)]): table[value_key(k)]
            for k in self.twins.get(index, {}).get(key, {}).values()
            if value_key(k) in table
        }
        return next(iter(kept.values())) if len(kept) == 1 else value


class Skip(Exception):
    """A node that depends on an already-reported failure."""


class Memo:
    def __init__(self) -> None:
        self.problems: list[Diagnostic] = []
        self._made: dict[tuple[Any, ...], Any] = {}
        self._failed: set[tuple[Any, ...]] = set()

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        return key in self._made

    def once(self, key: tuple[Any, ...], node: IRNode, make: Callable[[], T]) -> T:
        """Build once; a failure is reported once (with the node's span) and skips its dependents."""
        if key in self._failed:
            raise Skip
        if key not in self._made:
            try:
                self._made[key] = make()
            except OverParamLimit as err:  # the whole build is over the limit: no plan goes on
                self._failed.add(key)
                located = [d if d.span else replace(d, span=node.span) for d in err.diagnostics]
                raise type(err)(located) from None
            except CompileError as err:
                self._failed.add(key)
                for d in err.diagnostics:
                    self.problems.append(d if d.span else replace(d, span=node.span))
                raise Skip from None
            except Skip:
                self._failed.add(key)
                raise
        return self._made[key]

    @staticmethod
    def guard(make: Callable[[], T]) -> T | None:
        """`make()`, or None when it depends on a reported failure."""
        try:
            return make()
        except Skip:
            return None

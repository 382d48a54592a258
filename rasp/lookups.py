"""Reading into a value and looking for one: `target[key]` (a list's, string's or dict's item, by atom
or elementwise by s-op; an s-op's value at a position, as an attention) and `item in container`
(elementwise over a list of atoms, or an attention over every position for an s-op container).
The rest of the operators, and the lifting of Python functions onto s-ops, are `rasp.operators`'.
"""

from __future__ import annotations

import operator
from typing import Any

from rasp import compare
from rasp.errors import RaspRuntimeError, RaspTypeError, Span
from rasp.operators import Lifted, lift, refuse_evaluated, refuse_evaluated_inside
from rasp.sops import AggregateSOp, Comparison, ConstSOp, MapSOp, Select, Selector, SOp
from rasp.values import describe, evaluated_hint, is_atom

# Module-level, not lambdas: a `Lifted` map's structure names its function, so two maps made by
# the same operation compare equal (compiler.dedupe); the compiler knows them by identity.


def _member(value: Any, members: tuple[Any, ...]) -> bool:
    return value in members


def _equal_indicator(value: Any, item: Any) -> int:
    return int(value == item)


def _positive(value: Any) -> bool:
    return value > 0


def _item(key: Any, table: Any) -> Any:
    """`table[key]`: a dict's value (a missing key is the original's `index [ k ] not in dict.`),
    or a list's (a tuple) or string's item, with the original's words for a bad index."""
    if isinstance(table, dict):
        return table[key]
    kind = "string" if isinstance(table, str) else "list"
    if isinstance(key, int) and not -len(table) <= key < len(table):
        raise RaspRuntimeError(f"index {key} out of range for {kind} of length {len(table)}")
    try:
        return table[key]
    except TypeError:
        raise RaspRuntimeError(
            f"index into {kind} has to be integer, got: {describe(key)}"
        ) from None


def contains(item: Any, container: Any, span: Span, full_s: Selector) -> Any:
    """`item in container`: elementwise for an s-op item; an attention over `full_s` for an
    s-op container."""
    refuse_evaluated("in", (item, container), span)
    refuse_evaluated_inside("in", (item, container), span)
    if isinstance(item, SOp):
        if not isinstance(container, list) or not all(is_atom(v) for v in container):
            raise RaspTypeError(
                f'"[s-op] in X" expects X to be a list of atoms, got: {describe(container)}',
                span,
                hint=_membership_hint(container),
            )
        return lift(_member, (item, tuple(container)), span)
    if is_atom(item):
        if isinstance(container, list):
            return compare.member(item, container)
        if isinstance(container, SOp):
            found = lift(_equal_indicator, (container, item), span)
            share = AggregateSOp(selector=full_s, sop=found, default=0, span=span)
            return lift(_positive, (share,), span)
        raise RaspTypeError(
            f'"[atom] in X" expects X to be a list or s-op, got: {describe(container)}', span
        )
    raise RaspTypeError(f'"A in X" expects A to be an s-op or atom, got: {describe(item)}', span)


def _membership_hint(container: Any) -> str | None:
    """`tokens in "abc"`, Python's habit: the list of its characters to write instead."""
    if isinstance(container, str) and len(container) <= 12:
        listed = ", ".join(f'"{c}"' for c in container)
        return f"a string is not a list here: write its characters as one, [{listed}]"
    if isinstance(container, str):
        return 'a string is not a list here: write its characters as one, ["a", "b", ...]'
    return None


def index(target: Any, key: Any, span: Span, indices: SOp, length: SOp) -> Any:
    """`target[key]` for lists, strings and dicts (by atom, or elementwise by s-op) and s-ops
    (by int)."""
    if isinstance(target, SOp):
        if not isinstance(key, int):
            raise RaspTypeError(
                f"index into sequence has to be integer, got: {describe(key)}",
                span,
                hint=evaluated_hint(key)
                or (
                    "an s-op is indexed by a whole number (x[0]: x's value at position 0, at "
                    "every position; x[-1]: at the last); to read another position chosen per "
                    "position, aggregate(select(indices, POSITION, ==), x)"
                ),
            )
        if key >= 0:
            where: SOp = ConstSOp(value=key, span=span)
        else:
            where = MapSOp(
                fn=Lifted(operator.add, (length, key), (0,)),
                inputs=(length,),
                text=f"length - {-key}",
                span=span,
            )
        load = Select(keys=indices, queries=where, comparison=Comparison.EQ, span=span)
        return AggregateSOp(selector=load, sop=target, default=0, span=span)
    if isinstance(target, list | str | dict) and isinstance(key, SOp):
        refuse_evaluated_inside("an s-op index", (target,), span)  # its items become values
        frozen = (
            dict(target)
            if isinstance(target, dict)
            else target
            if isinstance(target, str)
            else tuple(target)
        )
        return lift(_item, (key, frozen), span)
    if isinstance(target, list | str):
        name = "list" if isinstance(target, list) else "string"
        if not isinstance(key, int):
            raise RaspTypeError(
                f"index into {name} has to be integer, got: {describe(key)}",
                span,
                hint=evaluated_hint(key),
            )
        if key >= len(target) or -key > len(target):
            raise RaspRuntimeError(
                f"index {key} out of range for {name} of length {len(target)}", span
            )
        return target[key]
    if isinstance(target, dict):
        if not is_atom(key):
            raise RaspTypeError(
                f"index into dict has to be atom, got: {describe(key)}",
                span,
                hint=evaluated_hint(key),
            )
        if key not in target:
            raise RaspRuntimeError(f"index [ {describe(key)} ] not in dict.", span)
        return target[key]
    raise RaspTypeError(
        f"can only index into a list, dict, string, or s-op, but got: {describe(target)}",
        span,
        hint=evaluated_hint(target),
    )

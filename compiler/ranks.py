"""Selectors that select at most one key because they compare with the rank of distinct keys.

tracr sorts (`make_sort_unique`, `make_sort`, `make_sort_freq`) by moving each value to its rank:

    smaller = Select(keys, keys, LT); target = SelectorWidth(smaller)
    Aggregate(Select(target, indices, EQ), values)

When `keys` never takes one value at two positions, `target` is a permutation of 0..n-1 and each
query selects exactly one key, so the aggregate copies one value and never averages. The value
analysis cannot see that; `distinct_by_position` proves it from the keys' function: the keys' values
at each index i, over every value of the other inputs, are disjoint from those at every other index
(tracr's `x + min_key * i / max_seq_len` with whole x). `copy_numbers` then writes the aggregate so
that the compiler copies the value: numbers travel as string tokens through it and back.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compiler.blocks import Atom, is_number
from rasp import sops
from rasp.tracr.functions import NoneCheck

MAX_POINTS = 200_000  # key values computed for one proof (inputs' combinations x positions)
_ORDERS = (sops.Comparison.LT, sops.Comparison.LEQ, sops.Comparison.GT, sops.Comparison.GEQ)


def rank_keys(selector: sops.Node) -> sops.SOp | None:
    """K when `selector` is `Select(SelectorWidth(Select(K, K, order)), queries, ==)`."""
    if not (isinstance(selector, sops.Select) and selector.comparison is sops.Comparison.EQ):
        return None
    width = selector.keys
    if not isinstance(width, sops.SelectorWidthSOp):
        return None
    inner = width.selector
    if not (isinstance(inner, sops.Select) and inner.comparison in _ORDERS):
        return None
    keys, queries = unchecked(inner.keys), unchecked(inner.queries)
    return keys if keys is queries else None


def ranks_every_position(selector: sops.Select) -> bool:
    """Whether a select `rank_keys` matched gives every query one key where its keys are distinct
    (`distinct_by_position`): a strict order ranks n distinct keys 0..n-1, one per query of
    `indices` (`<=` ranks them 1..n, and the query at 0 selects none)."""
    width = selector.keys
    assert isinstance(width, sops.SelectorWidthSOp) and isinstance(width.selector, sops.Select)
    strict = width.selector.comparison in (sops.Comparison.LT, sops.Comparison.GT)
    return strict and isinstance(unchecked(selector.queries), sops.IndicesSOp)


def key_inputs(keys: sops.SOp) -> list[sops.SOp]:
    """The inputs whose value sets `distinct_by_position` needs."""
    if isinstance(keys, sops.MapSOp):
        return [i for i in keys.inputs if not isinstance(i, sops.IndicesSOp)]
    return []


def distinct_by_position(
    keys: sops.SOp, values_of: Callable[[sops.SOp], Sequence[Atom]], max_len: int
) -> bool:
    """True when `keys` provably never holds one value at two positions of an input."""
    if isinstance(keys, sops.IndicesSOp):
        return True
    # No total-order check is needed for distinct ranks: NaN (a fresh one never repeats here,
    # yet ranks 0 beside the least key) is refused wherever the value analysis lists it
    # (values._beyond_float64), and tracr's `<` of a string and a number raises.
    at = _positions_by_value(keys, values_of, max_len)
    return at is not None and all(len(held) == 1 for held in at.values())


def ties_never_averaged(
    keys: sops.SOp,
    values_of: Callable[[sops.SOp], Sequence[Atom]],
    values_at: Callable[[int], Sequence[Atom] | None],
    max_len: int,
) -> bool:
    """Whether a sort by `keys` that may repeat still never averages on an input the interpreter
    answers: every pair of positions that may hold one key holds a value that is no number at
    one of them (`values_at(p)`: the values at position p over every length, None where
    unknown). Keys of one rank are equal keys (a larger key has a larger rank, where `<` orders
    the keys totally), so a query that selects several selects such a pair, and tracr's mean of
    None (or a string) with anything raises there. tracr's `make_sort(shift_by(12, tokens),
    tokens, max_seq_len=20, min_key=2)`: `x + i / 10` repeats only at i and i + 10 (whole x),
    and the shifted values are None at i < 12."""
    at = _positions_by_value(keys, values_of, max_len)
    if at is None or not _totally_ordered(list(at)):
        return False  # unknown, or NaN or a mix of kinds: one rank need not be one key
    shared = {pair for held in at.values() for pair in itertools.combinations(sorted(held), 2)}
    never: dict[int, bool] = {}

    def no_number(p: int) -> bool:
        if p not in never:
            found = values_at(p)
            never[p] = found is not None and not any(isinstance(v, int | float) for v in found)
        return never[p]

    return bool(shared) and all(no_number(p) or no_number(q) for p, q in shared)


def _positions_by_value(
    keys: sops.SOp, values_of: Callable[[sops.SOp], Sequence[Atom]], max_len: int
) -> dict[Any, set[int]] | None:
    """Per value of `keys` (a map of indices and other inputs), the positions it may be held at,
    over every value of the other inputs; None where that is not computed."""
    if not isinstance(keys, sops.MapSOp):
        return None
    positions = [k for k, i in enumerate(keys.inputs) if isinstance(i, sops.IndicesSOp)]
    if not positions:
        return None
    others = [k for k in range(len(keys.inputs)) if k not in positions]
    choices = [values_of(keys.inputs[k]) for k in others]
    combos = 1
    for c in choices:
        combos *= len(c)
    if combos * max_len > MAX_POINTS:
        return None
    seen: dict[Any, set[int]] = {}
    for index in range(max_len):
        for combo in itertools.product(*choices):
            args: list[Any] = [None] * len(keys.inputs)
            for k in positions:
                args[k] = index
            for k, v in zip(others, combo, strict=True):
                args[k] = v
            out = _value(keys.fn, args)
            if out is None:
                continue  # the interpreter raises here (or a comparison meets None): no value
            try:
                seen.setdefault(out, set()).add(index)
            except TypeError:  # unhashable: cannot tell
                return None
    return seen


def _totally_ordered(vals: Sequence[Any]) -> bool:
    """All numbers without NaN (bools count), or all strings: `<` orders them totally."""
    if all(isinstance(v, str) for v in vals):
        return True
    return all(isinstance(v, int | float) and not math.isnan(v) for v in vals)


def _value(fn: Callable[..., Any], args: list[Any]) -> Any:
    """fn(*args), or None where it raises (the interpreter has no value there)."""
    try:
        return fn(*args)
    except Exception:  # noqa: BLE001 (a program's function may raise anything)
        return None


def copy_numbers(
    node: sops.AggregateSOp, selector: sops.Selector, values: sops.SOp, possible: Sequence[Atom]
) -> sops.Node:
    """`node` over `selector` (which selects at most one key) and `values`, written so that the
    compiler copies the selected value: numbers become string tokens before it and numbers again
    after it."""
    # Equal numbers (1 and 1.0) share a token: the values' own reading cannot tell them apart
    # (a model promises numbers, rasp.atoms.same_value), and two tokens for one number made the
    # stand-in map refused as giving two results for equal numbers.
    # A token starts with a mark no string among the values starts with, so no string of the
    # program's own is read back as a number ("\x010" was 5).
    mark = "\x01"
    while any(isinstance(v, str) and v.startswith(mark) for v in [*possible, node.default]):
        mark += "\x01"
    tokens: dict[tuple[str, Any], str] = {}
    for v in possible:
        if is_number(v):
            tokens.setdefault(("number", v), f"{mark}{len(tokens)}")
    default = node.default
    if is_number(default):
        default = tokens.setdefault(("number", default), f"{mark}{len(tokens)}")
    # Back to the int where one of the token's numbers is an int, as a list's rule decodes a
    # whole number (compiler.output_types): the int 0 may be a tracr mean of one selected False,
    # which `rasp verify` takes as 0 (and 0 for a mean's 0.0), never as 0.0.
    back = {token: key[1] for key, token in tokens.items()}
    for v in [*possible, node.default]:
        if type(v) is int:
            back[tokens[("number", v)]] = v
    as_tokens = sops.MapSOp(
        fn=_Tokens(tokens), inputs=(values,), text="numbers as tokens", span=node.span, loose=True
    )
    copy = sops.AggregateSOp(
        selector=selector, sop=as_tokens, default=default, span=node.span, loose=True
    )
    return sops.MapSOp(
        fn=_Numbers(back),
        inputs=(copy,),
        text=node.name or "aggregate",
        span=node.span,
        name=node.name,
        loose=True,
    )


@dataclass(frozen=True)
class _Tokens:
    table: dict[tuple[str, Any], str]

    def __call__(self, value: Any) -> Any:
        return self.table.get(("number", value), value) if is_number(value) else value

    def __hash__(self) -> int:
        return id(self)


@dataclass(frozen=True)
class _Numbers:
    back: dict[str, Any]

    def __call__(self, value: Any) -> Any:
        return self.back.get(value, value) if isinstance(value, str) else value

    def __hash__(self) -> int:
        return id(self)


def unchecked(side: sops.SOp) -> sops.SOp:
    """`side` without the None check the lowering puts on a Comparison's sides."""
    if (
        isinstance(side, sops.MapSOp)
        and isinstance(side.fn, NoneCheck)
        and side.fn.constant is None
    ):
        return side.inputs[0]
    return side

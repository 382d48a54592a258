"""Whether a tracr mean gives None only where tracr raises: its one-key queries read position 0,
where the values are never None.

tracr's mean of one selected None is None, and of several values with a None among them an error.
`compiler.resolve` averages a stand-in number for None and maps it back to None after the mean, so
a model may output None; where None is listed among the output's values, the output is a one-hot of
every mean (289,453 parameters for make_frac_prevs of a map of make_sort_unique of a sort with
ties at N = 24, where a number is 13,630). Under `select(indices, indices, <=)` (make_frac_prevs'
scope) only the query at 0 selects one key, key 0 (`<`: the query at 1 does); every other query
selects several. Where the values are never None at position 0, a mean that is the stand-in
averaged several Nones, an error in tracr: the map back raises there too, and lists no None.

The values at position 0 are never None where their value set lists none, where a map of such
values gives None for none of them (tracr's Map gives None only for None, or where its function
returns it), or where a sort (`Select(SelectorWidth(Select(K, K, <)), indices, ==)`, a strict
order) copies values that are never None: its query at 0 always selects the least keys (tracr
raises on a None key). `compiler.resolve` writes such a sort as a mean of numbers with a marker
for its default, mapped back to None (`back_to_none`): the marker is never the mean of the sort's
values, which lie on one side of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.ranks import rank_keys, ranks_every_position, unchecked
from compiler.rewrite import ValueFacts
from rasp import sops

# a map's function is called on at most this many combinations of its inputs' values
MAX_CALLS = 10_000
_ONE_KEY_AT_FIRST = (sops.Comparison.LEQ, sops.Comparison.LT)


def one_key_only_at_first(selector: sops.Node) -> bool:
    """Whether every query that selects exactly one key selects position 0: `select(indices,
    indices, <=)` (the query at 0) or `<` (the query at 1)."""
    return (
        isinstance(selector, sops.Select)
        and selector.comparison in _ONE_KEY_AT_FIRST
        and isinstance(unchecked(selector.keys), sops.IndicesSOp)
        and isinstance(unchecked(selector.queries), sops.IndicesSOp)
    )


def never_none_first(
    node: sops.Node,
    values_of: Callable[[sops.Node], Sequence[Atom]],
    back_to_none: Callable[[sops.Node], Atom | None],
) -> bool:
    """Whether `node` is never None at position 0 of an input tracr does not raise on (module doc).
    `values_of` gives a node's value set; `back_to_none(map)`, for a map back from a mean's
    marker for None, that marker (else None)."""
    if not isinstance(node, sops.SOp):
        return False
    if None not in values_of(node):
        return True
    if not isinstance(node, sops.MapSOp):
        return False
    marker = back_to_none(node)
    if marker is not None:
        inner = node.inputs[0]
        return (
            isinstance(inner, sops.AggregateSOp)
            and _sorts_at_first(inner.selector)
            and marker not in values_of(inner.sop)
            and _one_side(marker, values_of(inner.sop))
        )
    if not all(never_none_first(i, values_of, back_to_none) for i in node.inputs):
        return False
    choices = [[v for v in values_of(i) if v is not None] for i in node.inputs]
    calls = 1
    for c in choices:
        calls *= len(c)
    if calls > MAX_CALLS:
        return False
    return all(_not_none(node.fn, args) for args in itertools.product(*choices))


def analysed_values(facts: ValueFacts) -> Callable[[sops.Node], Sequence[Atom]]:
    """The value analysis' sets, with None among them for a node it did not analyse (unknown)."""

    def values_of(node: sops.Node) -> Sequence[Atom]:
        try:
            return facts.values(node)
        except KeyError:
            return (None,)

    return values_of


def _sorts_at_first(selector: sops.Node) -> bool:
    """A sort by a strict order of its keys: the query at 0 selects the least keys, always some."""
    return rank_keys(selector) is not None and ranks_every_position(selector)  # type: ignore[arg-type]


def _one_side(marker: Atom, values: Sequence[Atom]) -> bool:
    """The marker below or above every value: no mean of them is the marker."""
    try:
        return all(v < marker for v in values) or all(v > marker for v in values)  # type: ignore[operator]
    except TypeError:
        return False


def _not_none(fn: Callable[..., Any], args: tuple[Any, ...]) -> bool:
    try:
        return fn(*args) is not None
    except Exception:  # (the program's own function: where it raises, so does the input)
        return True

"""A map of a count and the length that depends on their ratio alone: a map of one mean.

    c = selector_width(select(tokens, "a", ==));
    majority = 2 * c > length;          # or c > length / 2, or c >= length - c

is a map of two widths: compiled so, `c` and `length` are two heads whose widths an MLP decodes,
and the comparison takes a second layer (24,109 parameters at N = 256 over the tokens a and b),
where the same program written `c / length > 0.5` is one head and one step (257). Wherever the
map's value at (c, n) depends on c / n alone (the same value and type at every
0 <= c <= n <= max_len of one ratio), it is a function of the mean over every key of the
predicate's indicator (`compiler.fraction_means`, which writes that mean), and the rewrite reads
that mean through a table: the interpreter computes the mean as c / n correctly rounded, and
distinct fractions of denominators up to max_len are distinct floats, so the table keyed by the
float `c / n` gives the map's own values. A count whose select reads the query
(`2 * selector_width(select(tokens, tokens, ==)) > length`: the query's own token is a majority)
reads the query's own mean, a pick among one mean per query value, where `compiler.fraction_means`
writes such a pick for a division.

A count within a positional scope (`compiler.fraction_means`: `selector_width(select(tokens, "a",
==) and select(indices, indices, <=))`, the "a"s so far) is likewise c of the d keys the scope
selects, and a map of it, the index and the length (`2 * c > indices + 1`: "a" is the majority so
far) that depends on c / d alone reads the mean over the scope. The scope's width d is taken as
the interpreter computes it at every position of every length (at least 1 everywhere, or no
rewrite), and the map is evaluated at every (c, index, length) it may meet: every 0 <= c <= d at
each distinct (index, length, d) among those the map reads (the index alone and d = i + 1 for the
keys so far: about N^2/2 points).

A map of two counts (`2 * c1 > length and 2 * c2 > length`) is not one of one ratio; the maps
under it that each read one count are rewritten.

The map is evaluated as the interpreter applies maps, at every (c, n), also ones no input
reaches; where it raises at any, it is left as it is. A map that reads a division `c / length`
is left to the division's own rewrite in `compiler.fraction_means`. Only maps read by something
other than such maps are rewritten (the inner steps of `2 * c > length` need no rewrite), within
a budget of map applications, so that a long chain of maps costs no more than about a second.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler.blocks import Atom, exact_key
from compiler.map_values import apply_map
from compiler.rewrite import positional_nodes, positional_widths
from rasp import sops
from rasp.walks import first_visits

# (count, denominator) points a map is evaluated at (max_len = 256: 33,152; 1024: 525,824)
MAX_PAIRS = 600_000
# map applications over all candidates (about a second of Python)
MAX_EVALUATIONS = 2_000_000


@dataclass(frozen=True)
class RatioTable:
    """A map's value at each fraction c / d, keyed by that float."""

    entries: tuple[tuple[float, Atom], ...]
    _table: dict[float, Atom] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_table", dict(self.entries))

    def __call__(self, fraction: float) -> Atom:
        return self._table[fraction]  # (a KeyError for a value no count and length give)


@dataclass(frozen=True)
class RatioMap:
    """A map node that is `table(c / d)` for the count `width` of `select`, d the length
    (`scope` None) or the width of the positional `scope` the count is taken within."""

    width: sops.SelectorWidthSOp
    select: sops.Select
    table: RatioTable
    scope: sops.Selector | None = None


# a point a map is evaluated at: the values of the positional leaves it reads (index, length) by
# node id, and the denominator d; the count takes each of 0..d there
Point = tuple[tuple[tuple[int, int], ...], int]


def ratio_maps(
    order: Sequence[sops.Node],
    max_len: int,
    is_division: Callable[[sops.Node], bool],
) -> dict[int, RatioMap]:
    """Per map node of `order` (children first, the root last) that is a function of c / d
    (module doc) and is read by something else than such maps (only those need rewriting): its
    rewrite. `is_division` tells the divisions another rewrite makes means."""
    positional, _ = positional_nodes(list(order))
    counted = {  # per count of a select (within a positional scope): (select, scope)
        node.id: parts
        for node in order
        if isinstance(node, sops.SelectorWidthSOp)
        and (parts := count_parts(node.selector, positional)) is not None
    }
    # per node: the counts, indices and lengths it is computed from through maps alone (None: not
    # so, or more than one count, or the index with a count over the length)
    indices = {node.id for node in order if isinstance(node, sops.IndicesSOp)}
    leaves: dict[int, frozenset[int] | None] = {}
    for node in order:
        leaves[node.id] = _leaves(node, leaves, is_division, counted, indices)
    read_outside = {order[-1].id} if order else set()
    for node in order:
        if not (isinstance(node, sops.MapSOp) and leaves[node.id] is not None):
            read_outside.update(child.id for child in node.children())
    by_id = {node.id: node for node in order}
    points: dict[tuple[int | None, frozenset[int]], list[Point] | None] = {}
    out: dict[int, RatioMap] = {}
    budget = MAX_EVALUATIONS
    for node in order:
        found = leaves[node.id]
        if not isinstance(node, sops.MapSOp) or found is None or node.id not in read_outside:
            continue
        widths = [k for k in found if k in counted]
        if len(widths) != 1:
            continue
        width = by_id[widths[0]]
        assert isinstance(width, sops.SelectorWidthSOp)
        select, scope = counted[width.id]
        read = frozenset(found - {width.id})
        if scope is None and len(read) != 1:
            continue  # a count over the length: the map reads the length
        key = (None if scope is None else scope.id, read)
        if key not in points:
            points[key] = _points(scope, read, by_id, max_len)
        at = points[key]
        if at is None:
            continue
        steps = maps_under(node)
        budget -= len(steps) * sum(d + 1 for _, d in at)
        if budget < 0:
            break
        table = _table(steps, width, at)
        if table is not None:
            out[node.id] = RatioMap(width, select, table, scope)
    return out


def count_parts(
    selector: sops.Selector, positional: set[int]
) -> tuple[sops.Select, sops.Selector | None] | None:
    """(S, None) for `select S`; (S, P) for `S and P` (either order) with P positional and the
    select S not; else None."""
    if isinstance(selector, sops.Select):
        return selector, None
    if isinstance(selector, sops.SelectAnd):
        for inner, scope in ((selector.left, selector.right), (selector.right, selector.left)):
            if isinstance(inner, sops.Select) and inner.id not in positional:
                if scope.id in positional:
                    return inner, scope
    return None


def _leaves(
    node: sops.Node,
    known: dict[int, frozenset[int] | None],
    is_division: Callable[[sops.Node], bool],
    counted: dict[int, tuple[sops.Select, sops.Selector | None]],
    indices: set[int],
) -> frozenset[int] | None:
    """The ids of the counts (`counted`), indices (`indices`: their ids) and lengths `node` is
    computed from through maps alone, constants aside; None where it reads anything else, a
    division `is_division` rewrites, two counts, or the index with a count over the length.
    `known`: its children's."""

    def leaf(n: sops.Node) -> bool:
        return isinstance(n, sops.LengthSOp | sops.IndicesSOp) or n.id in counted

    found = map_leaves(node, known, leaf, is_division)
    if found is None:
        return None
    widths = [k for k in found if k in counted]
    if len(widths) > 1:
        return None
    if widths and counted[widths[0]][1] is None and found & indices:
        return None
    return found


def map_leaves(
    node: sops.Node,
    known: dict[int, frozenset[int] | None],
    is_leaf: Callable[[sops.Node], bool],
    is_division: Callable[[sops.Node], bool],
) -> frozenset[int] | None:
    """The ids of the leaves (`is_leaf`) `node` is computed from through maps alone, constants
    aside; None where it reads anything else or a division `is_division` rewrites. `known`: its
    children's."""
    if isinstance(node, sops.ConstSOp):
        return frozenset()
    if is_leaf(node):
        return frozenset({node.id})
    if not isinstance(node, sops.MapSOp) or is_division(node):
        return None
    parts = [known[child.id] for child in node.inputs]
    if any(part is None for part in parts):
        return None
    return frozenset().union(*parts)  # type: ignore[arg-type]


def _points(
    scope: sops.Selector | None,
    read: frozenset[int],
    by_id: dict[int, sops.Node],
    max_len: int,
) -> list[Point] | None:
    """The points a map reading a count (within `scope`) and the positional leaves `read` is
    evaluated at: (n, d = n) per length for a count over the length; per distinct (index,
    length, d) among those read, d the scope's width at each position of each length, for a
    count within a scope. None where there are more than MAX_PAIRS (count, point) pairs, or the
    scope selects no key at some position or cannot be evaluated."""
    if scope is None:
        (length,) = read
        if max_len * (max_len + 3) // 2 > MAX_PAIRS:
            return None
        return [(((length, n),), n) for n in range(1, max_len + 1)]
    index = [k for k in read if isinstance(by_id[k], sops.IndicesSOp)]
    length = [k for k in read if isinstance(by_id[k], sops.LengthSOp)]
    every = positional_widths(scope, max_len)
    if every is None:
        return None
    found: dict[Point, None] = {}
    pairs = 0
    for n, widths in enumerate(every, start=1):
        for i, d in enumerate(widths):
            if d < 1:
                return None
            env = (*((k, i) for k in index), *((k, n) for k in length))
            point = (env, d)
            if point not in found:
                found[point] = None
                pairs += d + 1
                if pairs > MAX_PAIRS:
                    return None
    return list(found)


def maps_under(node: sops.MapSOp) -> list[sops.MapSOp]:
    """The maps `node` is computed by (it last, each after its inputs): `node` and the maps
    under it, down to its counts, lengths and constants."""

    def map_inputs(current: sops.MapSOp) -> list[sops.MapSOp]:
        # (the last input walked first: the order this walk has always given)
        return [c for c in reversed(current.inputs) if isinstance(c, sops.MapSOp)]

    return list(first_visits(node, map_inputs, lambda current: current.id))


def _table(
    steps: list[sops.MapSOp], width: sops.SelectorWidthSOp, points: list[Point]
) -> RatioTable | None:
    """The last step's value per fraction c / d, where it has one (value and type) at every count
    0 <= c <= d of every point and raises at none; else None."""
    by_ratio: dict[tuple[int, int], tuple[tuple[str, str], Atom]] = {}
    for env, d in points:
        for c in range(d + 1):
            value = _evaluate(steps, {width.id: c, **dict(env)})
            if value is _RAISES:
                return None
            g = math.gcd(c, d)
            key = exact_key(value)
            known = by_ratio.setdefault((c // g, d // g), (key, value))
            if known[0] != key:
                return None
    return RatioTable(tuple((c / d, value) for (c, d), (_, value) in by_ratio.items()))


_RAISES = object()


def _evaluate(steps: list[sops.MapSOp], env: dict[int, Any]) -> Any:
    """The last step's value, each step applied as the interpreter applies maps; _RAISES where
    one raises or gives a value no sequence holds."""
    for step in steps:
        args = [
            child.value if isinstance(child, sops.ConstSOp) else env[child.id]
            for child in step.inputs
        ]
        try:
            ok, value = apply_map(step.fn, args)
        except Exception:  # noqa: BLE001 (a map the interpreter would not survive either)
            return _RAISES
        if not ok:
            return _RAISES
        env[step.id] = value
    return env[steps[-1].id]

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

from compiler.blocks import Atom
from compiler.values import apply_map
from rasp import sops

# (count, length) pairs a map is evaluated at (max_len = 256: 33,152; 1024: 525,824)
MAX_PAIRS = 600_000
# map applications over all candidates (about a second of Python)
MAX_EVALUATIONS = 2_000_000


@dataclass(frozen=True)
class RatioTable:
    """A map's value at each fraction c / n, keyed by that float."""

    entries: tuple[tuple[float, Atom], ...]
    _table: dict[float, Atom] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_table", dict(self.entries))

    def __call__(self, fraction: float) -> Atom:
        return self._table[fraction]  # (a KeyError for a value no count and length give)


@dataclass(frozen=True)
class RatioMap:
    """A map node that is `table(c / n)` for the count `width` of `select`."""

    width: sops.SelectorWidthSOp
    table: RatioTable

    @property
    def select(self) -> sops.Select:
        select = self.width.selector
        assert isinstance(select, sops.Select)  # (`_leaves` takes only a select's count)
        return select


def ratio_maps(
    order: Sequence[sops.Node],
    max_len: int,
    is_division: Callable[[sops.Node], bool],
) -> dict[int, RatioMap]:
    """Per map node of `order` (children first, the root last) that is a function of c / n
    (module doc) and is read by something else than such maps (only those need rewriting): its
    rewrite. `is_division` tells the divisions `c / length` another rewrite makes means."""
    pairs = max_len * (max_len + 3) // 2
    if pairs > MAX_PAIRS:
        return {}
    # per node: the counts and lengths it is computed from through maps alone (None: not so)
    leaves: dict[int, frozenset[int] | None] = {}
    for node in order:
        leaves[node.id] = _leaves(node, leaves, is_division)
    read_outside = {order[-1].id} if order else set()
    for node in order:
        if not (isinstance(node, sops.MapSOp) and leaves[node.id] is not None):
            read_outside.update(child.id for child in node.children())
    by_id = {node.id: node for node in order}
    out: dict[int, RatioMap] = {}
    budget = MAX_EVALUATIONS
    for node in order:
        found = leaves[node.id]
        if not isinstance(node, sops.MapSOp) or found is None or node.id not in read_outside:
            continue
        widths = [by_id[k] for k in found if isinstance(by_id[k], sops.SelectorWidthSOp)]
        lengths = [by_id[k] for k in found if isinstance(by_id[k], sops.LengthSOp)]
        if len(widths) != 1 or len(lengths) != 1:
            continue
        steps = _steps(node)
        budget -= len(steps) * pairs
        if budget < 0:
            break
        width, length = widths[0], lengths[0]
        assert isinstance(width, sops.SelectorWidthSOp) and isinstance(length, sops.LengthSOp)
        table = _table(steps, width, length, max_len)
        if table is not None:
            out[node.id] = RatioMap(width, table)
    return out


def _leaves(
    node: sops.Node,
    known: dict[int, frozenset[int] | None],
    is_division: Callable[[sops.Node], bool],
) -> frozenset[int] | None:
    """The ids of the counts (of a `select`) and lengths `node` is computed from through maps
    alone, constants aside; None where it reads anything else or a division
    `is_division` rewrites. `known`: its children's."""
    match node:
        case sops.ConstSOp():
            return frozenset()
        case sops.LengthSOp():
            return frozenset({node.id})
        case sops.SelectorWidthSOp(selector=sops.Select()):
            return frozenset({node.id})
        case sops.MapSOp() if not is_division(node):
            parts = [known[child.id] for child in node.inputs]
            if any(part is None for part in parts):
                return None
            return frozenset().union(*parts)  # type: ignore[arg-type]
    return None


def _steps(node: sops.MapSOp) -> list[sops.MapSOp]:
    """The maps `node` is computed by (it last, each after its inputs): `node` and the maps
    under it, down to its counts, lengths and constants."""
    steps: list[sops.MapSOp] = []
    done: set[int] = set()
    stack: list[tuple[sops.MapSOp, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if current.id in done:
            continue
        if expanded:
            done.add(current.id)
            steps.append(current)
            continue
        stack.append((current, True))
        stack.extend((c, False) for c in current.inputs if isinstance(c, sops.MapSOp))
    return steps


def _table(
    steps: list[sops.MapSOp],
    width: sops.SelectorWidthSOp,
    length: sops.LengthSOp,
    max_len: int,
) -> RatioTable | None:
    """The last step's value per fraction c / n, where it has one (value and type) at every
    (c, n) with 0 <= c <= n <= max_len and raises at none; else None."""
    by_ratio: dict[tuple[int, int], tuple[tuple[str, str], Atom]] = {}
    for n in range(1, max_len + 1):
        for c in range(n + 1):
            value = _evaluate(steps, {width.id: c, length.id: n})
            if value is _RAISES:
                return None
            g = math.gcd(c, n)
            key = (type(value).__name__, repr(value))
            known = by_ratio.setdefault((c // g, n // g), (key, value))
            if known[0] != key:
                return None
    return RatioTable(tuple((c / n, value) for (c, n), (_, value) in by_ratio.items()))


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

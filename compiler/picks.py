"""A count over the length whose keys depend on the query, as one mean per query value and a pick.

`selector_width(select(tokens, tokens, ==)) / length` (the fraction of the input that is the
query's own token) is a map of two widths: stepped over the count with the length as context and
decoded through a one-hot of its ~N^2/3 values, 50M parameters at N = 64. For each value v the
query takes, the count at a query q = v is the mean over every key of `indicator(k OP v)`, one
number per v, all of them averaged by one head of V value dimensions. The fraction at a query is the
mean of its own value:

    Pick(q, m_1, ..., m_V) = m_{index of q} * 1.0

`compiler.fraction_means` writes it; `compiler.pick_mlp` builds it from V one-unit MLP parts, the
value analysis (`pick_values`) takes at each (i, n) the means of the query values reachable there.
The interpreter gives `Pick` the value the division gives, c / n in float64 (compiler.fraction_means):
the same values of the same types on every input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compiler import numeric
from compiler.blocks import Atom, sort_values, value_key

# A pick over more query values than this is not written: each takes a value dimension of the
# head, a unit and a residual dimension, and a one-hot of the query.
MAX_PICKED = 32


@dataclass(frozen=True)
class Pick:
    """The mean of the query's own value: `means[k] * 1.0` where `query == queries[k]`."""

    queries: tuple[Atom, ...]
    _index: dict[Any, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {value_key(v): k for k, v in enumerate(self.queries)})

    def position(self, query: Atom) -> int | None:
        """Which mean a query value reads (None: a value the rewrite did not list)."""
        return self._index.get(value_key(query))

    def __call__(self, query: Atom, *means: Atom) -> float:
        k = self.position(query)
        if k is None:
            raise KeyError(query)  # unreachable: the query's values were listed for this compile
        return means[k] * 1.0  # the mean of one key is its int 0 or 1; c / n is a float


def pick_values(
    fn: Pick,
    pairs: Sequence[tuple[int, int]],
    query_at: Callable[[tuple[int, int]], tuple[Atom, ...]],
    mean_at: Sequence[Callable[[tuple[int, int]], tuple[Atom, ...]]],
    intern: Callable[[Any], tuple[Atom, ...]],
) -> dict[tuple[int, int], tuple[Atom, ...]]:
    """The pick's values at every (i, n) pair: the means of the query values reachable there
    (each mean over all its values there, whatever the others hold: a superset where the counts
    are related). `query_at` and `mean_at[k]` give an input's interned value set at a pair."""
    cache: dict[tuple[int, ...], tuple[Atom, ...]] = {}
    out: dict[tuple[int, int], tuple[Atom, ...]] = {}
    for p in pairs:
        queries = query_at(p)
        ks = sorted({k for k in map(fn.position, queries) if k is not None})
        sets = [mean_at[k](p) for k in ks]
        key = (id(queries), *map(id, sets))
        if key not in cache:
            cache[key] = intern({value_key(v * 1.0): v * 1.0 for s in sets for v in s}.values())
        out[p] = cache[key]
    return out


def picked_values(fn: Pick, queries: Sequence[Atom], means: Sequence[Sequence[Atom]]) -> tuple:
    """The pick's values without relations: every mean of every query value it may take."""
    ks = {k for k in map(fn.position, queries) if k is not None}
    return sort_values(v * 1.0 for k in ks for v in means[k])


def pick_error(
    means: Sequence[Sequence[Atom]], errors: Sequence[numeric.ErrorBound | None]
) -> numeric.ErrorBound:
    """A bound on a pick's float32 error (compiler.pick_mlp), given each mean's values and error:
    the largest mean error at its largest value, and the rounding of one part's pre-activation and
    of the view's sum of V terms."""
    worst, scale = 0.0, 2.0
    for values, bound in zip(means, errors, strict=True):
        top = max((abs(float(v)) for v in values), default=0.0)
        if bound is not None:
            worst = max(worst, float(bound.at(np.array([top]))[0]))
        scale = max(scale, 2.0 * top + 2.0)
    parts = numeric.preactivation_rounding(4, 2.0 * scale)
    view = (len(means) + 2) * numeric.F32_UNIT_ROUNDOFF * 2.0 * scale
    return numeric.ErrorBound(worst + parts + view)

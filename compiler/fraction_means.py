"""A count of keys over the length as a mean over every key: `c / length` in one head.

The fraction of the positions where a key-only predicate holds,

    frac_a = selector_width(select(tokens, "a", ==)) / length;

is a map of two widths. Compiled so, it is stepped over the count with the length as context
(about N^2/2 units) and its many close values need a one-hot output: 50M parameters at N = 64.
The same number is the mean over every key of the predicate's indicator,

    Map(m -> m * 1.0, aggregate(select(1, 1, ==), indicator(k OP constant)))

one head, reading each key's token. The interpreter computes both as c / n in float64, correctly
rounded (the sum of 0s and 1s is exact), and the mean of one key is its int 0 or 1, which the map
makes the float the division gives: the same values of the same types on every input. The
indicator evaluates the predicate on every key, as the selector did, so it fails where the original
does.

A whole multiple of the count over the length, `100 * c / length` (a percentage), is the mean of
the indicator times that int: the sum of 0s and a's is a * c exactly, and a * c / n is again
correctly rounded, so the values stay the same. The multiple is found by evaluating the count's
map at 0..max_len, not from its text: any map that gives the int a * c there qualifies.

A count whose predicate reads the query, `selector_width(select(tokens, tokens, ==)) / length`
(the fraction of the query's own token), is at a query q = v the count of `select(tokens, v, ==)`:
one such mean per value v the query takes, and a pick of the query's own (compiler.picks). It is
written where the queries take few values and do not depend on the position, and the comparison
raises at no (key value, query value) pair: each mean compares every key with its v, on every
input, where the original compared the keys only with the queries the input holds.

A count within a positional scope over that scope's width,

    so_far = selector_width(select(tokens, "a", ==) and select(indices, indices, <=));
    frac_prevs = so_far / (indices + 1);

(the fraction of the tokens so far that are "a", tracr's make_frac_prevs) is the mean of the same
votes over the scope `select(indices, indices, <=)`: written where the denominator, an s-op of the
position alone, is the scope's width (at least 1) at every position of every length 1..max_len, as
the interpreter computes both (they read no token). The count is then c of the d keys the mean
averages, and c / d is computed as above.

A map of the count and the length that depends on their ratio alone (`2 * c > length`) is
rewritten as a map of the same mean (compiler.ratio_maps).

`fraction_means(root, vocab, max_len)` rewrites every such division and map; `root` itself where
there is none.
The driver compiles it as an alternative and keeps it where it is proved and smaller: the output
decodes on a grid per input length (compiler.grid), and a fraction compared downstream
(`c / length > 0.5`, a step of c - 0.5 n over the two widths) may be smaller as written.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.count_signs import SignMap, count_signs
from compiler.picks import MAX_PICKED, Pick
from compiler.ratio_maps import count_parts, ratio_maps
from compiler.rewrite import (
    ValueFacts,
    positional_nodes,
    positional_values,
    positional_widths,
    rebuilt,
)
from rasp import sops
from rasp.errors import CompileError
from rasp.operators import Lifted
from rasp.written_text import shared_span, written

# (key value, query value) pairs a pick's comparison is tried on before it is written
MAX_COMPARISONS = 1_000_000


@dataclasses.dataclass(frozen=True)
class _Counted:
    """A division `weight * selector_width(select [and scope]) / denominator`: over every key
    (`scope` None, the denominator `length`) or over a positional `scope` whose width the
    denominator is meant to be (checked by `_scope_widths` before it is rewritten)."""

    select: sops.Select
    weight: int
    scope: sops.Selector | None = None
    denominator: sops.SOp | None = None


@dataclasses.dataclass(frozen=True)
class _Holds:
    """`weight` where `key OP constant` holds, else 0: a key's vote in the mean."""

    comparison: sops.Comparison
    constant: Any
    weight: int = 1

    def __call__(self, key: Any) -> int:
        return self.weight if self.comparison.apply(key, self.constant) else 0


def _as_float(mean: Any) -> float:
    return mean * 1.0  # the mean of one key is its int 0 or 1; c / n is a float


def fraction_means(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with every count over the length of a key-only predicate a mean over every key, and
    every count of a query-dependent one a pick among such means (module doc)."""
    order = list(sops.walk(root))
    positional, _ = positional_nodes(order)
    found = {node.id: _counted_select(node, max_len, positional) for node in order}
    scoped = {k: c for k, c in found.items() if c is not None and c.scope is not None}
    for k in set(scoped) - _scope_widths(scoped, max_len):
        found[k] = None
    ratios = ratio_maps(order, max_len, lambda node: found[node.id] is not None)
    signs = count_signs(order, max_len, lambda node: found[node.id] is not None)
    if not any(found.values()) and not ratios and not signs:
        return root
    selects = [c.select for c in found.values() if c is not None]
    selects += [r.select for r in ratios.values()]
    picked = _picked_queries(selects, order, vocab, max_len)
    new: dict[int, sops.Node] = {}
    for node in order:
        sign = signs.get(node.id)
        if sign is not None:
            new[node.id] = _signed(sign, node, new)
            continue
        ratio = ratios.get(node.id)
        if ratio is not None and (
            isinstance(ratio.select.queries, sops.ConstSOp) or ratio.select.id in picked
        ):
            over = "length" if ratio.scope is None else f"selector_width({ratio.scope.label})"
            text = f"{ratio.width.label} / {over}"
            values = picked.get(ratio.select.id)
            fraction = _fraction(
                ratio.select, 1, values, new, node.span, scope=ratio.scope, text=text, note=text
            )
            # what it computes, for people: not its source text alone, which it shares with the
            # fraction (graph.py would then call it by its name)
            source = _source(node)
            new[node.id] = sops.MapSOp(
                fn=ratio.table,
                inputs=(fraction,),
                text=node.label,
                span=node.span,
                name=node.name,
                note=f"{source} (a table over {text})",
            )
            continue
        counted = found[node.id]
        if counted is None or not (
            isinstance(counted.select.queries, sops.ConstSOp) or counted.select.id in picked
        ):
            new[node.id] = rebuilt(node, new)
            continue
        new[node.id] = _fraction(
            counted.select,
            counted.weight,
            picked.get(counted.select.id),
            new,
            node.span,
            scope=counted.scope,
            text=node.label,
            name=node.name,
        )
    return new[root.id]


def _signed(sign: SignMap, node: sops.MapSOp, new: dict[int, sops.Node]) -> sops.MapSOp:
    """`node`, a map of the sign of c1 - c2, as its table over the mean of the keys' votes
    (compiler.count_signs), read through the rewritten graph `new`."""
    span = node.span
    keys = [new[select.keys.id] for select in (sign.first, sign.second)]
    inputs = tuple(k for k in dict.fromkeys(keys) if isinstance(k, sops.SOp))  # one if shared
    (op1, c1), (op2, c2) = sign.votes.first, sign.votes.second
    vote = (
        f"indicator({keys[0].label} {op1.value} {c1!r}) - "
        f"indicator({keys[1].label} {op2.value} {c2!r})"
    )
    votes = sops.MapSOp(fn=sign.votes, inputs=inputs, text=vote, span=span, note=vote)
    scope = None if sign.scope is None else new[sign.scope.id]
    assert scope is None or isinstance(scope, sops.Selector)
    over = "every key" if scope is None else scope.label
    mean = sops.AggregateSOp(
        selector=_every_key(span) if scope is None else scope,
        sop=votes,
        default=0,
        span=span,
        note=f"mean of {vote} over {over}",
    )
    source = _source(node)
    return sops.MapSOp(
        fn=sign.table,
        inputs=(mean,),
        text=node.label,
        span=span,
        name=node.name,
        note=f"{source} (a table over the sign of the mean of {vote})",
    )


def _source(node: sops.Node) -> str:
    """The node's source text, or where that is a call that made more than it (a tracr library
    call's), the node rebuilt as program text (rasp.written_text)."""
    if node.span is not None and not shared_span(node):
        return node.span.shown_text()
    return written(node)


def _every_key(span: Any) -> sops.Select:
    """`select(1, 1, ==)`: every query selects every key."""
    return sops.Select(
        keys=sops.ConstSOp(value=1),
        queries=sops.ConstSOp(value=1),
        span=span,
        note="select(1, 1, ==)",
    )


def _fraction(
    select: sops.Select,
    weight: int,
    values: tuple[Atom, ...] | None,
    new: dict[int, sops.Node],
    span: Any,
    scope: sops.Selector | None = None,
    **labels: Any,
) -> sops.MapSOp:
    """`weight` times the count of `select` over the length (over the width of `scope`, where
    given): the mean of its constant query's votes, or the pick of the query's own among one such
    mean per query value (`values`), read through the rewritten graph `new`; `labels`: the map's
    text, name, note."""
    keys = new[select.keys.id]
    assert isinstance(keys, sops.SOp)
    over = None if scope is None else new[scope.id]
    assert over is None or isinstance(over, sops.Selector)
    if isinstance(select.queries, sops.ConstSOp):
        mean = _mean_of_votes(keys, select.comparison, select.queries.value, weight, span, over)
        return sops.MapSOp(fn=_as_float, inputs=(mean,), span=span, **labels)
    assert values is not None  # (a select the pick applies to)
    queries = new[select.queries.id]
    assert isinstance(queries, sops.SOp)
    means = tuple(_mean_of_votes(keys, select.comparison, v, weight, span, over) for v in values)
    return sops.MapSOp(fn=Pick(values), inputs=(queries, *means), span=span, **labels)


def _mean_of_votes(
    keys: sops.SOp,
    comparison: sops.Comparison,
    constant: Any,
    weight: int,
    span: Any,
    scope: sops.Selector | None = None,
) -> sops.AggregateSOp:
    """The mean over every key (over the keys `scope` selects, where given) of
    `weight * indicator(keys OP constant)`."""
    # (the span is the division's, for errors; the notes say what each part computes)
    vote = f"indicator({keys.label} {comparison.value} {constant!r})"
    if weight != 1:
        vote = f"{weight} * {vote}"
    votes = sops.MapSOp(
        fn=_Holds(comparison, constant, weight), inputs=(keys,), text=vote, span=span, note=vote
    )
    if scope is not None:
        return sops.AggregateSOp(
            selector=scope,
            sop=votes,
            default=0,
            span=span,
            note=f"mean of {vote} over {scope.label}",
        )
    return sops.AggregateSOp(
        selector=_every_key(span),
        sop=votes,
        default=0,
        span=span,
        note=f"mean of {vote} over every key",
    )


def _picked_queries(
    selects: list[sops.Select], order: list[sops.Node], vocab: Sequence[Atom], max_len: int
) -> dict[int, tuple[Atom, ...]]:
    """Per counted select whose queries are an s-op: the query values to pick among, where the
    pick applies (compiler.picks): the queries take at most MAX_PICKED values and do not depend
    on the position (those counts are maps of the position, embedded), and the comparison holds
    or fails without raising at every (key value, query value) pair, so that each mean, which
    compares every key with every query value, fails nowhere the original does not."""
    sites = [s for s in selects if not isinstance(s.queries, sops.ConstSOp)]
    if not sites:
        return {}
    _, moving = positional_nodes(order)
    sites = [s for s in sites if s.queries.id not in moving]
    if not sites:
        return {}
    try:
        facts = ValueFacts([n for s in sites for n in (s.keys, s.queries)], vocab, max_len)
    except CompileError:
        return {}  # the compile of the program as written reports it
    out: dict[int, tuple[Atom, ...]] = {}
    for s in sites:
        keys, queries = facts.values(s.keys), facts.values(s.queries)
        if not 0 < len(queries) <= MAX_PICKED or len(keys) * len(queries) > MAX_COMPARISONS:
            continue
        try:
            for k, q in itertools.product(keys, queries):
                s.comparison.apply(k, q)
        except Exception:  # a comparison the original may never make, on some input
            continue
        out[s.id] = tuple(queries)
    return out


def _counted_select(node: sops.Node, max_len: int, positional: set[int]) -> _Counted | None:
    """Where `node` is `a * selector_width(S) / length` (a = 1: the width itself; else a one-input
    map of it that gives the int a * w for w = 0..max_len) with S a `select(k, q, op)`, or
    `a * selector_width(S and P) / d` (either order) with P and d positional (`positional`: their
    ids) and S not: that division, its scope P unchecked; else None."""
    if not isinstance(node, sops.MapSOp) or len(node.inputs) != 2:
        return None
    fn = node.fn
    if not isinstance(fn, Lifted) or fn.fn is not operator.truediv or fn.positions != (0, 1):
        return None
    count, denominator = node.inputs
    weight: int | None = 1
    if isinstance(count, sops.MapSOp) and len(count.inputs) == 1:
        weight = _whole_multiple(count.fn, max_len)
        count = count.inputs[0]
    if weight is None or weight == 0 or not isinstance(count, sops.SelectorWidthSOp):
        return None
    parts = count_parts(count.selector, positional)
    if parts is None:
        return None
    select, scope = parts
    if scope is None:
        return _Counted(select, weight) if isinstance(denominator, sops.LengthSOp) else None
    return _Counted(select, weight, scope, denominator) if denominator.id in positional else None


def _scope_widths(scoped: dict[int, _Counted], max_len: int) -> set[int]:
    """The keys of `scoped` whose denominator is, at every position of every length 1..max_len,
    a number equal to its scope's width and at least 1, as the interpreter computes both."""
    out = set()
    for key, counted in scoped.items():
        assert counted.scope is not None and counted.denominator is not None
        widths = positional_widths(counted.scope, max_len)
        denominators = positional_values(counted.denominator, max_len)
        if widths is None or denominators is None:
            continue
        if all(
            type(d) in (int, float) and w >= 1 and d == w
            for ds, ws in zip(denominators, widths, strict=True)
            for d, w in zip(ds, ws, strict=True)
        ):
            out.add(key)
    return out


def _whole_multiple(fn: Any, max_len: int) -> int | None:
    """a where `fn(w)` is the int a * w for every width w = 0..max_len, else None."""
    try:
        outputs = [fn(w) for w in range(max_len + 1)]
    except Exception:  # a map that fails somewhere is no multiple (the original fails there)
        return None
    if not all(type(v) is int for v in outputs) or len(outputs) < 2:
        return None
    weight = outputs[1]
    if abs(weight) * max_len >= 2**53:
        return None  # the interpreter sums the votes in float64: exact only below 2^53
    return weight if all(v == weight * w for w, v in enumerate(outputs)) else None

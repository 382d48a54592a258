"""Order by digits: the width of `select(x, y, <)` over many numbers as widths over a few digits.

The prelude's `sort` counts, per query, the keys that go before it:

    selector_width(select(key, key, <) or (select(key, key, ==) and select(indices, indices, <)))

`select(key, key, <)` scores a one-hot of key against a one-hot of key, and its table `k < q` is a
triangle: over V values it has rank ~V, so the head needs d_head >= V and the residual a V-wide
one-hot. most_freq's key takes ~2N values: 713K parameters at N = 64, 9.2M at N = 256 (N^2).

Numbers compare like their ranks r among the values both sides can take (0..V-1), and ranks
compare lexicographically by their digits in a base B with B^D >= V, highest digit first:

    k < q  iff  for exactly one digit j:  d_i(r(k)) == d_i(r(q)) for every i > j,  d_j(r(k)) < d_j(r(q))

so `select(x, y, <)` selects exactly what the disjunction of D conjunctions over the digit s-ops
d_j(r(x)), d_j(r(y)) (maps, B values each) selects, and no pair twice: of two terms i > j, term i
says d_i(r(k)) < d_i(r(q)) and term j d_i(r(k)) == d_i(r(q)). `compiler.widths` sees that (a `<`
and an `==` between the same two s-ops: a contradiction it checks), so the width is the sum of D
conjunction widths, one head each reading at most D one-hots of B values: O(D V^(1/D)) dimensions
instead of O(V). Ranks make this hold for any numbers, whole or not. `>` takes each digit's `>`; `<=` and `>=` add one more term, every digit `==` (equal
ranks), which contradicts each of the others too: D + 1 widths over the same digit s-ops (cheaper
than comparing with r(q) + 1, whose digits would be maps of their own).

`sort`'s disjunction `select(x, y, <) or R`, with R a conjunction one of whose atoms is
`select(x, y, ==)`, never selects a pair twice either (`<` and `==`): its `==` becomes the
conjunction of every digit's `==` (equal ranks, equal numbers), so that each term of the order
contradicts R on the same two digit s-ops too, and the width is D + 1 conjunction widths.

`order_digits(root, vocab, max_len)` rewrites the selector of a `selector_width` when

- it is `select(x, y, op)`, op one of <, <=, >, >=, or `select(x, y, op) or R` (either order),
  op < or >, R a conjunction (ands of selects and negated selects) with the atom
  `select(x, y, ==)` reached through ands alone (the very x and y of the order); or either of
  these `and E`, E a conjunction, which every term then keeps (the BOS sort's width,
  `compiler.bos_widths`: `(... or ...) and not select(indices, 0, ==)`);
- every value of x and y (the compiler's value analysis, `compiler.rewrite.ValueFacts`) is a
  finite number, not a bool, below 2^53 in size (where the interpreter's numpy comparisons and
  Python's agree);
- no two of those values are float64 twins (0.8333333333333333 and ...34 would get different
  ranks, which a model reading x cannot tell apart);
- x and y are not both positional (a `select(indices, indices, <)` is a mask, free already);
- the order's table has at least MIN_CLASSES distinct rows (queries selecting different key
  sets): below that one-hot readings are small.

D is 2 or 3 (D + 1 <= compiler.widths.MAX_WIDTH_PARTS with R or `==`) and B the least base with
B^D >= V, chosen by the estimated size (`_digits`). The digit maps are `Digit`s (compiler.rank_digits): each finds the
rank among the analysed values by bisection (exact for the values the analysis allows, which
include every value the program can take), so the rewritten selector selects exactly the pairs
the original does. The width keeps its name, span and text; the new maps and selects have no span
(their text says what they compute: `digit 1 (base 12) of rank(-hist + indices / 64)`). The result equals the
input graph on every input over `vocab` of length 1..max_len; a graph with nothing to rewrite is
returned unchanged, the same object.

most_freq (`sort` by -filtered_freq, 2N + 1 values): 193,857 parameters at N = 64 (713,343 before)
and 743,413 at N = 256 (9,247,657 before), 3.8x for 4x the length.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Sequence

from compiler.blocks import Atom, is_number
from compiler.fits import merge_noise
from compiler.rank_digits import Digit
from compiler.rewrite import ValueFacts, positional_nodes, rebuilt
from compiler.widths import MAX_WIDTH_PARTS
from rasp import sops
from rasp.errors import CompileError

C = sops.Comparison
# Distinct rows of the order's table below which it is left a table over one-hots.
MIN_CLASSES = 32
# How many digits a rank may take: with `sort`'s ties, D + 1 conjunction widths.
DIGITS = (2, 3)
assert max(DIGITS) + 1 <= MAX_WIDTH_PARTS
# Numbers above this in size are not all exact float64s (numpy compares ints and floats as
# float64, Python exactly): left alone.
MAX_MAGNITUDE = 2.0**53
# Per comparison: the digits' strict comparison, and whether equal ranks are selected too.
_ORDERS: dict[C, tuple[C, bool]] = {
    C.LT: (C.LT, False),
    C.LEQ: (C.LT, True),
    C.GT: (C.GT, False),
    C.GEQ: (C.GT, True),
}
# A digit's one-hot costs its dims in the residual, read across the ~18N hidden units of the
# model's step MLPs; a digit's conjunction width costs one more decoding step MLP of ~2N units
# (compiler.widths) across the residual: about 7 dims' worth (most_freq, N = 16..256, measured).
_WIDTH_COST_IN_DIMS = 7


@dataclasses.dataclass(frozen=True)
class _Site:
    """A `selector_width` whose selector is `order` (select(x, y, op)) or `order or ties`, where
    the conjunction `ties` has `equal` (select(x, y, ==)) among its atoms."""

    width: sops.SelectorWidthSOp
    order: sops.Select
    ties: sops.Selector | None = None
    equal: sops.Select | None = None
    # a conjunction every term keeps: `(order or ties) and extra`
    extra: sops.Selector | None = None


@dataclasses.dataclass(frozen=True)
class _Plan:
    values: tuple[Atom, ...]  # the sorted numbers x and y can take
    strict: C
    or_equal: bool  # <= and >=: equal ranks (every digit equal) selected too
    digits: int
    base: int


def order_digits(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with every order width rewritten over digits (the module docstring); `root` itself
    if none is."""
    order = list(sops.walk(root))
    positional, _ = positional_nodes(order)
    sites = [
        site
        for node in order
        if isinstance(node, sops.SelectorWidthSOp)
        and (site := _site(node)) is not None
        and not (site.order.keys.id in positional and site.order.queries.id in positional)
    ]
    if not sites:
        return root
    try:  # x's and y's values, from the compiler's own analysis
        facts = ValueFacts([s for site in sites for s in site.order.children()], vocab, max_len)
    except CompileError:
        return root  # the compile itself reports it, in its own words
    plans = {
        site.width.id: (site, plan)
        for site in sites
        if (plan := _plan(site.order, facts)) is not None
    }
    if not plans:
        return root
    new: dict[int, sops.Node] = {}
    for node in order:
        if node.id in plans:
            new[node.id] = _rewritten(*plans[node.id], new)
        else:
            new[node.id] = rebuilt(node, new)
    return new[root.id]


def _site(width: sops.SelectorWidthSOp) -> _Site | None:
    selector = width.selector
    if isinstance(selector, sops.SelectAnd):  # `(order or ties) and extra`, extra a conjunction
        for core, extra in ((selector.left, selector.right), (selector.right, selector.left)):
            site = _core_site(width, core)
            if site is not None and _is_conjunction(extra):
                return dataclasses.replace(site, extra=extra)
        return None
    return _core_site(width, selector)


def _core_site(width: sops.SelectorWidthSOp, selector: sops.Selector) -> _Site | None:
    if isinstance(selector, sops.Select):
        return _Site(width, selector) if selector.comparison in _ORDERS else None
    if not isinstance(selector, sops.SelectOr):
        return None
    for order, ties in ((selector.left, selector.right), (selector.right, selector.left)):
        if not isinstance(order, sops.Select) or order.comparison not in (C.LT, C.GT):
            continue
        equal = next(
            (
                atom
                for atom in _and_atoms(ties)
                if isinstance(atom, sops.Select)
                and atom.comparison is C.EQ
                and atom.keys is order.keys
                and atom.queries is order.queries
            ),
            None,
        )
        if equal is not None and _is_conjunction(ties):
            return _Site(width, order, ties, equal)
    return None


def _and_atoms(selector: sops.Node) -> list[sops.Node]:
    """The selectors `selector` is the conjunction of, through ands alone."""
    if isinstance(selector, sops.SelectAnd):
        return [*_and_atoms(selector.left), *_and_atoms(selector.right)]
    return [selector]


def _is_conjunction(selector: sops.Node) -> bool:
    """Ands of selects and negated selects: one term of compiler.widths."""
    return all(
        isinstance(a, sops.Select)
        or (isinstance(a, sops.SelectNot) and isinstance(a.inner, sops.Select))
        for a in _and_atoms(selector)
    )


def _plan(select: sops.Select, facts: ValueFacts) -> _Plan | None:
    """The digits for `select`, when its sides' values allow them and the rewrite pays."""
    keys, queries = facts.values(select.keys), facts.values(select.queries)
    if not keys or not queries or not all(_plain_number(v) for v in (*keys, *queries)):
        return None
    key_set = sorted(set(keys))  # type: ignore[type-var]  (1 and 1.0 are one number)
    values = tuple(sorted(set(keys) | set(queries)))  # type: ignore[type-var]
    strict, or_equal = _ORDERS[select.comparison]
    # query q selects the keys below bisect_left(keys, q) for < and >=, bisect_right for <= and >
    side = bisect.bisect_left if select.comparison in (C.LT, C.GEQ) else bisect.bisect_right
    rows = {side(key_set, q) for q in set(queries)}  # type: ignore[call-overload]
    if len(rows) < MIN_CLASSES:
        return None
    if len(merge_noise(values)) < len(values):
        # float64 twins (0.8333333333333333 and ...34) would get different ranks, which no float32
        # model can tell apart: the width over the select itself reads them as one number, and
        # refuses in the user's own words where the interpreter's result depends on which it is
        return None
    digits, base = _digits(len(values))
    return _Plan(values, strict, or_equal, digits, base)


def _plain_number(value: Atom) -> bool:
    return (
        is_number(value)
        and math.isfinite(value)  # type: ignore[arg-type]
        and abs(value) < MAX_MAGNITUDE  # type: ignore[arg-type]
    )


def _digits(count: int) -> tuple[int, int]:
    """(D, B) for `count` ranks, by the estimated size: first the heads' width (the widest term
    reads every digit's one-hot: digit j takes min(B, ceil(count / B^j)) values; plus 2, rounded up
    to a power of 4 as compiler.assemble does), then those one-hots' dims plus
    _WIDTH_COST_IN_DIMS per digit; D = 2 on a tie."""
    best: tuple[tuple[int, int, int], int, int] | None = None
    for d in DIGITS:
        b = _root_up(count, d)
        dims = sum(min(b, -(-count // b**j)) for j in range(d))
        head = 4 ** math.ceil(math.log(dims + 2, 4))
        score = (head, dims + d * _WIDTH_COST_IN_DIMS, d)
        if best is None or score < best[0]:
            best = (score, d, b)
    assert best is not None
    return best[1], best[2]


def _root_up(count: int, d: int) -> int:
    """The least base b with b^d >= count."""
    b = max(2, math.ceil(count ** (1.0 / d)))
    while b**d < count:
        b += 1
    while b > 2 and (b - 1) ** d >= count:
        b -= 1
    return b


def _rewritten(site: _Site, plan: _Plan, new: dict[int, sops.Node]) -> sops.SelectorWidthSOp:
    """The width over the digit selectors (children already rebuilt in `new`)."""
    x, y = new[site.order.keys.id], new[site.order.queries.id]
    assert isinstance(x, sops.SOp) and isinstance(y, sops.SOp)

    def digit_maps(sop: sops.SOp) -> list[sops.MapSOp]:
        return [
            sops.MapSOp(
                fn=Digit(plan.values, plan.base**j, plan.base),
                inputs=(sop,),
                text=f"digit {j} (base {plan.base}) of rank",
                name=f"{sop.name}_digit{j}" if sop.name else None,
            )
            for j in range(plan.digits)
        ]

    key_digits = digit_maps(x)
    query_digits = key_digits if x is y else digit_maps(y)
    equal = [
        sops.Select(keys=k, queries=q, comparison=C.EQ)
        for k, q in zip(key_digits, query_digits, strict=True)
    ]
    terms = [
        _all(
            [
                *equal[j + 1 :][::-1],
                sops.Select(keys=key_digits[j], queries=query_digits[j], comparison=plan.strict),
            ]
        )
        for j in reversed(range(plan.digits))
    ]
    if plan.or_equal:
        terms.append(_all(equal[::-1]))
    if site.ties is not None:
        assert site.equal is not None
        terms.append(_with_equal(site.ties, site.equal, _all(equal[::-1]), new))
    if site.extra is not None:  # (a or b) and e: every term keeps e, and no pair is counted twice
        extra = new[site.extra.id]
        assert isinstance(extra, sops.Selector)
        terms = [sops.SelectAnd(left=term, right=extra) for term in terms]
    selector: sops.Selector = terms[-1]
    for term in reversed(terms[:-1]):
        selector = sops.SelectOr(left=term, right=selector)
    return dataclasses.replace(site.width, selector=selector)


def _all(selectors: list[sops.Selector]) -> sops.Selector:
    out = selectors[-1]
    for s in reversed(selectors[:-1]):
        out = sops.SelectAnd(left=s, right=out)
    return out


def _with_equal(
    ties: sops.Selector, equal: sops.Select, digits: sops.Selector, new: dict[int, sops.Node]
) -> sops.Selector:
    """`ties` (rebuilt) with its atom `equal` replaced by the digits' conjunction."""
    if ties is equal:
        return digits
    if isinstance(ties, sops.SelectAnd):
        left = _with_equal(ties.left, equal, digits, new)
        right = _with_equal(ties.right, equal, digits, new)
        return dataclasses.replace(ties, left=left, right=right)
    out = new[ties.id]
    assert isinstance(out, sops.Selector)
    return out

"""The BOS trick as a width: a mean that only counts the keys selected with key 0 becomes a map of
`selector_width`s.

The original RASP (and the paper's BOS programs) count with

    aggregate(sel or K, indicator(indices == 0))        K = select(indices, 0, ==)

which selects w >= 1 keys, key 0 always, of which only key 0 holds a non-zero value v0: the mean is
v0 (w = 1, the value itself) or float(v0) / w. Compiled as a mean, the head reads `sel or K` as one
atom over joint readings of every s-op the disjunction reads (the paper's sort by frequency: (hist,
repeat, indices), 2N^2 columns, 86M parameters at N = 40), and the maps above it (`round(1 / mean)
- 1`) step over a mean whose values crowd together. As

    Map(r -> v0 if r + k == 1 else float(v0) / (r + k), selector_width(sel and not K))

where k is K's width (the same at every position and length; otherwise K's width is a second
input), the keys K does not select are counted by one head per conjunction of `sel and not K`
(`compiler.widths`: one head for a conjunction, inclusion–exclusion for a disjunction), and the
maps above become one step MLP over that width.

`bos_widths(root, vocab, max_len)` rewrites an `AggregateSOp` A = aggregate(S, x) (not tracr's
`bools_as_numbers` mean) where S is `sel or K` (either order) with K positional and sel not, when at
every length 1..max_len, as the interpreter computes them (positional nodes read no token):

- K selects key 0 for every query;
- x depends only on positions, is a number (not a bool, not 0) at key 0, the same v0 at every
  length, and 0 (a number) at every other key.

Then S's width is |sel and not K| + |K| (disjoint), and the interpreter's A is v0 where one key is
selected and float(v0) / w where w >= 2 are (the sum of v0 and zeros is exact): the map gives the
same values of the same types on every input. It fails exactly where the original does: sel and K
are the original nodes, both evaluated, and x, no longer evaluated, never fails (it was computed at
every length). A graph with nothing to rewrite is returned unchanged, the same object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, is_number
from compiler.rewrite import positional_nodes, rebuilt
from rasp import sops
from rasp.errors import RaspError


@dataclasses.dataclass(frozen=True)
class _BosMean:
    """The interpreter's mean of v0 and w - 1 zeros, w = rest + first (the keys selected besides
    K's, and K's, which include key 0)."""

    v0: int | float

    def __call__(self, rest: int, first: int) -> Atom:
        width = rest + first
        if width == 1:
            return self.v0
        return float(self.v0) / width  # (never 0: key 0 is always selected)


@dataclasses.dataclass(frozen=True)
class _BosMeanOf:
    """`_BosMean` where K selects the same number of keys everywhere: one width, not two."""

    v0: int | float
    first: int

    def __call__(self, rest: int) -> Atom:
        return _BosMean(self.v0)(rest, self.first)


def bos_widths(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with every BOS-trick mean a map of a width (the module docstring); `root` if none."""
    order = list(sops.walk(root))
    positional, _ = positional_nodes(order)
    candidates = {  # aggregate -> K, the positional side of its `sel or K`
        node.id: k
        for node in order
        if isinstance(node, sops.AggregateSOp)
        and not node.bools_as_numbers
        and not node.loose
        and node.sop.id in positional
        and (k := _positional_side(node.selector, positional)) is not None
    }
    if not candidates or not vocab:
        return root
    found: dict[int, int | float] = dict.fromkeys(candidates, 0)
    first_width: dict[int, int | None] = {}  # K's width where it is one number everywhere
    # one length at a time (an evaluator keeps every matrix it computes: N x N each)
    for n in range(1, max_len + 1):
        if not found:
            break
        probe = _Probe(n, vocab)
        for node in order:
            if node.id not in found:
                continue
            assert isinstance(node, sops.AggregateSOp)
            v0 = probe.only_key0_value(node.sop)
            seen = found[node.id]
            if (
                v0 is None
                or (n > 1 and (type(v0) is not type(seen) or v0 != seen))
                or not probe.selects_key0(candidates[node.id])
            ):
                del found[node.id]
            else:
                found[node.id] = v0
                widths = set(probe.widths(candidates[node.id]))
                if n == 1:
                    first_width[node.id] = widths.pop()
                elif widths != {first_width[node.id]}:
                    first_width[node.id] = None  # K's width varies: a second input
    if not found:
        return root
    new: dict[int, sops.Node] = {}
    for node in order:
        if node.id not in found:
            new[node.id] = rebuilt(node, new)
            continue
        assert isinstance(node, sops.AggregateSOp) and isinstance(node.selector, sops.SelectOr)
        first = candidates[node.id]
        sel = node.selector.right if first is node.selector.left else node.selector.left
        k, rest = new[first.id], new[sel.id]
        assert isinstance(k, sops.Selector) and isinstance(rest, sops.Selector)
        label = f"{node.name}_" if node.name else ""
        # what the widths count, for people: they share the mean's span, so graph.py would
        # otherwise describe them by generated names (`selector_width(_and_1)`, in a causal
        # refusal located at the mean)
        rest_width = sops.SelectorWidthSOp(
            selector=sops.SelectAnd(left=rest, right=sops.SelectNot(inner=k)),
            span=node.span,
            name=f"{label}rest" if label else None,
            note=f"selector_width({sel.label} and not {first.label})",
        )
        constant = first_width.get(node.id)
        fn: _BosMean | _BosMeanOf = (
            _BosMean(found[node.id]) if constant is None else _BosMeanOf(found[node.id], constant)
        )
        inputs: tuple[sops.SOp, ...] = (
            (
                rest_width,
                sops.SelectorWidthSOp(
                    selector=k, span=node.span, note=f"selector_width({first.label})"
                ),
            )
            if constant is None
            else (rest_width,)
        )
        new[node.id] = sops.MapSOp(
            fn=fn,
            inputs=inputs,
            text=f"the mean of {found[node.id]!r} over the widths",
            span=node.span,
            name=node.name,
        )
    return new[root.id]


def _positional_side(selector: sops.Node, positional: set[int]) -> sops.Selector | None:
    """K where `selector` is `sel or K` (either order), K positional and sel not."""
    if not isinstance(selector, sops.SelectOr) or selector.id in positional:
        return None
    for side in (selector.right, selector.left):
        if side.id in positional:
            return side
    return None


class _Probe:
    """Positional nodes at one length, as the interpreter computes them (they read no token)."""

    def __init__(self, n: int, vocab: Sequence[Atom]) -> None:
        self.evaluator = sops.Evaluator([vocab[0]] * n, compiling=True)

    def only_key0_value(self, sop: sops.SOp) -> int | float | None:
        """v0 where `sop` is v0 (a number, not 0) at key 0 and 0 (a number) elsewhere."""
        try:
            column = list(self.evaluator.seq(sop).values)
        except RaspError:
            return None
        v0 = column[0]
        if not is_number(v0) or v0 == 0 or any(not is_number(v) or v != 0 for v in column[1:]):
            return None
        return v0  # type: ignore[return-value]

    def widths(self, selector: sops.Selector) -> list[int]:
        """The keys `selector` selects per query at this length (`selector` is positional)."""
        return [int(w) for w in np.asarray(self.evaluator.matrix(selector)).sum(axis=1)]

    def selects_key0(self, selector: sops.Selector) -> bool:
        """Whether every query of this length selects key 0 (`selector` is positional)."""
        try:
            matrix = self.evaluator.matrix(selector)
        except RaspError:
            return False
        return bool(np.asarray(matrix)[:, 0].all())

"""A select one side of which is the same at every position of an input: the other side matters
only through whether the comparison holds.

In `select(k, q, op)` where k holds one value c at every position of an input (a constant, tracr's
`Full(False)`, the length, maps of them, or an s-op the value analysis gives one value:
`Map(lambda x: 0, tokens)`), query i selects every key where `c op q[i]` holds and none where it
fails: a predicate of the query alone. Read as it is, the head compares a one-hot of every value
q takes with c, although only whether `c op q` holds matters: a tracr mean with a None among its
values (which the selectors' class readings, over numbers, cannot split) took 2,202 columns and
a 4,403-unit MLP at N = 5, 19.8M parameters (mixed_encodings_campaign seed 780314, #163).
`constant_sides` rewrites it into

    select(True, holds, ==)   with   holds = map((k, q) -> k op q, k, q)

a bool per query, which the map planners compute from q's own sources (a few step units where q
is a map of a number). Where q is the side that is the same at every position (a key-only select,
`select(m, 0, ==)`), into `select(holds, True, ==)` alike.

The two selects are equal on every input, cell by cell: with k the same at every position,
cell (i, j) of the original is `k[j] op q[i]` = `k[i] op q[i]` = holds[i], and of the rewrite
`True == holds[i]` = holds[i] (`Comparison.apply` gives a bool; the interpreter's select compares
with Python's operators, as the map does). They fail on the same inputs: the original fails
where some cell's comparison raises, that is where `c op q[i]` raises at some position i, which
is where the map raises. Aggregates and widths over the select are kept as they are, so their
values, defaults and errors are the interpreter's own; the model of the rewritten graph is
certified as any other (nothing about the rewrite is trusted by the certifier: it checks the
head against `select(True, holds, ==)` and the MLP against `holds`).

Only where the other side is worth it: it reads the tokens (a select of the position alone is a
known matrix already), is not the tokens themselves (whose one-hot the embedding writes anyway),
and has at least MIN_VALUES values; a constant side is kept inside the map's function (a
one-input map, as key-only predicates are read: `compiler.count_keys`), any other uniform side as
the map's first input. A graph with nothing to rewrite is returned unchanged, the same object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.rewrite import ValueFacts, positional_nodes, rebuilt
from rasp import sops
from rasp.errors import CompileError

# A side with fewer values is read as its one-hot, which is narrow, and may be read so anyway:
# a map to a bool would cost an MLP (and maybe a layer) for a few columns.
MIN_VALUES = 8


@dataclasses.dataclass(frozen=True)
class Compared:
    """`key OP query` of a select, as a map of (key, query)."""

    comparison: sops.Comparison

    def __call__(self, key: Any, query: Any) -> bool:
        return self.comparison.apply(key, query)

    def structure(self) -> tuple[str, sops.Comparison]:  # compiler.dedupe: one node per spelling
        return ("compared", self.comparison)


@dataclasses.dataclass(frozen=True)
class ComparedWith:
    """`key OP query` with one side the constant `value`, as a map of the other side."""

    comparison: sops.Comparison
    value: Atom
    value_is_key: bool

    def __call__(self, other: Any) -> bool:
        if self.value_is_key:
            return self.comparison.apply(self.value, other)
        return self.comparison.apply(other, self.value)

    def structure(self) -> tuple[Any, ...] | None:
        try:
            hash(self.value)
        except TypeError:
            return None
        # 1, 1.0 and True compare alike but are three constants: keyed by type too
        return ("compared with", self.comparison, type(self.value), self.value, self.value_is_key)


def constant_sides(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with each select one side of which is the same at every position of an input
    compared through a bool of the other side (the module docstring); `root` itself if none."""
    order = list(sops.walk(root))
    positional, _ = positional_nodes(order)
    uniform = _per_input(order)
    # select id -> (the uniform side's index: 0 keys, 1 queries; whether it is known uniform)
    sites: dict[int, tuple[int, bool]] = {}
    for node in order:
        if not isinstance(node, sops.Select) or node.keys is node.queries:
            continue
        for side, (same, other) in enumerate(
            ((node.keys, node.queries), (node.queries, node.keys))
        ):
            if other.id in positional or isinstance(other, sops.TokensSOp):
                continue  # a known matrix, or a one-hot the embedding writes
            if same.id in uniform:
                sites[node.id] = (side, True)
            elif same.id not in positional and not isinstance(same, sops.TokensSOp):
                sites[node.id] = (side, False)  # one value? the value analysis says
            if node.id in sites:
                break
    if not sites or not vocab:
        return root
    selects = {node.id: node for node in order if node.id in sites}
    asked = []
    for select_id, (side, _) in sites.items():
        select = selects[select_id]
        assert isinstance(select, sops.Select)
        asked += [select.keys, select.queries]
    try:
        facts = ValueFacts(asked, vocab, max_len)
    except CompileError:
        return root  # the compile itself reports it, in its own words
    kept: dict[int, int] = {}
    for select_id, (side, known) in sites.items():
        select = selects[select_id]
        assert isinstance(select, sops.Select)
        same, other = (select.keys, select.queries)[side], (select.queries, select.keys)[side]
        if (known or len(facts.values(same)) == 1) and len(facts.values(other)) >= MIN_VALUES:
            kept[select_id] = side
    if not kept:
        return root
    new: dict[int, sops.Node] = {}
    for node in order:
        side = kept.get(node.id)
        if side is None:
            new[node.id] = rebuilt(node, new)
            continue
        assert isinstance(node, sops.Select)
        new[node.id] = _through_bool(node, side, new)
    return new[root.id]


def _through_bool(node: sops.Select, side: int, new: dict[int, sops.Node]) -> sops.Select:
    """`node` as `select(True, holds, ==)` (uniform keys, side 0) or `select(holds, True, ==)`."""
    keys, queries = new[node.keys.id], new[node.queries.id]
    assert isinstance(keys, sops.SOp) and isinstance(queries, sops.SOp)
    same, other = (keys, queries) if side == 0 else (queries, keys)
    text = f"{node.keys.label} {node.comparison.value} {node.queries.label}"
    labels: dict[str, Any] = {"text": text, "span": node.span, "note": text}
    if isinstance(same, sops.ConstSOp):
        fn = ComparedWith(node.comparison, same.value, value_is_key=side == 0)
        holds = sops.MapSOp(fn=fn, inputs=(other,), **labels)
    else:
        holds = sops.MapSOp(fn=Compared(node.comparison), inputs=(keys, queries), **labels)
    true = sops.ConstSOp(value=True, span=node.span)
    if side == 0:
        return dataclasses.replace(node, keys=true, queries=holds, comparison=sops.Comparison.EQ)
    return dataclasses.replace(node, keys=holds, queries=true, comparison=sops.Comparison.EQ)


def _per_input(order: list[sops.Node]) -> set[int]:
    """Nodes the same at every position of an input: constants, the length and maps of them."""
    out: set[int] = set()
    for node in order:
        if isinstance(node, (sops.LengthSOp, sops.ConstSOp)) or (
            isinstance(node, sops.MapSOp) and node.inputs and all(c.id in out for c in node.inputs)
        ):
            out.add(node.id)
    return out

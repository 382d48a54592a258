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
and has at least MIN_VALUES values. Which selects qualify is read off a few inputs first (every
short one, a few random ones: `_Probes`), and only what they leave open goes to the compiler's
value analysis: that a side not built from constants and the length holds one value (the proof
the rewrite rests on), and how many values the other side has where the inputs showed fewer (a
tracr mean that fails on most inputs shows few; the head would read every value the analysis
lists). A constant side is kept inside the map's function (a one-input map, as key-only
predicates are read: `compiler.count_keys`), any other as the map's first input. A graph with
nothing to rewrite is returned unchanged, the same object.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.rewrite import ValueFacts, positional_nodes, rebuilt
from rasp import sops
from rasp.atoms import atom_key
from rasp.errors import CompileError, RaspError

# A side with fewer values is read as its one-hot, which is narrow, and may be read so anyway:
# a map to a bool would cost an MLP (and maybe a layer) for a few columns.
MIN_VALUES = 8
# inputs of each kind (every short one, random ones) the sides are tried on
PROBE_INPUTS = 32


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
    # select id -> (the same side's index: 0 keys, 1 queries; whether it is known to be the same)
    sites: dict[int, tuple[sops.Select, int, bool]] = {}
    for node in order:
        if not isinstance(node, sops.Select) or node.keys is node.queries:
            continue
        for side, (same, other) in enumerate(
            ((node.keys, node.queries), (node.queries, node.keys))
        ):
            if other.id in positional or isinstance(other, sops.TokensSOp):
                continue  # a known matrix, or a one-hot the embedding writes
            if same.id in uniform or not (
                same.id in positional or isinstance(same, sops.TokensSOp)
            ):
                sites[node.id] = (node, side, same.id in uniform)
                break
    if not sites or not vocab:
        return root
    # Which sides to rewrite is read off a few inputs first (the value analysis of a program's
    # every select side at N = 256 took seconds): a side not known to be the same everywhere must
    # show one value there, and the other side MIN_VALUES (worth it; not needed for soundness).
    # The value analysis then proves the one value, and counts the other side's values where the
    # inputs showed fewer (they show a map of the tokens' every value; a mean that fails on most
    # inputs few of the values the analysis lists, and the head would read them all).
    seen = _Probes(vocab, max_len)
    # (every input of length 1 is among them where the vocabulary has at most PROBE_INPUTS tokens)
    local = _token_local(order) if len(vocab) <= PROBE_INPUTS else set()
    chosen: dict[int, tuple[sops.SOp, sops.SOp, bool]] = {}
    asked: list[sops.SOp] = []
    for select_id, (select, side, known) in sites.items():
        same, other = (select.keys, select.queries)[side], (select.queries, select.keys)[side]
        few = seen.count(other) < MIN_VALUES
        if (few and other.id in local) or (not known and seen.count(same) != 1):
            continue
        chosen[select_id] = (same, other, few)
        asked += [same] if not known else []
        asked += [other] if few else []
    if not chosen:
        return root
    facts = None
    if asked:
        try:
            facts = ValueFacts(asked, vocab, max_len)
        except CompileError:
            return root  # the compile itself reports it, in its own words
    kept: dict[int, int] = {}
    for select_id, (same, other, few) in chosen.items():
        select, side, known = sites[select_id]
        if not known and (facts is None or len(facts.values(same)) != 1):
            continue
        if few and (facts is None or len(facts.values(other)) < MIN_VALUES):
            continue
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


class _Probes:
    """The distinct values s-ops take on a few inputs: every input of lengths 1, 2, ... while
    they are at most PROBE_INPUTS in all, and PROBE_INPUTS random ones up to max_len (one seed:
    a compile is deterministic). An input an s-op fails on adds nothing."""

    def __init__(self, vocab: Sequence[Atom], max_len: int) -> None:
        inputs: list[list[Atom]] = []
        for n in range(1, max_len + 1):
            if len(inputs) + len(vocab) ** n > PROBE_INPUTS:
                break
            inputs += [list(t) for t in itertools.product(vocab, repeat=n)]
        rng = random.Random(0)
        for _ in range(PROBE_INPUTS):
            n = rng.randint(1, max_len)
            inputs.append([rng.choice(vocab) for _ in range(n)])
        self.evaluators = [sops.Evaluator(xs) for xs in inputs]
        self._counts: dict[int, int] = {}

    def count(self, sop: sops.SOp) -> int:
        if sop.id not in self._counts:
            found = set()
            for evaluator in self.evaluators:
                try:
                    found.update(atom_key(v) for v in evaluator.seq(sop).values)
                except RaspError:
                    continue
            self._counts[sop.id] = len(found)
        return self._counts[sop.id]


def _through_bool(node: sops.Select, side: int, new: dict[int, sops.Node]) -> sops.Select:
    """`node` as `select(True, holds, ==)` (uniform keys, side 0) or `select(holds, True, ==)`."""
    keys, queries = new[node.keys.id], new[node.queries.id]
    assert isinstance(keys, sops.SOp) and isinstance(queries, sops.SOp)
    same, other = (keys, queries) if side == 0 else (queries, keys)
    # (a constant as the program wrote it: `m > 0`, not its label `(0)`)
    text = f"{_side_text(node.keys)} {node.comparison.value} {_side_text(node.queries)}"
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


def _side_text(sop: sops.SOp) -> str:
    """A select side as the bool's text names it: a constant as the program wrote it (`0`,
    `"a"`, `1 / 5`), by its value where no source shows it."""
    if isinstance(sop, sops.ConstSOp) and not sop.name:
        if sop.span is not None:
            return sop.span.shown_text()
        return f'"{sop.value}"' if isinstance(sop.value, str) else str(sop.value)
    return sop.label


def _token_local(order: list[sops.Node]) -> set[int]:
    """Nodes whose value at a position is a function of that position's token alone: the tokens,
    constants and maps of them (every input of length 1 shows each of their values)."""
    return _maps_of(order, (sops.TokensSOp, sops.ConstSOp))


def _per_input(order: list[sops.Node]) -> set[int]:
    """Nodes the same at every position of an input: constants, the length and maps of them."""
    return _maps_of(order, (sops.LengthSOp, sops.ConstSOp))


def _maps_of(order: list[sops.Node], base: tuple[type, ...]) -> set[int]:
    """Nodes of a `base` type and maps (of at least one input) of such nodes only."""
    out: set[int] = set()
    for node in order:
        if isinstance(node, base) or (
            isinstance(node, sops.MapSOp) and node.inputs and all(c.id in out for c in node.inputs)
        ):
            out.add(node.id)
    return out

"""Value-set inference: every value each node can take, for inputs over `vocab` of length 1..N.

Sets are exact or over-approximations (never under): tokens are the conversions of the vocabulary,
indices 0..N-1, length 1..N, a map is its function over the product of its inputs' sets (a combination
where the function raises is dropped: the interpreter errors there, so the promise does not cover it),
an aggregate is its values, its default and, when several keys can be selected, every mean the
interpreter can compute; selector_width is 0..N (1..N where every query selects a key). (A map's
values: `compiler.map_values`.)

Relational refinement: a node that depends only on indices, length and constants gets its value at
every (index i, length n) with i < n, so `length - indices - 1` has the values 0..N-1, not -N..N. An
aggregate whose selector depends only on positions knows how many keys each query selects, so its
possible values are known per (i, n) too (`aggregate(select(indices, indices, <=), x)` at i is a mean of
exactly i+1 values), and maps of such nodes combine them per (i, n) instead of over the full product.
An aggregate whose keys depend on tokens but whose source has a relation has one per length (its
means at length n lie within the source's bounds there: `compiler.means`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compiler.blocks import Atom, sort_values
from compiler.count_keys import selects_equal_values, selects_one_by_count
from compiler.graph import Graph, IRNode, Op
from compiler.map_failures import map_failure
from compiler.map_values import MapValues
from compiler.means import MeanValues
from compiler.relations import (
    Known,
    Relation,
    already_reported,
    is_window,
    width_bound,
)
from compiler.selector_cases import decided_matrix, row_ranges
from compiler.token_values import token_values
from compiler.token_views import held_value
from compiler.total_orders import selects_one_by_rank
from compiler.uniform import equality_key, is_uniform, keys_differ
from compiler.width_sweep import Sweep, sweep
from rasp import sops
from rasp.errors import CompileError, Diagnostic, ErrorKind
from rasp.seqvalues import value_repr


@dataclass(frozen=True)
class ValueSets:
    """Per node (by `IRNode.index`): its possible values, sorted; per-position relations where known."""

    max_len: int
    values: tuple[tuple[Atom, ...], ...]
    relation: tuple[Relation | None, ...]
    at_most_one: tuple[bool, ...]  # selectors: provably selects <= 1 key for every query
    looks_back: tuple[
        bool, ...
    ] = ()  # selectors: provably selects only keys at or before the query
    # selectors: provably selects at least one key for every query of every input, so an
    # aggregate over it never takes its default (`Op.AGGREGATE`'s value sets leave it out)
    never_empty: tuple[bool, ...] = ()
    # what the planners derive from these sets and the graph they were inferred from alone, kept
    # for every build planned from them (compiler.map_rows: a map's reachable rows, the same in
    # each of the builds compiler.alternatives tries; not an init field, so `replace` starts afresh)
    memo: dict[Any, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def of(self, node: IRNode) -> tuple[Atom, ...]:
        return self.values[node.index]


def infer_values(graph: Graph, vocab: Sequence[Atom], max_len: int) -> ValueSets:
    """Value sets of every node; one CompileError listing every node that cannot be analysed."""
    return _Inference(graph, vocab, max_len).run()


class _Inference:
    """Visits the nodes in topological order; what it learns goes into `known` (relations.Known),
    which the map and aggregate analyses (`map_values`, `means`) read too."""

    def __init__(self, graph: Graph, vocab: Sequence[Atom], max_len: int) -> None:
        self.g, self.vocab, self.n_max = graph, vocab, max_len
        self.known = Known(graph, max_len)
        self.means = MeanValues(self.known)
        self.maps = MapValues(graph, self.known)
        self.at_most_one: list[bool] = []
        self.looks_back: dict[int, bool] = {}
        self.failed: set[int] = set()  # nodes already reported (or depending on one)
        self.lower: dict[int, bool] = {}  # positional selectors: no key after its query
        self.uniform: list[bool] = []  # one value at every position (selectors: query-blind)
        self.never_empty: list[bool] = []  # ValueSets.never_empty
        self.least_widths: dict[int, bool] = {}  # selectors with >= 1 key per row (selector_widths)
        self.diagonal: dict[int, bool] = {}  # selectors whose cases must select key i at query i
        self.own_keys: list[bool] = []  # selectors: `selects_own_key`

    def run(self) -> ValueSets:
        known = self.known
        for node in self.g.nodes:
            rel: Relation | None = None
            vals: tuple[Atom, ...] = ()
            single = False
            match node.op:
                case Op.TOKENS:
                    reported = len(known.problems)
                    vals = token_values(node, self.vocab, known.problems)
                    if len(known.problems) > reported:  # said once (a built-in has no span)
                        self.failed.add(node.index)
                case Op.INDICES | Op.LENGTH:
                    one = [known.intern([k]) for k in range(self.n_max + 1)]  # [k] -> (k,)
                    at = 0 if node.op is Op.INDICES else 1
                    rel = {p: one[p[at]] for p in known.pairs}
                case Op.CONST:
                    rel = dict.fromkeys(known.pairs, known.intern([node.value]))
                case Op.MAP:
                    rel, vals = self.maps.map_values(node)
                case Op.SELECT | Op.AND | Op.OR | Op.NOT:
                    widths = self.selector_widths(node)
                    known.widths[node.index] = widths
                    bound = widths if widths is not None else width_bound(node, known)
                    if bound is not None:
                        known.width_bounds[node.index] = bound
                    back = [self.looks_back[i] for i in node.inputs if self.g[i].op.is_selector]
                    self.looks_back[node.index] = self.lower.get(node.index, False) or (
                        (node.op is Op.AND and any(back)) or (node.op is Op.OR and all(back))
                    )
                    ranges = known.width_ranges.get(node.index)
                    single = (
                        (widths is not None and max(widths.values(), default=0) <= 1)
                        or (
                            ranges is not None
                            and max(int(hi.max()) for _, hi in ranges.values()) <= 1
                        )
                        or (node.op is Op.SELECT and _selects_at_most_one(node, known.relation))
                        or (node.op is Op.SELECT and self.keys_differ(node))
                        or (node.op is Op.AND and any(self.at_most_one[i] for i in node.inputs))
                        # long addition's nearest carry
                        or selects_one_by_count(self.g, node, known.values.__getitem__)
                        or selects_one_by_rank(self.g, node, known.values.__getitem__)  # a sort
                    )
                case Op.AGGREGATE if any(
                    isinstance(v, int) and abs(v) >= FLOAT64_END
                    for v in known.values[node.inputs[1]]
                ):
                    pass  # reported at its values, whose means no float holds (OverflowError)
                case Op.AGGREGATE:
                    selector, sop = node.inputs
                    # every key selected holds one value (`select(tokens, "2", ==)` over
                    # `tokens_int`: 2, whatever the query), or the query's (the keys of the
                    # largest or smallest x): either way they average copies of one value.
                    # So do the keys of a uniform s-op (`compiler.uniform`: on one input every
                    # position holds the same value, of one type, as `value_key` tells them
                    # apart), whatever the selector: k of them average to what `copy_means`
                    # enumerates for k copies (float64 adds from 0, or an int's exact sum).
                    # One with a relation keeps its per-length sets (`length * 0.1`).
                    held = held_value(self.g, selector, sop, known.values.__getitem__, self.vocab)
                    rel, vals = self.means.aggregate_values(
                        node,
                        single_selector=self.at_most_one[selector],
                        default_taken=not self.never_empty[selector],
                        equal_values=held is not None
                        or selects_equal_values(self.g, selector, sop, known.values.__getitem__)
                        or uniform_keys_average_copies(self.uniform[sop], known.relation[sop]),
                        held=held,
                    )
                    if rel is not None and selector in known.width_ranges:
                        rel = self.default_where_empty(rel, selector, node.value)
                case Op.SELECTOR_WIDTH:
                    widths = known.widths.get(node.inputs[0])
                    if widths is not None:
                        rel = {p: known.intern([w]) for p, w in widths.items()}
                    elif self.at_most_one[node.inputs[0]]:
                        vals = (0, 1)  # `select(indices, 0, ==) and ...`: one key at most
                    elif node.inputs[0] in known.width_bounds and is_window(
                        known.width_bounds[node.inputs[0]], self.n_max
                    ):
                        # a conjunction with a window (`select(indices, indices - 3, >)` and
                        # `<=`): at most its keys, not 0..N
                        bound = known.width_bounds[node.inputs[0]]
                        ranges = [known.intern(list(range(b + 1))) for b in range(self.n_max + 1)]
                        rel = {p: ranges[b] for p, b in bound.items()}
                    else:
                        vals = tuple(range(self.n_max + 1))
                    if node.inputs[0] in known.width_ranges:
                        rel = self.narrowed_widths(node.inputs[0], rel, vals) or rel
                    if self.never_empty[node.inputs[0]]:
                        # never 0 where every query selects a key (its own: `select(tokens,
                        # tokens, ==)`); a 0 made make_sort's keys hist + i/N hold twins no
                        # input gives
                        rel, vals = self.without_zero(rel, vals)
            if rel is not None:
                vals = sort_values(v for group in _by_id(rel).values() for v in group)
            if (
                node.index in self.failed
                or any(i in self.failed for i in node.inputs)
                or already_reported(node, known.problems)
            ):
                self.failed.add(node.index)  # reported here or at an input: nothing more to say
            elif (beyond := _beyond_float64(vals)) is not None:
                self.failed.add(node.index)
                known.problems.append(
                    Diagnostic(
                        f"'{node.text}' can be {beyond}, which no model holds",
                        node.span,
                        "the compiler reads numbers as float64, whose range ends at 1.8e308 (a "
                        "result past it is inf, and inf - inf is nan): the interpreter carries "
                        "such numbers on, but weights and the model file hold finite float64 "
                        "numbers only; use smaller numbers",
                    )
                )
            elif not node.op.is_selector and (not vals or _fails_at_every_length(rel, self.n_max)):
                self.failed.add(node.index)
                known.problems.append(self.fails_everywhere(node, rel))
            elif node.op is Op.SELECT and (pair := self.compares_nowhere(node)) is not None:
                self.failed.add(node.index)
                known.problems.append(
                    Diagnostic(
                        f"'{node.text}' fails on every input of length 1..{self.n_max}: "
                        f"no key value orders against a query value ({value_repr(pair[0])} "
                        f"{node.comparison.value if node.comparison else '?'} {value_repr(pair[1])})",
                        node.span,
                        "the interpreter raises an error here for every input, so there is "
                        "nothing to compile: compare values of one kind (strings with strings, "
                        "numbers with numbers)",
                        kind=ErrorKind.EVALUATION,
                    )
                )
            known.values.append(vals)
            known.relation.append(rel)
            self.at_most_one.append(single)
            self.own_keys.append(node.op.is_selector and self.selects_own_key(node))
            self.never_empty.append(node.op.is_selector and self.selects_some(node))
            self.uniform.append(is_uniform(node, self.uniform, rel))
        if known.problems:
            raise CompileError(known.problems)
        return ValueSets(
            self.n_max,
            tuple(known.values),
            tuple(known.relation),
            tuple(self.at_most_one),
            tuple(self.looks_back.get(i, False) for i in range(len(known.values))),
            tuple(self.never_empty),
        )

    def fails_everywhere(self, node: IRNode, rel: Relation | None) -> Diagnostic:
        """The refusal of a node the interpreter fails at on every input; a map's says which call
        fails and why (`map_failure`), as the interpreter's own error would."""
        message = f"'{node.text}' fails on every input of length 1..{self.n_max}"
        hint = (
            "the interpreter raises an error here for every input, so there is nothing to compile"
        )
        if node.op is Op.MAP:
            known = self.known
            failure = map_failure(self.g, node, rel, known.relation, known.values)
            if failure is not None:
                message = f"{message}: {failure[0]}"
                hint = f"{hint}; it fails where {failure[1]}"
        return Diagnostic(message, node.span, hint, kind=ErrorKind.EVALUATION)

    def compares_nowhere(self, node: IRNode) -> tuple[Atom, Atom] | None:
        """A (key, query) pair of values when no key value of the select compares with any query
        value without raising (`select(tokens, 1, <)` over letters): every input has a position,
        so the interpreter raises on each. None where some pair compares. Whether Python's
        comparison raises depends only on the two values' types here, so one value of each type
        stands for its kind."""
        assert node.comparison is not None
        sides: list[dict[type, Atom]] = [{}, {}]
        for side, i in zip(sides, node.inputs, strict=True):
            for v in self.known.values[i]:
                side.setdefault(type(v), v)  # the first value of each type
        first: tuple[Atom, Atom] | None = None
        for k in sides[0].values():
            for q in sides[1].values():
                try:
                    node.comparison.apply(k, q)
                except TypeError:
                    first = first or (k, q)
                    continue
                return None
        return first

    def selects_some(self, node: IRNode) -> bool:
        """Whether the selector selects at least one key for every query of every input: its cases
        say so at every row (`selector_widths`), each query selects its own key
        (`selects_own_key`), or one of a disjunction's sides selects some."""
        if self.least_widths.get(node.index, False) or self.own_keys[node.index]:
            return True
        return node.op is Op.OR and any(self.never_empty[i] for i in node.inputs)

    def selects_own_key(self, node: IRNode) -> bool:
        """Whether each query selects its own key on every input: its cases say so on the
        diagonal (`select(indices, indices, <=)`), it compares an s-op with itself by `==`, `<=`
        or `>=` (nan, which is not equal to itself, excluded), or it is a conjunction of such
        selectors (`select(tokens, tokens, ==) and select(indices, indices, <=)`, which the
        cases, pairing the sides' values independently, do not see) or a disjunction with one."""
        if self.diagonal.get(node.index, False):
            return True
        if node.op is Op.AND:
            return all(self.own_keys[i] for i in node.inputs)
        if node.op is Op.OR:
            return any(self.own_keys[i] for i in node.inputs)
        reflexive = (sops.Comparison.EQ, sops.Comparison.LEQ, sops.Comparison.GEQ)
        if node.op is Op.SELECT and node.inputs[0] == node.inputs[1]:
            vals = self.known.values[node.inputs[0]]
            return node.comparison in reflexive and not any(
                isinstance(v, float) and math.isnan(v) for v in vals
            )
        return False

    def keys_differ(self, node: IRNode) -> bool:
        """An EQ select whose keys differ at every position given the uniform s-ops they read
        (`compiler.uniform`): InterpBench's "invert if sorted" target positions."""
        if node.comparison is not sops.Comparison.EQ:
            return False
        known = self.known
        return keys_differ(
            self.g,
            node.inputs[0],
            self.uniform,
            known.relation,
            known.values.__getitem__,
            self.n_max,
        )

    # -- selectors --------------------------------------------------------------------------------

    def selector_widths(self, node: IRNode) -> dict[tuple[int, int], int] | None:
        """Keys selected per (query i, length n), when the selector's sides decide it on every
        input (positions alone, or values that never or always compare true); where they decide
        some rows only, the least and most keys per (i, n) go to `known.width_ranges`."""
        cases_of = self.known.cases
        if cases_of.uniform(node.index):  # alike everywhere: decided everywhere or nowhere
            cell = cases_of.at(node.index, 1)
            if cell is None or bool(cell[0].any()) != bool(cell[1].any()):
                self.lower[node.index] = self.n_max == 1
                return None
        if cases_of.prefix_stable(node.index, self.n_max):
            at_max = cases_of.at(node.index, self.n_max)
            if at_max is not None:  # (None: unknown at every length, cheap below)
                return self._swept(node, sweep(at_max, self.n_max))  # O(N^2), not O(N^3)
        lows, highs = {}, {}
        lower, decided, some_row, diagonal = True, True, False, True
        for n in range(1, self.n_max + 1):
            cases = cases_of.at(node.index, n)
            diagonal = diagonal and cases is not None and bool(_diagonal(cases[1], n).all())
            m = decided_matrix(cases, n)
            if m is not None:
                lows[n] = highs[n] = m.sum(axis=1)  # [n]
                lower = lower and not np.triu(m, 1).any()
                some_row = True
                continue
            decided = False
            lows[n], highs[n] = row_ranges(cases, n)
            some_row = some_row or bool((lows[n] == highs[n]).any())
            can = None if cases is None else np.broadcast_to(cases[0], (n, n))
            lower = lower and can is not None and not np.triu(can, 1).any()
        self.lower[node.index] = lower
        self.least_widths[node.index] = all(int(low.min()) >= 1 for low in lows.values())
        self.diagonal[node.index] = diagonal
        if decided:
            return {(i, n): int(lows[n][i]) for i, n in self.known.pairs}
        if some_row:
            self.known.width_ranges[node.index] = {n: (lows[n], highs[n]) for n in lows}
        return None

    def _swept(self, node: IRNode, swept: Sweep) -> dict[tuple[int, int], int] | None:
        """`selector_widths` from the sweep of a prefix-stable selector."""
        self.lower[node.index] = swept.lower
        self.least_widths[node.index] = swept.least_widths
        self.diagonal[node.index] = swept.diagonal
        if swept.decided:
            return {(i, n): int(swept.lows[n][i]) for i, n in self.known.pairs}
        if swept.some_row:
            self.known.width_ranges[node.index] = {
                n: (swept.lows[n], swept.highs[n]) for n in swept.lows
            }
        return None

    def narrowed_widths(
        self, selector: int, rel: Relation | None, vals: tuple[Atom, ...]
    ) -> Relation | None:
        """The width's values per (i, n) within the keys `selector` can select there
        (`known.width_ranges`: 0 where it selects none on any input); None where that removes
        at most one value from the width's values (a prefix's i + 1 at i = N - 1: the models of
        such widths keep their 0..N)."""
        known = self.known
        ranges = known.width_ranges[selector]
        union = {v for group in _by_id(rel).values() for v in group} if rel is not None else vals
        covered = np.zeros(self.n_max + 2, dtype=np.int64)  # what some row's range holds
        for lo, hi in ranges.values():
            np.add.at(covered, lo, 1)
            np.add.at(covered, hi + 1, -1)
        held = np.flatnonzero(np.cumsum(covered) > 0)
        if len(set(held.tolist()) & set(union)) >= len(union) - 1:
            return None  # (cheap: most selectors stop here)
        out: dict[tuple[int, int], tuple[Atom, ...]] = {}
        cut: dict[tuple[int, int, int], tuple[Atom, ...]] = {}
        for i, n in known.pairs:
            lo, hi = int(ranges[n][0][i]), int(ranges[n][1][i])
            before = vals if rel is None else rel[(i, n)]
            key = (lo, hi, id(before))
            if key not in cut:
                cut[key] = known.intern([v for v in before if lo <= v <= hi])  # type: ignore[operator]
            out[(i, n)] = cut[key]
        kept = {v for group in _by_id(out).values() for v in group}
        return out if len(kept) < len(union) - 1 else None

    def without_zero(
        self, rel: Relation | None, vals: tuple[Atom, ...]
    ) -> tuple[Relation | None, tuple[Atom, ...]]:
        """A width's relation or values without 0 (its selector selects a key for every query;
        a set of 0 alone, which no sound analysis gives there, is left as it is)."""
        if rel is None:
            return None, tuple(v for v in vals if v != 0) or vals
        cut: dict[int, tuple[Atom, ...]] = {}
        for vs in _by_id(rel).values():
            cut[id(vs)] = self.known.intern([v for v in vs if v != 0]) if len(vs) > 1 else vs
        return {p: cut[id(vs)] for p, vs in rel.items()}, vals

    def default_where_empty(self, rel: Relation, selector: int, default: Atom) -> Relation:
        """An aggregate's relation with the default alone where its selector selects no key on
        any input (`known.width_ranges`)."""
        only = self.known.intern([default])
        ranges = self.known.width_ranges[selector]
        return {(i, n): only if ranges[n][1][i] == 0 else vs for (i, n), vs in rel.items()}


def _diagonal(must: np.ndarray, n: int) -> np.ndarray:
    """Whether query i must select key i, per i, from a (broadcastable) [n, n] `must`."""
    return np.broadcast_to(must, (n, n)).diagonal()


def _by_id(rel: Relation) -> dict[int, tuple[Atom, ...]]:
    return {id(v): v for v in rel.values()}


def _selects_at_most_one(node: IRNode, relation: Sequence[Relation | None]) -> bool:
    """An EQ select whose keys differ at every position (e.g. `indices`) selects at most one key.
    "Differ" as `==` compares them: 1, 1.0 and True at two positions (`indices / 2` beside
    `indices`) are one key for the select, although the value analysis keeps them apart."""
    if node.comparison is not sops.Comparison.EQ:
        return False
    keys = relation[node.inputs[0]]
    if keys is None:
        return False
    by_length: dict[int, set] = {}
    for (i, n), vs in keys.items():
        if len(vs) != 1:
            return False
        compared = equality_key(vs[0])
        seen = by_length.setdefault(n, set())
        if compared is None or compared in seen:
            return False
        seen.add(compared)
    return True


def _beyond_float64(values: tuple[Atom, ...]) -> str | None:
    """A number among `values` that float64 does not hold, described: an infinite or NaN float
    (`tokens_float * 2` of 1e308), or a whole number past its range (`10 ^ 309`)."""
    for v in values:
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        if isinstance(v, int) and abs(v) >= FLOAT64_END:
            return f"a whole number of {len(str(abs(v)))} digits"
    return None


FLOAT64_END = 2**1024  # the first whole number float() refuses (OverflowError)


def _fails_at_every_length(rel: Relation | None, max_len: int) -> bool:
    """Whether, at every length, some position has no value at all (`n / indices`: at index 0 of
    every input): the interpreter then fails on every input, although other positions have values."""
    if rel is None:
        return False
    failing = {n for (_, n), values in rel.items() if not values}
    return len(failing) == max_len


def uniform_keys_average_copies(uniform: bool, relation: object) -> bool:
    """Whether a mean's keys, of an s-op `uniform` on every input with per-length `relation`,
    average copies of one value (`_Inference`'s aggregates: `copy_means`' values, not every mean
    of the s-op's values). A function of its own so that tests of refusals written over means of
    counts can still reach them (`tests/compiler/loose_sums.py`)."""
    return uniform and relation is None

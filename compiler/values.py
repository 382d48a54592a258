"""Value-set inference: every value each node can take, for inputs over `vocab` of length 1..N.

Sets are exact or over-approximations (never under): tokens are the conversions of the vocabulary,
indices 0..N-1, length 1..N, a map is its function over the product of its inputs' sets (a combination
where the function raises is dropped: the interpreter errors there, so the promise does not cover it),
an aggregate is its values, its default and, when several keys can be selected, every mean the
interpreter can compute; selector_width is 0..N.

Relational refinement: a node that depends only on indices, length and constants gets its value at
every (index i, length n) with i < n, so `length - indices - 1` has the values 0..N-1, not -N..N. An
aggregate whose selector depends only on positions knows how many keys each query selects, so its
possible values are known per (i, n) too (`aggregate(select(indices, indices, <=), x)` at i is a mean of
exactly i+1 values), and maps of such nodes combine them per (i, n) instead of over the full product.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler.blocks import Atom, sort_values, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.means import MeansMixin, already_reported
from rasp import sops
from rasp.errors import CompileError, Diagnostic, RaspError

MAX_MAP_COMBINATIONS = 8_000_000  # input combinations a map's table may enumerate

# Exceptions the interpreter turns into a runtime error for a map (see `rasp.sops.Evaluator._map`).
_MAP_ERRORS = (ArithmeticError, TypeError, ValueError, KeyError, IndexError, RaspError)

# (index i, length n) -> the values a node can take there (interned tuples), for every i < n <= N.
Relation = Mapping[tuple[int, int], tuple[Atom, ...]]


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

    def of(self, node: IRNode) -> tuple[Atom, ...]:
        return self.values[node.index]


def infer_values(graph: Graph, vocab: Sequence[Atom], max_len: int) -> ValueSets:
    """Value sets of every node; one CompileError listing every node that cannot be analysed."""
    return _Inference(graph, vocab, max_len).run()


class _Inference(MeansMixin):
    def __init__(self, graph: Graph, vocab: Sequence[Atom], max_len: int) -> None:
        self.g, self.vocab, self.n_max = graph, vocab, max_len
        self.pairs = [(i, n) for n in range(1, max_len + 1) for i in range(n)]
        self.values: list[tuple[Atom, ...]] = []
        self.relation: list[Relation | None] = []
        self.widths: dict[
            int, dict[tuple[int, int], int] | None
        ] = {}  # selector -> keys selected per (i, n)
        self.at_most_one: list[bool] = []
        self.looks_back: dict[int, bool] = {}
        self.failed: set[int] = set()  # nodes already reported (or depending on one)
        self.lower: dict[int, bool] = {}  # positional selectors: no key after its query
        self.problems: list[Diagnostic] = []
        self._interned: dict[tuple, tuple[Atom, ...]] = {}
        self._sums: dict[tuple[float, ...], list[set[float]]] = {}
        self._means: dict[tuple[tuple[float, ...], int], tuple[Atom, ...]] = {}

    def intern(self, vals: Any) -> tuple[Atom, ...]:
        t = sort_values(vals)
        return self._interned.setdefault(tuple(value_key(v) for v in t), t)

    def run(self) -> ValueSets:
        for node in self.g.nodes:
            rel: Relation | None = None
            vals: tuple[Atom, ...] = ()
            single = False
            match node.op:
                case Op.TOKENS:
                    vals = _token_values(node, self.vocab, self.problems)
                case Op.INDICES:
                    rel = {(i, n): self.intern([i]) for i, n in self.pairs}
                case Op.LENGTH:
                    rel = {(i, n): self.intern([n]) for i, n in self.pairs}
                case Op.CONST:
                    rel = dict.fromkeys(self.pairs, self.intern([node.value]))
                case Op.MAP:
                    rel, vals = self.map_values(node)
                case Op.SELECT | Op.AND | Op.OR | Op.NOT:
                    widths = self.selector_widths(node)
                    self.widths[node.index] = widths
                    back = [self.looks_back[i] for i in node.inputs if self.g[i].op.is_selector]
                    self.looks_back[node.index] = self.lower.get(node.index, False) or (
                        (node.op is Op.AND and any(back)) or (node.op is Op.OR and all(back))
                    )
                    single = (
                        (widths is not None and max(widths.values(), default=0) <= 1)
                        or (node.op is Op.SELECT and _selects_at_most_one(node, self.relation))
                        or (node.op is Op.AND and any(self.at_most_one[i] for i in node.inputs))
                    )
                case Op.AGGREGATE:
                    rel, vals = self.aggregate_values(
                        node, single_selector=self.at_most_one[node.inputs[0]]
                    )
                case Op.SELECTOR_WIDTH:
                    widths = self.widths.get(node.inputs[0])
                    if widths is not None:
                        rel = {p: self.intern([w]) for p, w in widths.items()}
                    else:
                        vals = tuple(range(self.n_max + 1))
            if rel is not None:
                vals = sort_values(v for group in _by_id(rel).values() for v in group)
            if any(i in self.failed for i in node.inputs) or already_reported(node, self.problems):
                self.failed.add(node.index)  # reported here or at an input: nothing more to say
            elif not node.op.is_selector and not vals:
                self.failed.add(node.index)
                self.problems.append(
                    Diagnostic(
                        f"'{node.text}' fails on every input of length 1..{self.n_max}",
                        node.span,
                        "the interpreter raises an error here for every input, so there is nothing to compile",
                    )
                )
            self.values.append(vals)
            self.relation.append(rel)
            self.at_most_one.append(single)
        if self.problems:
            raise CompileError(self.problems)
        return ValueSets(
            self.n_max,
            tuple(self.values),
            tuple(self.relation),
            tuple(self.at_most_one),
            tuple(self.looks_back.get(i, False) for i in range(len(self.values))),
        )

    # -- maps -------------------------------------------------------------------------------------

    def map_values(self, node: IRNode) -> tuple[Relation | None, tuple[Atom, ...]]:
        assert node.fn is not None
        size = combination_count(node.inputs, self.relation, self.values)
        if size > MAX_MAP_COMBINATIONS:
            self.problems.append(
                Diagnostic(
                    f"'{node.text}' would need a table of {size} input combinations "
                    f"(limit {MAX_MAP_COMBINATIONS})",
                    node.span,
                    "reduce the vocabulary or max length, or split the expression into maps of fewer s-ops",
                )
            )
            return None, ()
        if not all(self.relation[i] is not None for i in node.inputs):
            outs = [
                out
                for ok, out in (
                    apply_map(node.fn, a)
                    for a in input_combinations(node.inputs, self.relation, self.values)
                )
                if ok
            ]
            return None, sort_values(outs)
        cache: dict[tuple[int, ...], tuple[Atom, ...]] = {}
        results: dict[tuple, tuple[bool, Atom]] = {}  # the function per distinct arguments
        rel: dict[tuple[int, int], tuple[Atom, ...]] = {}
        for p in self.pairs:
            sets = [self.relation[i][p] for i in node.inputs]  # type: ignore[index]
            key = tuple(map(id, sets))
            if key not in cache:
                outs = []
                for args in itertools.product(*sets):
                    arg_key = tuple(value_key(a) for a in args)
                    if arg_key not in results:
                        results[arg_key] = apply_map(node.fn, args)
                    ok, out = results[arg_key]
                    if ok:
                        outs.append(out)
                cache[key] = self.intern(outs)
            rel[p] = cache[key]
        return rel, ()

    # -- selectors and aggregates -----------------------------------------------------------------

    def selector_widths(self, node: IRNode) -> dict[tuple[int, int], int] | None:
        """Keys selected per (query i, length n), when the selector depends only on positions."""
        matrices = {}
        lower = True
        for n in range(1, self.n_max + 1):
            m = self._matrix(node.index, n)
            if m is None:
                return None
            matrices[n] = m.sum(axis=1)  # [n]
            lower = lower and not np.triu(m, 1).any()
        self.lower[node.index] = lower
        return {(i, n): int(matrices[n][i]) for i, n in self.pairs}

    def _matrix(self, index: int, n: int) -> np.ndarray | None:
        node = self.g[index]
        match node.op:
            case Op.SELECT:
                keys, queries = (self._column(i, n) for i in node.inputs)
                if keys is None or queries is None:
                    return None
                assert node.comparison is not None
                return _compare_matrix(node.comparison, keys, queries)
            case Op.NOT:
                inner = self._matrix(node.inputs[0], n)
                return None if inner is None else ~inner
            case Op.AND | Op.OR:
                left, right = (self._matrix(i, n) for i in node.inputs)
                if left is None or right is None:
                    return None
                return (left & right) if node.op is Op.AND else (left | right)
        return None

    def _column(self, index: int, n: int) -> list[Atom] | None:
        rel = self.relation[index]
        if rel is None or any(len(rel[(i, n)]) != 1 for i in range(n)):
            return None
        return [rel[(i, n)][0] for i in range(n)]


def _by_id(rel: Relation) -> dict[int, tuple[Atom, ...]]:
    return {id(v): v for v in rel.values()}


def _compare_matrix(
    comparison: sops.Comparison, keys: list[Atom], queries: list[Atom]
) -> np.ndarray:
    """[n_query, n_key] of `key OP query`, vectorised when both sides are numbers (or both strings)."""
    kinds = {isinstance(v, str) for v in (*keys, *queries)}
    if len(kinds) == 1:
        k, q = np.array(keys)[None, :], np.array(queries)[:, None]
        return np.asarray(sops._COMPARE[comparison](k, q), dtype=bool)
    rows = [[_safe_compare(comparison, k, q) for k in keys] for q in queries]
    return np.array(rows, dtype=bool).reshape(len(queries), len(keys))


def _safe_compare(comparison: sops.Comparison, key: Atom, query: Atom) -> bool:
    try:
        return comparison.apply(key, query)
    except TypeError:
        return False


def _token_values(
    node: IRNode, vocab: Sequence[Atom], problems: list[Diagnostic]
) -> tuple[Atom, ...]:
    assert node.kind is not None
    convert = sops._TOKEN_CONVERT[node.kind]
    out = []
    for raw in vocab:
        try:
            out.append(convert(raw))
        except (TypeError, ValueError):
            problems.append(
                Diagnostic(
                    f"the vocabulary token {raw!r} cannot be read as tokens_{node.kind.value}",
                    node.span,
                    f"compile with a vocabulary whose every token converts with {node.kind.value}()",
                )
            )
    return sort_values(out)


def combination_count(
    inputs: Sequence[int],
    relation: Sequence[Relation | None],
    values: Sequence[tuple[Atom, ...]],
) -> int:
    """An upper bound on len(input_combinations(...)), cheap to compute."""
    distinct = list(dict.fromkeys(inputs))
    rel = [i for i in distinct if relation[i] is not None]
    size = int(np.prod([len(values[i]) for i in distinct if relation[i] is None]))
    if rel:
        groups = {
            tuple(id(relation[i][p]) for i in rel): [relation[i][p] for i in rel]  # type: ignore[index]
            for p in relation[rel[0]]
        }  # type: ignore[union-attr]
        size *= sum(int(np.prod([len(s) for s in sets])) for sets in groups.values())
    return size


def input_combinations(
    inputs: Sequence[int],
    relation: Sequence[Relation | None],
    values: Sequence[tuple[Atom, ...]],
) -> list[tuple[Atom, ...]]:
    """Every combination of input values that can occur at one position (related inputs jointly)."""
    distinct = list(dict.fromkeys(inputs))
    rel = [i for i in distinct if relation[i] is not None]
    free = [i for i in distinct if relation[i] is None]
    joint: list[tuple[Atom, ...]] = [()]
    if rel:
        groups = {
            tuple(id(relation[i][p]) for i in rel): [relation[i][p] for i in rel]  # type: ignore[index]
            for p in relation[rel[0]]
        }  # type: ignore[union-attr]
        seen: dict[tuple, tuple[Atom, ...]] = {}
        for sets in groups.values():
            for row in itertools.product(*sets):
                seen.setdefault(tuple(value_key(v) for v in row), row)
        joint = list(seen.values())
    out = []
    for row in joint:
        for rest in itertools.product(*(values[i] for i in free)):
            env = dict(zip(rel, row)) | dict(zip(free, rest))
            out.append(tuple(env[i] for i in inputs))
    return out


def apply_map(fn: Any, args: Sequence[Atom]) -> tuple[bool, Atom]:
    """(True, fn(*args)) when the interpreter would accept it, else (False, None)."""
    try:
        out = fn(*args)
    except _MAP_ERRORS:
        return False, None
    if sops.type_of_value(out) is None:
        return False, None
    return True, out


def _selects_at_most_one(node: IRNode, relation: Sequence[Relation | None]) -> bool:
    """An EQ select whose keys differ at every position (e.g. `indices`) selects at most one key."""
    if node.comparison is not sops.Comparison.EQ:
        return False
    keys = relation[node.inputs[0]]
    if keys is None:
        return False
    by_length: dict[int, set] = {}
    for (i, n), vs in keys.items():
        if len(vs) != 1:
            return False
        seen = by_length.setdefault(n, set())
        if value_key(vs[0]) in seen:
            return False
        seen.add(value_key(vs[0]))
    return True

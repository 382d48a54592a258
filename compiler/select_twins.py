"""A select's table over float64 twins: the outcome their meetings share, or a refusal.

A categorical reading of numbers lists one value per run of float64 twins (`fits.merge_noise`:
0.6666666666666664 ... 0.6666666666666669, one 2/3 summed in different orders), and a float32
model reads every twin of a run as that one column. A select's table entry for two columns then
stands for every pair of their twins that can meet, and must be the interpreter's outcome for
each. Compared as the listed twins, it was not: with v2 = 0.6666666666666666 and v4's run of 2/3
listed as ...669, `select(v2, v4, <)` held in the table, and the model selected keys on "aba",
where both are 0.6666666666666666 and the interpreter selects none.

So an entry is the outcome shared by the pairs of twins that can meet: both can occur at one
length (the value analysis's per-(position, length) relation, where the s-op has one; else at
every length). Where those outcomes differ (on "aaaba" v4 is 0.8000000000000002 beside v2's 0.8,
and the interpreter selects; where it computes v4 as 0.8 it does not), no float32 model gives
the interpreter's result on every input, and the select is refused, located, as
`fits.merge_points` refuses a map whose output differs between twins. A pair without twins
compares as Python does (`safe_compare`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from compiler.blocks import Atom, value_key
from compiler.fits import FLOAT64_NOISE, noise_clusters
from compiler.graph import IRNode, Op
from compiler.plan_context import PlanContext
from compiler.plan_state import Built
from compiler.selector_cases import compare_matrix, safe_compare
from compiler.twin_gaps import Gap, gap, gap_words
from rasp import sops
from rasp.errors import CompileError, Diagnostic

Compare = Callable[[Atom, Atom], bool]  # (key value, query value) -> the select holds


class TwinTables:
    """Per s-op, the runs of float64 twins among its values and the lengths each twin occurs at;
    per select, the comparison its table is written with (`compare`)."""

    def __init__(self, ctx: PlanContext, built: Built | None = None) -> None:
        self.ctx, self.built = ctx, built
        self._runs: dict[int, dict[tuple, tuple[Atom, ...]]] = {}
        self._apart: dict[int, bool] = {}
        self._shared: dict[int, _Entries] = {}  # per select: its entries with every run shared
        self._lengths: dict[int, dict[tuple, frozenset[int]] | None] = {}
        self._compare: dict[int, Compare] = {}
        self._entries: dict[int, _Entries] = {}

    def compare(self, node: IRNode) -> Compare:
        """`key OP query` of select `node` as its table holds it, for the values its readings
        list; raises CompileError where the twins of a listed pair that can meet disagree. The
        twins of a side read apart (`apart`) compare as themselves, while its readings list each
        in a column of its own (`_matrix` and `joint_compare` check that)."""
        if node.index not in self._compare:
            k_index, q_index = node.inputs
            if not self.runs(k_index) and not self.runs(q_index):
                assert node.comparison is not None
                self._compare[node.index] = partial(safe_compare, node.comparison)
            else:
                self._entries[node.index] = entries = _Entries(self, node)
                self._compare[node.index] = entries.holds
        return self._compare[node.index]

    def rows(
        self, node: IRNode, values: Sequence[Atom], others: Sequence[Atom], side: int
    ) -> list[tuple[bool, ...]]:
        """Per value v of `values` (the keys where `side` is 0, else the queries), `compare(node)`
        of v against each of `others`, as `[tuple(compare(v, o) ...) ...]` (or `compare(o, v)`)
        gives them, raising as that loop raises: one table over all pairs at once."""
        if not values or not others:  # (compare_matrix takes an empty side for numbers)
            return [() for _ in values]
        keys, queries = (values, others) if side == 0 else (others, values)
        table = self._matrix(node, keys, queries)
        compare = self.compare(node)  # (after `_matrix`: twins it finds not read apart, shared)
        if table is None:  # twins disagree somewhere: the loop raises at the first, located
            if side == 0:
                return [tuple(compare(v, o) for o in others) for v in values]
            return [tuple(compare(o, v) for o in others) for v in values]
        return [tuple(row) for row in (table.T if side == 0 else table).tolist()]

    def table(self, node: IRNode, keys: Sequence[Atom], queries: Sequence[Atom]) -> np.ndarray:
        """[n_query, n_key] of `compare(node)(key, query)`, as a loop over the pairs gives it
        (raising as it raises), vectorised where it can be: a Python loop over the 25M pairs of
        `select(tokens, tokens, ==)` with 5,000 tokens took 30 s per plan."""
        table = self._matrix(node, keys, queries) if keys and queries else None
        compare = self.compare(node)  # (after `_matrix`: twins it finds not read apart, shared)
        if table is None:  # an empty side, or twins disagree somewhere: the loop (raising)
            rows = [[compare(k, q) for k in keys] for q in queries]
            return np.array(rows, dtype=bool).reshape(len(queries), len(keys))
        return np.asarray(table, dtype=bool).reshape(len(queries), len(keys))

    def _matrix(
        self, node: IRNode, keys: Sequence[Atom], queries: Sequence[Atom]
    ) -> np.ndarray | None:
        """[n_query, n_key] of `compare(node)` over two non-empty sides, or None where twins
        disagree somewhere (the caller's loop raises at the first, located)."""
        self.compare(node)  # (sets up the twins' entries, if any)
        entries = self._entries.get(node.index)
        if entries is None:  # no twins: `compare` is `safe_compare`, which `compare_matrix` is
            assert node.comparison is not None
            return self._compared(node.comparison, keys, queries)
        if entries.apart and not all(
            self._listed_apart(i, listed) for i, listed in zip(node.inputs, (keys, queries))
        ):
            entries = self._shared_entries(node)
            self._compare[node.index] = entries.holds  # (the caller's loop, where it raises)
        return entries.table(keys, queries)

    def joint_compare(self, node: IRNode) -> Compare:
        """`compare(node)` for a joint reading, which reads each side's values as the readings'
        columns (`Built.canonical`): the twins of a side read apart compare as themselves only
        where its reading gives each its own column."""
        compare = self.compare(node)
        entries = self._entries.get(node.index)
        if entries is None or not entries.apart:
            return compare
        if all(self._listed_apart(i, None) for i in node.inputs):
            return compare
        return self._shared_entries(node).holds

    def apart(self, index: int) -> bool:
        """Whether the twins of s-op `index` are values a model can hold apart: a map over s-ops
        without twins (or with twins held apart) gives each twin for its own input values (tracr's `x + min_key * i / N`:
        1 + 2 * 4 / 6 is 2.333333333333333, 2 + 2 * 1 / 6 is 2.3333333333333335, on every input),
        so a table over its inputs writes each twin in a column of its own. Whether its reading
        does is checked where it is read (`_listed_apart`): one decoded from its number shares a
        column among twins, and its select's entries are then the twins' shared outcome."""
        if index not in self._apart:
            node = self.ctx.graph[index]
            self._apart[index] = (
                node.op is Op.MAP
                and bool(self.runs(index))
                and all(not self.runs(i) or self.apart(i) for i in node.inputs)
            )
        return self._apart[index]

    def _listed_apart(self, index: int, listed: Sequence[Atom] | None) -> bool:
        """Whether a reading of s-op `index` gives each of its twins a column of its own: its
        categorical reading keeps each (`Built.canonical`), and `listed` (its reading's values,
        None where not known) holds each. True where `index` is not read apart."""
        if not self.apart(index):
            return True
        members = {value_key(v): v for run in self.runs(index).values() for v in run}
        if listed is not None and not set(members) <= {value_key(v) for v in listed}:
            return False
        if self.built is None:  # (no plan: only the listed values say)
            return listed is not None
        return all(value_key(self.built.canonical(index, v)) == k for k, v in members.items())

    def _shared_entries(self, node: IRNode) -> _Entries:
        """Select `node`'s entries with every side's twins shared, as where none is read apart."""
        if node.index not in self._shared:
            self._shared[node.index] = _Entries(self, node, apart=False)
        return self._shared[node.index]

    def _compared(
        self, comparison: sops.Comparison, keys: Sequence[Atom], queries: Sequence[Atom]
    ) -> np.ndarray:
        """`compare_matrix`, once per value analysis: each build planned from it compares the
        same values (sort over 9,000 tokens: three builds, each two 81M-pair tables)."""
        key = (
            "compare matrix",
            comparison,
            tuple(map(value_key, keys)),
            tuple(map(value_key, queries)),
        )
        memo = self.ctx.value_sets.memo
        found = memo.get(key)
        if found is None:
            found = compare_matrix(comparison, list(keys), list(queries))
            found.flags.writeable = False  # shared by every build: never written in place
            memo[key] = found
        return found

    def runs(self, index: int) -> dict[tuple, tuple[Atom, ...]]:
        """value key -> its run of twins, for each value of s-op `index` in a run of two or more."""
        if index not in self._runs:
            values = tuple(self.ctx.values(index))
            runs: dict[tuple, tuple[Atom, ...]] = {}
            for _, members in noise_clusters(values):
                run = tuple(values[i] for i in members)
                if len({value_key(v) for v in run}) > 1:
                    runs.update((value_key(v), run) for v in run)
            self._runs[index] = runs
        return self._runs[index]

    def lengths(self, index: int, value: Atom) -> frozenset[int] | None:
        """The lengths at which s-op `index` can take `value` (None: any length, where the s-op
        has no per-position relation). Read only for selects that meet twins."""
        if index not in self._lengths:
            relation = self.ctx.value_sets.relation[index]
            if relation is None:
                self._lengths[index] = None
            else:
                at: dict[tuple, set[int]] = {}
                for (_, n), values in relation.items():
                    for v in values:
                        at.setdefault(value_key(v), set()).add(n)
                self._lengths[index] = {k: frozenset(ns) for k, ns in at.items()}
        found = self._lengths[index]
        return None if found is None else found.get(value_key(value), frozenset())


class _Entries:
    """One select's table entries over twins (memoised per listed pair)."""

    def __init__(self, tables: TwinTables, node: IRNode, *, apart: bool = True) -> None:
        assert node.comparison is not None
        self.tables, self.node, self.comparison = tables, node, node.comparison
        self.k_index, self.q_index = node.inputs
        # called for every pair of a table: each side's runs looked up once here; a side read
        # apart (`TwinTables.apart`) has none, each twin its own value
        k_apart, q_apart = (apart and tables.apart(i) for i in node.inputs)
        self.apart = k_apart or q_apart
        self.k_runs = {} if k_apart else tables.runs(self.k_index)
        self.q_runs = {} if q_apart else tables.runs(self.q_index)
        self.memo: dict[tuple[tuple, tuple], bool] = {}

    def holds(self, key: Atom, query: Atom) -> bool:
        pair = (value_key(key), value_key(query))
        ks, qs = self.k_runs.get(pair[0]), self.q_runs.get(pair[1])
        if ks is None and qs is None:
            return safe_compare(self.comparison, key, query)
        if pair not in self.memo:
            self.memo[pair] = self._shared(key, query, ks or (key,), qs or (query,))
        return self.memo[pair]

    def _shared(self, key: Atom, query: Atom, ks: tuple[Atom, ...], qs: tuple[Atom, ...]) -> bool:
        outcomes: dict[tuple[Atom, Atom], bool] = {}
        for a in ks:
            at_a = self.tables.lengths(self.k_index, a)
            for b in qs:
                at_b = self.tables.lengths(self.q_index, b)
                if at_a is not None and at_b is not None and not at_a & at_b:
                    continue  # never in one input
                outcomes[a, b] = safe_compare(self.comparison, a, b)
        if len(set(outcomes.values())) > 1:
            graph = self.tables.ctx.graph
            tokens = all(graph[i].op is Op.TOKENS for i in self.node.inputs)
            raise _depends_on_noise(self.node, outcomes, tokens)
        return (
            next(iter(outcomes.values())) if outcomes else safe_compare(self.comparison, key, query)
        )

    def table(self, keys: Sequence[Atom], queries: Sequence[Atom]) -> np.ndarray | None:
        """[len(queries), len(keys)] of `holds(key, query)`; None where the twins of a pair that
        can meet disagree (`holds` raises there).

        The same facts as `holds`, pair by pair: group each side's values by run (a value outside
        every run is a run of its own); a pair's outcome is that of its runs' members that can
        meet (`_shared`), or its own comparison where none can (a pair of values outside runs:
        its own, either way). Compared as `compare_matrix` (which is `safe_compare`), met as
        `lengths` (None meets every length), reduced per pair of runs by any-true and any-false.
        """
        if not keys or not queries:
            return np.zeros((len(queries), len(keys)), dtype=bool)
        k_groups, k_of = self._groups(keys, self.k_runs)
        q_groups, q_of = self._groups(queries, self.q_runs)
        k_members = [v for g in k_groups for v in g]
        k_starts = np.cumsum([0] + [len(g) for g in k_groups[:-1]])
        k_at = [self.tables.lengths(self.k_index, v) for v in k_members]
        q_at = [[self.tables.lengths(self.q_index, v) for v in g] for g in q_groups]
        width = 1 + max((max(ns) for ns in itertools.chain(k_at, *q_at) if ns), default=0)
        k_len, k_any = _length_rows(k_at, width)
        some_true = np.zeros((len(q_groups), len(k_groups)), dtype=bool)
        some_false = np.zeros_like(some_true)
        # query runs a chunk at a time: a chunk's [members, key members] arrays stay small
        for lo, hi in _chunks([len(g) for g in q_groups], _CHUNK // max(1, len(k_members))):
            chunk = q_groups[lo:hi]
            q_members = [v for g in chunk for v in g]
            q_starts = np.cumsum([0] + [len(g) for g in chunk[:-1]])
            q_len, q_any = _length_rows([ns for at in q_at[lo:hi] for ns in at], width)
            meet = (q_len @ k_len.T > 0) | q_any[:, None] | k_any[None, :]
            holds = compare_matrix(self.comparison, k_members, q_members)
            for out, outcome in ((some_true, holds), (some_false, ~holds)):
                met = np.logical_or.reduceat(outcome & meet, k_starts, axis=1)
                out[lo : lo + len(chunk)] = np.logical_or.reduceat(met, q_starts, axis=0)
        t = some_true[np.ix_(q_of, k_of)]
        f = some_false[np.ix_(q_of, k_of)]
        if (t & f).any():
            return None
        own = compare_matrix(self.comparison, list(keys), list(queries))
        return np.where(t | f, t, own)

    @staticmethod
    def _groups(
        values: Sequence[Atom], runs: dict[tuple, tuple[Atom, ...]]
    ) -> tuple[list[tuple[Atom, ...]], np.ndarray]:
        """The distinct runs of `values` (a value in none: itself), and each value's run's index."""
        index: dict[object, int] = {}
        groups: list[tuple[Atom, ...]] = []
        of = []
        for i, v in enumerate(values):
            run = runs.get(value_key(v))
            # a run by identity (one tuple per run, `TwinTables.runs`); else the value's position
            ident = ("run", id(run)) if run is not None else ("own", i)
            if ident not in index:
                index[ident] = len(groups)
                groups.append(run if run is not None else (v,))
            of.append(index[ident])
        return groups, np.array(of, dtype=np.int64)


def _chunks(sizes: Sequence[int], most: int) -> list[tuple[int, int]]:
    """Consecutive [lo, hi) ranges of groups whose sizes sum to at most `most` (a larger group
    alone): chunked by members, not by groups, as a long run of twins counts each member."""
    out: list[tuple[int, int]] = []
    lo, total = 0, 0
    for i, size in enumerate(sizes):
        if i > lo and total + size > most:
            out.append((lo, i))
            lo, total = i, 0
        total += size
    if lo < len(sizes):
        out.append((lo, len(sizes)))
    return out


def _length_rows(
    found: Sequence[frozenset[int] | None], width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per value, the lengths it occurs at (`TwinTables.lengths`) as a 0/1 row [values, width]
    (float64: a row times a row counts the lengths they share, exactly), and whether it occurs
    at every length (None)."""
    rows = np.zeros((len(found), width))
    for r, ns in enumerate(found):
        if ns:
            rows[r, list(ns)] = 1.0
    return rows, np.array([ns is None for ns in found], dtype=bool)


_CHUNK = 1 << 21  # (query member, key member) pairs compared at once


def _depends_on_noise(
    node: IRNode, outcomes: dict[tuple[Atom, Atom], bool], tokens: bool
) -> CompileError:
    """The refusal of a select whose outcome differs between twins; `tokens`: both its sides are
    the input's tokens, so the twins are two tokens the user wrote this close, not one number
    that float64 rounding told apart."""
    yes = next(pair for pair, holds in outcomes.items() if holds)
    no = next(pair for pair, holds in outcomes.items() if not holds)
    assert node.comparison is not None
    op = node.comparison.value
    held = (
        f"'{node.text}' holds for {yes[0]!r} {op} {yes[1]!r} but not for {no[0]!r} {op} {no[1]!r}"
    )
    if tokens:
        return CompileError(
            [
                Diagnostic(
                    f"{held}: tokens less than {FLOAT64_NOISE:g} apart (relative), which a "
                    "compiled model reads as one number",
                    node.span,
                    "a float32 model cannot tell them apart: use tokens further apart in the "
                    "vocabulary",
                )
            ]
        )
    apart = _set_apart(yes, no)
    if apart is not None:
        # a gap no rounding makes (0.0 and 1e-14: InterpBench's ties broken by x + indices * 1e-14;
        # 2^53 and 2^53 + 2, two whole numbers float64 holds)
        return CompileError(
            [
                Diagnostic(
                    f"{held}: {gap_words(*apart, FLOAT64_NOISE)}",
                    node.span,
                    "a float32 model cannot tell them apart: keep the values further apart, or "
                    "break ties with a select of their own (on the indices) instead of a tiny offset",
                )
            ]
        )
    return CompileError(
        [
            Diagnostic(
                f"{held}, numbers that differ only by float64 rounding",
                node.span,
                "a float32 model cannot tell them apart: compare counts rather than fractions "
                "(exact in float64), or with values the numbers never come this close to",
            )
        ]
    )


def _set_apart(yes: tuple[Atom, Atom], no: tuple[Atom, Atom]) -> tuple[float, float] | None:
    """The first twins the two pairs differ in that lie further apart than rounding leaves
    (`twin_gaps`), else None."""
    for a, b in zip(yes, no, strict=True):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a != b:
            if gap(a, b) is not Gap.ROUNDING:
                return a, b
    return None

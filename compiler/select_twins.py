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

from collections.abc import Callable
from functools import partial

from compiler.blocks import Atom, value_key
from compiler.fits import noise_clusters
from compiler.graph import IRNode
from compiler.plan_context import PlanContext
from compiler.selector_cases import safe_compare
from rasp.errors import CompileError, Diagnostic

Compare = Callable[[Atom, Atom], bool]  # (key value, query value) -> the select holds


class TwinTables:
    """Per s-op, the runs of float64 twins among its values and the lengths each twin occurs at;
    per select, the comparison its table is written with (`compare`)."""

    def __init__(self, ctx: PlanContext) -> None:
        self.ctx = ctx
        self._runs: dict[int, dict[tuple, tuple[Atom, ...]]] = {}
        self._lengths: dict[int, dict[tuple, frozenset[int]] | None] = {}
        self._compare: dict[int, Compare] = {}

    def compare(self, node: IRNode) -> Compare:
        """`key OP query` of select `node` as its table holds it, for the values its readings
        list; raises CompileError where the twins of a listed pair that can meet disagree."""
        if node.index not in self._compare:
            k_index, q_index = node.inputs
            if not self.runs(k_index) and not self.runs(q_index):
                assert node.comparison is not None
                self._compare[node.index] = partial(safe_compare, node.comparison)
            else:
                self._compare[node.index] = _Entries(self, node).holds
        return self._compare[node.index]

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

    def __init__(self, tables: TwinTables, node: IRNode) -> None:
        assert node.comparison is not None
        self.tables, self.node, self.comparison = tables, node, node.comparison
        self.k_index, self.q_index = node.inputs
        # called for every pair of a table: each side's runs looked up once here
        self.k_runs, self.q_runs = tables.runs(self.k_index), tables.runs(self.q_index)
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
            raise _depends_on_noise(self.node, outcomes)
        return (
            next(iter(outcomes.values())) if outcomes else safe_compare(self.comparison, key, query)
        )


def _depends_on_noise(node: IRNode, outcomes: dict[tuple[Atom, Atom], bool]) -> CompileError:
    yes = next(pair for pair, holds in outcomes.items() if holds)
    no = next(pair for pair, holds in outcomes.items() if not holds)
    assert node.comparison is not None
    op = node.comparison.value
    return CompileError(
        [
            Diagnostic(
                f"'{node.text}' holds for {yes[0]!r} {op} {yes[1]!r} but not for {no[0]!r} {op} "
                f"{no[1]!r}, numbers that differ only by float64 rounding",
                node.span,
                "a float32 model cannot tell them apart: compare counts rather than fractions "
                "(exact in float64), or with values the numbers never come this close to",
            )
        ]
    )

"""The walks made iterative with `rasp.walks.unwound` (compiler.selector_cases) and with explicit
stacks (compiler.key_predicates, compiler.absorb) do their work in exactly the order of the
recursive forms they replace (kept here as the reference), on generated selector formulas with
shared parts: the same calls of the work below them, in the same order, and the same results."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compiler import absorb, key_predicates, selector_cases
from compiler.graph import Graph, Op, graph_and_index
from compiler.selector_cases import Cases, SelectorCases
from compiler.values import infer_values
from rasp.errors import RaspError
from tests.compiler.test_total_orders import _program

SIDES = ["tokens", "indices", "length", "v0", "v1", '"b"', "2", "indices + 1"]
PRELUDE = "v0 = aggregate(not select(tokens, tokens, <=), indices, 1);\nv1 = v0 - length;\n"


class _Recursive(SelectorCases):
    """The recursive form of session 68 (compiler/selector_cases.py at b56b83ad)."""

    def uniform(self, index: int) -> bool:
        if index not in self._flat:
            node = self.g[index]
            if node.op is Op.SELECT:
                self._flat[index] = all(self._one_set(i) is not None for i in node.inputs)
            else:
                self._flat[index] = all(self.uniform(i) for i in node.inputs)
        return self._flat[index]

    def at(self, index: int, n: int) -> Cases | None:
        if self.uniform(index):
            if index not in self._uniform:
                self._uniform[index] = self._at(index, 1)
            return self._uniform[index]
        return self._at(index, n)

    def prefix_stable(self, index: int, n_max: int) -> bool:
        key = (index, n_max)
        if key not in self._prefix:
            node = self.g[index]
            if self.uniform(index):
                stable = True
            elif node.op is Op.SELECT:
                stable = all(self._stable_side(i, n_max) for i in node.inputs) and all(
                    self._side_bounds(self._side(i, n_max)) is not None for i in node.inputs
                )
            elif node.op is Op.NOT or self._shared_sides(index) is None:
                stable = all(self.prefix_stable(i, n_max) for i in node.inputs)
            else:
                stable = False
            self._prefix[key] = stable
        return self._prefix[key]

    def _at(self, index: int, n: int) -> Cases | None:
        node = self.g[index]
        match node.op:
            case Op.SELECT:
                return self._select(index, n)
            case Op.NOT:
                inner = self.at(node.inputs[0], n)
                return None if inner is None else (~inner[1], ~inner[0])
            case Op.AND | Op.OR:
                joint = self._joint_r(index, n)
                if joint is not None:
                    return joint
                left, right = (self.at(i, n) for i in node.inputs)
                if node.op is Op.AND:
                    if left is None or right is None:
                        known = left if right is None else right
                        if known is None:
                            return None
                        return known[0], np.zeros_like(known[1])
                    return left[0] & right[0], left[1] & right[1]
                if left is None or right is None:
                    known = left if right is None else right
                    if known is None:
                        return None
                    return np.ones_like(known[0]), known[1]
                return left[0] | right[0], left[1] | right[1]
        return None

    def _joint_r(self, index: int, n: int) -> Cases | None:
        sides = self._shared_sides(index)
        if sides is None:
            return None
        keys, queries = self._side(sides[0], n), self._side(sides[1], n)
        if keys.column is not None and queries.column is not None:
            return None
        k_sets, k_codes = keys.distinct()
        q_sets, q_codes = queries.distinct()
        k_vals = [v for vs in k_sets for v in vs]
        q_vals = [v for vs in q_sets for v in vs]
        if len(k_vals) * len(q_vals) > selector_cases.MAX_PAIRS:
            return None
        key = (tuple(map(id, k_sets)), tuple(map(id, q_sets)), ("joint", index))
        table = self._tables.get(key)
        if table is None:
            holds, ok = self._formula_r(index, k_vals, q_vals, {})
            q_of = selector_cases._members(q_sets)
            k_of = selector_cases._members(k_sets).T
            compared = q_of @ ok.astype(np.float64) @ k_of
            held = q_of @ (holds & ok).astype(np.float64) @ k_of
            table = np.stack([held > 0, (held == compared) & (compared > 0)], axis=-1)
            self._tables[key] = table
        cells = table[q_codes[:, None], k_codes[None, :]]
        return cells[..., 0], cells[..., 1]

    def _shared_sides(self, index: int) -> tuple[int, int] | None:
        if index not in self._shared:
            node = self.g[index]
            if node.op is Op.SELECT:
                found: tuple[int, int] | None = (node.inputs[0], node.inputs[1])
            else:
                each = {self._shared_sides(i) for i in node.inputs}
                found = each.pop() if len(each) == 1 else None
            self._shared[index] = found
        return self._shared[index]

    def _formula_r(self, index: int, keys: list[Any], queries: list[Any], leaves: dict) -> Any:
        node = self.g[index]
        if node.op is Op.SELECT:
            assert node.comparison is not None
            if node.comparison not in leaves:
                leaves[node.comparison] = selector_cases._compared(node.comparison, keys, queries)
            return leaves[node.comparison]
        if node.op is Op.NOT:
            holds, ok = self._formula_r(node.inputs[0], keys, queries, leaves)
            return ~holds, ok
        (a, a_ok), (b, b_ok) = (self._formula_r(i, keys, queries, leaves) for i in node.inputs)
        return ((a & b) if node.op is Op.AND else (a | b)), a_ok & b_ok


def _logged(cases: SelectorCases, log: list[Any]) -> SelectorCases:
    """`cases` noting each call of the work the walks do below them, with its arguments (an
    object by the order it was first seen in: the two forms make their own)."""
    ordinal: dict[int, int] = {}
    for name in ("_select", "_side", "_one_set", "_stable_side", "_side_bounds", "_by_pairs"):
        method = getattr(cases, name)

        def noted(*args: Any, _m: Any = method, _n: str = name) -> Any:
            shown = [
                a if isinstance(a, int) else ordinal.setdefault(id(a), len(ordinal)) for a in args
            ]
            log.append((_n, *shown))
            return _m(*args)

        setattr(cases, name, noted)
    return cases


def _exercise(cases: SelectorCases, graph: Graph) -> tuple[list[Any], list[Any]]:
    """Every walk on every selector (the root first, nothing cached), with
    the work noted and the joint formulas' leaves in the order they are compared."""
    log: list[Any] = []
    _logged(cases, log)
    results: list[Any] = []
    real = selector_cases._compared

    def compared(c: Any, k: Any, q: Any) -> Any:
        log.append(("_compared", c, len(k), len(q)))
        return real(c, k, q)

    selector_cases._compared = compared  # type: ignore[assignment]
    try:
        for node in reversed(graph.nodes):
            if node.op.is_selector:
                results.append(cases.uniform(node.index))
                results.append(cases.prefix_stable(node.index, 4))
                for n in (1, 3, 4):
                    at = cases.at(node.index, n)
                    results.append(
                        None if at is None else [np.broadcast_to(a, (n, n)).tolist() for a in at]
                    )
    finally:
        selector_cases._compared = real  # type: ignore[assignment]
    return log, results


@st.composite
def formulas(draw: st.DrawFn) -> str:
    """A program of selects combined by and, or and not, later ones reusing earlier ones."""
    lines = []
    keys = draw(st.lists(st.sampled_from(SIDES), min_size=1, max_size=2))
    queries = draw(st.lists(st.sampled_from(SIDES), min_size=1, max_size=2))
    for k in range(draw(st.integers(1, 4))):  # (often on one key and one query: `_joint`'s)
        key, query = draw(st.sampled_from(keys)), draw(st.sampled_from(queries))
        op = draw(st.sampled_from(["==", "<", "<=", "!="]))
        lines.append(f"s{k} = select({key}, {query}, {op});")
    count = len(lines)
    for k in range(count, count + draw(st.integers(1, 8))):
        a, b = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
        form = draw(st.sampled_from(["s{a} and s{b}", "s{a} or s{b}", "not s{a}"]))
        lines.append(f"s{k} = {form.format(a=a, b=b)};")
    last = len(lines) - 1
    return PRELUDE + "\n".join(lines) + f"\nres = selector_width(s{last});"


def _graph(text: str) -> tuple[Graph, Any]:
    try:
        graph, _ = graph_and_index(_program(text))
        return graph, infer_values(graph, list("abc"), 4)
    except RaspError:
        assume(False)
        raise


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas())
def test_selector_cases_work_in_the_recursions_order(text: str) -> None:
    graph, vs = _graph(text)
    new = _exercise(SelectorCases(graph, vs.relation, vs.values), graph)
    old = _exercise(_Recursive(graph, vs.relation, vs.values), graph)
    assert new[0] == old[0]
    assert new[1] == old[1]


def _conjuncts(graph: Graph, index: int) -> list[int]:
    node = graph[index]
    if node.op is Op.AND:
        return [c for i in node.inputs for c in _conjuncts(graph, i)]
    return [index]


def _key_only(graph: Graph, index: int, log: list[int]) -> bool:
    log.append(index)
    node = graph[index]
    if node.op is Op.SELECT:
        return graph[node.inputs[1]].op is Op.CONST
    if node.op in (Op.NOT, Op.AND, Op.OR):
        return all(_key_only(graph, i, log) for i in node.inputs)
    return False


def _leaves(graph: Graph, index: int) -> list[Any]:
    node = graph[index]
    if node.op is Op.SELECT:
        return [node]
    return [leaf for i in node.inputs for leaf in _leaves(graph, i)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas())
def test_selector_walks_keep_the_recursions_order(text: str) -> None:
    graph, _ = _graph(text)
    for node in graph.nodes:
        if node.op.is_selector:
            i = node.index
            assert key_predicates.conjuncts_of(graph, i) == _conjuncts(graph, i)
            assert absorb.select_leaves(graph, i) == _leaves(graph, i)
            seen: list[int] = []
            assert key_predicates.key_only(graph, i) == _key_only(graph, i, seen)
            # (the steps' order: each node where the recursion reaches it)
            visited: list[int] = []
            steps = key_predicates._key_only_steps

            def noted(g: Graph, j: int, _s: Any = steps) -> Any:
                visited.append(j)
                return _s(g, j)

            key_predicates._key_only_steps = noted  # type: ignore[assignment]
            try:
                key_predicates.key_only(graph, i)
            finally:
                key_predicates._key_only_steps = steps  # type: ignore[assignment]
            assert visited == seen


def test_a_selector_of_thousands_of_ands_without_recursion() -> None:
    import sys

    depth = 2 * sys.getrecursionlimit()
    text = "s = select(indices, indices, <);\n" + "s = s and select(tokens, tokens, ==);\n" * depth
    graph, _ = graph_and_index(_program(text + "res = selector_width(s);"))
    # (the value analysis of so deep a selector takes minutes: its sets written here)
    values: list[Any] = [()] * len(graph.nodes)
    relation: list[Any] = [None] * len(graph.nodes)
    for node in graph.nodes:
        if node.op is Op.TOKENS:
            values[node.index] = ("a", "b", "c")
        elif node.op is Op.INDICES:
            values[node.index] = (0, 1, 2, 3)
            one = [(i,) for i in range(4)]  # (interned, as the analysis does)
            relation[node.index] = {(i, n): one[i] for n in range(1, 5) for i in range(n)}
    root = graph.nodes[-1].inputs[0]
    cases = SelectorCases(graph, relation, values)
    can, must = cases.at(root, 3)
    assert np.array_equal(can, np.tril(np.ones((3, 3), bool), -1))  # [query, key]: keys before
    assert not must.any()
    assert not cases.uniform(root) and cases.prefix_stable(root, 4)
    assert len(key_predicates.conjuncts_of(graph, root)) == depth + 1
    assert len(absorb.select_leaves(graph, root)) == depth + 1
    assert not key_predicates.key_only(graph, root)


class _RecursiveTruth(absorb._Truth):
    """absorb's selector truth tables as they recursed (at b56b83ad)."""

    def table(self, index: int) -> np.ndarray:
        if index not in self._tables:
            self._tables[index] = self._table_r(index)
        return self._tables[index]

    def _table_r(self, index: int) -> np.ndarray:
        node = self.ctx.graph[index]
        match node.op:
            case Op.SELECT:
                keys, queries = node.inputs
                q_vals, q_at = self.read[0][queries]
                k_vals, k_at = self.read[1][keys]
                compare = absorb.partial(absorb.safe_compare, node.comparison)
                small = absorb.checked_compare_table(compare, k_vals, q_vals)
                return small[q_at][:, k_at]
            case Op.AND:
                return self.table(node.inputs[0]) & self.table(node.inputs[1])
            case Op.OR:
                return self.table(node.inputs[0]) | self.table(node.inputs[1])
            case Op.NOT:
                return ~self.table(node.inputs[0])
        raise TypeError(node.op)


def _truth(kind: type[absorb._Truth], graph: Graph, log: list[Any]) -> tuple[Any, list[Any]]:
    """Every selector's table from a `kind` over made-up classes (three per side, a table per
    select that its sides decide), the comparisons noted in the order they are made."""
    truth = object.__new__(kind)
    truth.ctx = type("Ctx", (), {"graph": graph})()  # type: ignore[assignment]
    classes = ([0, 1, 2], np.array([0, 1, 2, 2]))
    truth.read = [dict.fromkeys(range(len(graph.nodes)), classes) for _ in range(2)]
    truth._tables = {}
    real = absorb.checked_compare_table

    def noted(compare: Any, k_vals: Any, q_vals: Any) -> np.ndarray:
        log.append(compare.args[0])
        seed = sum(map(ord, str(compare.args[0]))) + len(log) % 3
        return np.random.default_rng(seed).random((3, 3)) < 0.5

    absorb.checked_compare_table = noted  # type: ignore[assignment]
    try:
        # (the root first: what it reads is not cached yet)
        tables = [truth.table(n.index).tolist() for n in reversed(graph.nodes) if n.op.is_selector]
    finally:
        absorb.checked_compare_table = real  # type: ignore[assignment]
    return tables, log


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formulas())
def test_absorb_tables_in_the_recursions_order(text: str) -> None:
    graph, _ = _graph(text)
    assert _truth(absorb._Truth, graph, []) == _truth(_RecursiveTruth, graph, [])

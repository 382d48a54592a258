"""The IR: topological order, deterministic unique names, payloads and refusals."""

from __future__ import annotations

import pytest
import sop_builders as B

from compiler.graph import Op, build_graph
from rasp import sops as S
from rasp.errors import CompileError


def test_nodes_are_topological_and_inputs_point_backwards() -> None:
    graph = build_graph(B.reverse())
    for node in graph.nodes:
        assert all(i < node.index for i in node.inputs)
    assert graph.output.name == "reverse"
    assert graph.output.op is Op.AGGREGATE
    assert [n.op for n in graph.nodes].count(Op.LENGTH) == 1


def test_unnamed_nodes_get_names_numbered_within_one_compilation() -> None:
    t = B.tokens()
    a = B.mapped(lambda x: x == "a", t)
    b = B.mapped(lambda x: x == "b", t)
    root = B.mapped(lambda x, y: x or y, a, b)
    first = [n.name for n in build_graph(root).nodes]
    S.IndicesSOp()  # building more nodes elsewhere must not change the names
    second = [n.name for n in build_graph(root).nodes]
    assert first == second == ["tokens", "_map_1", "_map_2", "_map_3"]


def test_clashing_program_names_are_made_unique() -> None:
    t = B.tokens()
    x1 = B.mapped(lambda v: v + "!", t, name="x")
    x2 = B.mapped(lambda v: v + "?", x1, name="x")
    named_tokens = B.mapped(lambda v: v, x2, name="tokens")
    names = [n.name for n in build_graph(named_tokens).nodes]
    assert len(set(names)) == len(names)
    assert names[1:] == ["x", "x_2", "tokens_2"]


def test_shared_nodes_appear_once() -> None:
    t = B.tokens()
    sel = S.Select(keys=t, queries=t, comparison=S.Comparison.EQ)
    root = S.AggregateSOp(selector=S.SelectAnd(left=sel, right=sel), sop=t, default="")
    graph = build_graph(root)
    assert [n.op for n in graph.nodes].count(Op.SELECT) == 1
    and_node = next(n for n in graph.nodes if n.op is Op.AND)
    assert and_node.inputs[0] == and_node.inputs[1]
    assert graph.consumers()[and_node.inputs[0]] == (and_node.index,)


def test_payloads_are_kept() -> None:
    root = B.frac_prevs()
    graph = build_graph(root)
    agg = graph.output
    assert agg.value == 0
    select = graph[agg.inputs[0]]
    assert select.comparison is S.Comparison.LEQ
    fn_node = graph[agg.inputs[1]]
    assert fn_node.fn is not None and fn_node.fn("a") == 1


def test_a_selector_cannot_be_compiled() -> None:
    with pytest.raises(CompileError, match="only an s-op"):
        build_graph(S.Select())


def test_value_facts_index_by_node_not_by_walk_position() -> None:
    # Two `length` objects are one graph node, so the rewrites' value facts must not take walk
    # positions for node indices: they once gave `a` the values of `y` (and crashed on a random
    # program whose last s-op fell past the end).
    from compiler.rewrite import ValueFacts

    a, b = S.LengthSOp(), S.LengthSOp()
    x = S.MapSOp(fn=lambda v: v * 10, inputs=(b,), text="x")
    y = S.MapSOp(fn=lambda v: v + 100, inputs=(a,), text="y")
    facts = ValueFacts([a, y, x], ["a"], 3)
    assert (facts.values(a), facts.values(y), facts.values(x)) == (
        (1, 2, 3),
        (101, 102, 103),
        (10, 20, 30),
    )


def test_graph_and_index_maps_every_sop_to_its_node() -> None:
    from compiler.graph import graph_and_index

    a, b = S.LengthSOp(), S.LengthSOp()
    root = S.MapSOp(fn=lambda u, v: u + v, inputs=(a, b), text="sum")
    graph, index = graph_and_index(root)
    assert index[a.id] == index[b.id] == next(n.index for n in graph.nodes if n.op is Op.LENGTH)
    assert graph[index[root.id]] is graph.output


def test_nodes_one_python_call_built_are_told_apart() -> None:
    # every node of a tracr library call has that call's span: described by it, the refusal "x is
    # computed from y, z" would read "f(...) is computed from f(...), f(...)"
    from compiler.forms import prepare
    from rasp.tracr import lib
    from rasp.tracr.lower import to_sops

    balance = lib.make_pair_balance(lib.rasp.tokens, "(", ")")
    graph = build_graph(prepare(to_sops(balance), ["(", ")"], 8))
    texts = {n.name: n.text for n in graph.nodes}
    assert texts["pair_balance"] == "pair_balance"
    assert texts["opens"] == "opens" and texts["bools_open"] == "bools_open"
    selects = [n.text for n in graph.nodes if n.op is Op.SELECT]
    assert selects == ["select(indices, indices, <=)"]  # both means' prefix: one node (dedupe)
    assert "make_pair_balance" not in " ".join(n.text for n in graph.nodes)


def test_equal_expressions_keep_their_shared_text() -> None:
    from rasp.errors import Source
    from rasp.interpreter import load_source

    program = "res = selector_width(select(indices % 2, indices % 2, ==));"
    sop = load_source(Source("<test>", program)).get("res")
    texts = [n.text for n in build_graph(sop).nodes if n.op is Op.MAP]
    assert texts == ["indices % 2", "indices % 2"]


def test_a_long_expression_is_described_by_its_own_words() -> None:
    """Past 80 characters its start and end, elided at spaces: not `aggregate(_or_1, _map_4)`,
    whose generated names the program never wrote."""
    from rasp.errors import Source
    from rasp.interpreter import load_source

    program = (
        "w = aggregate(select(indices, indices - 1, ==) or select(indices, indices + 1, ==), "
        'indicator(tokens=="a"));'
    )
    sop = load_source(Source("<test>", program)).get("w")
    text = build_graph(sop).output.text
    # the tail starts at a name (it read `... icator(tokens=="a"))`)
    assert text == 'aggregate(select(indices, indices - 1, ==) or ... indicator(tokens=="a"))'
    assert len(text) <= 80
    long = "w = aggregate(select(indices, indices - 1, ==) or select(indices, indices + 1, ==), "
    long += "a_very_long_name_of_a_variable_longer_than_40);"
    names = load_source(
        Source("<test>", "a_very_long_name_of_a_variable_longer_than_40 = indices + 1;\n" + long)
    )
    text = build_graph(names.get("w")).output.text
    assert text == "aggregate(select(indices, indices - 1, ==) or ... )"  # no name cut inside
    assert len(text) <= 80


def test_a_compiled_model_s_operations_read_the_values() -> None:
    """A `def` called twice: its one expression describes each node by its own arguments, each
    name written as what it held (as the REPL labels an unnamed s-op)."""
    from rasp.errors import Source
    from rasp.interpreter import load_source

    program = """
def shift_by(n) { return aggregate(select(indices, indices - n, ==), tokens_int, 0); }
out2 = shift_by(1) + shift_by(2);
"""
    sop = load_source(Source("t.rasp", program)).get("out2")
    texts = [n.text for n in build_graph(sop).nodes if n.op is Op.SELECT]
    assert texts == ["select(indices, indices - 1, ==)", "select(indices, indices - 2, ==)"]


def test_a_map_of_no_s_ops_is_refused_with_a_located_error() -> None:
    """Only a hand-built node has no inputs; its analysis zipped no columns against the positions
    (a raw ValueError, an internal error) where it must be a refusal that says what to do."""
    from compiler import compile_sop

    constant = S.MapSOp(fn=lambda: 3, inputs=(), name="three")
    with pytest.raises(CompileError) as caught:
        compile_sop(constant, list("abc"), 5)
    assert "'three' is a map of no s-ops" in str(caught.value)
    assert "LengthSOp" in (caught.value.diagnostics[0].hint or "")


class _CountedReads(tuple):  # (the graph's nodes, counting the walk's reads)
    reads = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        type(self).reads += 1
        return super().__getitem__(index)

    def __iter__(self):  # type: ignore[no-untyped-def, override]
        for node in super().__iter__():
            type(self).reads += 1
            yield node


@pytest.mark.parametrize("leaf", ["indices", "tokens"])
def test_reads_position_only_reads_each_node_once(leaf: str) -> None:
    """Defs seed 2172227 (a recursion `g(x - n if x < n else x, ...)` over maps): the walk went
    down every path of a DAG of maps, 2^k reads for k maps reading one another twice, 90% of
    its compile time at N = 6. A chain of 16 such maps is read once per node (the old walk read
    2^17 nodes), and once per graph: asking of every node reads no node again."""
    x: S.SOp = S.IndicesSOp(name="indices") if leaf == "indices" else B.tokens()
    for _ in range(16):
        x = B.mapped(lambda a, b: a, x, B.mapped(lambda a: a, x))
    graph = build_graph(x)
    assert len(graph.nodes) == 33  # (shared, not unfolded into a tree)
    _CountedReads.reads = 0
    counting = type(graph)(nodes=_CountedReads(graph.nodes), root=graph.root)
    assert counting.reads_position_only(graph.root) is (leaf == "indices")
    assert _CountedReads.reads <= len(graph.nodes) + 1
    answers = [counting.reads_position_only(i) for i in range(len(graph.nodes))]
    assert _CountedReads.reads <= 2 * len(graph.nodes) + 1  # (each answer reads its own node)
    assert answers == [leaf == "indices" and n.op is Op.MAP for n in graph.nodes]


def test_reads_position_only_goes_through_maps_of_constants() -> None:
    """The one question the value analysis and the planners (`PlanContext.is_positional`) ask:
    a map of `indices` and a map of constants alone is one of the position; the map of constants
    is not (it reads no position), nor is a map that also reads the length."""
    indices = S.IndicesSOp(name="indices")
    four = B.mapped(lambda c: c + 1, S.ConstSOp(value=3), name="four")
    shifted = B.mapped(lambda i, f: i + f, indices, four, name="shifted")
    parity = B.mapped(lambda s: s % 2, shifted, name="parity")
    longer = B.mapped(lambda p, n: p + n, parity, S.LengthSOp(), name="longer")
    graph = build_graph(longer)
    asked = {n.name: graph.reads_position_only(n.index) for n in graph.nodes}
    assert asked == {
        "indices": False,  # (not a map: read as itself)
        "_const_1": False,
        "four": False,
        "shifted": True,
        "parity": True,
        "length": False,
        "longer": False,
    }


def test_a_loop_s_names_are_numbered_in_one_pass() -> None:
    # (each `x` counted its suffix from 2 again: quadratic in a loop of thousands; the names
    # are those the count from 2 gives, a name taken by the program skipped)
    x = B.mapped(lambda v: v, B.tokens(), name="x_3")
    for _ in range(5):
        x = B.mapped(lambda v: v, x, name="x")
    names = [n.name for n in build_graph(x).nodes]
    assert names == ["tokens", "x_3", "x", "x_2", "x_4", "x_5", "x_6"]

"""Scheduling: minimal attention depth, shared layers, merged heads."""

from __future__ import annotations

import sop_builders as B

from compiler.encode import plan_encodings
from compiler.graph import build_graph
from compiler.schedule import Schedule, schedule_blocks
from compiler.values import infer_values
from rasp import sops as S


def schedule_of(root: S.SOp, vocab: str = "abc", n: int = 6) -> Schedule:
    graph = build_graph(root)
    plan = plan_encodings(graph, infer_values(graph, list(vocab), n), tuple(vocab))
    return schedule_blocks(plan.heads, plan.mlps)


def attention_depth(schedule: Schedule) -> int:
    return sum(1 for layer in schedule.layers if layer.heads)


def test_reverse_is_two_layers_with_the_map_after_the_length_head() -> None:
    sched = schedule_of(B.reverse())
    assert sched.n_layers == 2
    assert [h.name for h in sched.layers[0].heads] == ["length"]
    # length's step MLP (its whole number, for the addressing) shares layer 0 with the head it
    # reads; `length - indices - 1` is then an affine view of the residual, no block
    assert [m.name for m in sched.layers[0].mlps] == ["length"]
    assert [h.name for h in sched.layers[1].heads] == ["reverse"]
    assert sched.layers[1].mlps == ()


def test_hist_is_one_layer() -> None:
    sched = schedule_of(B.hist())
    assert sched.n_layers == 1 and len(sched.layers[0].heads) == 1


def test_paper_attention_depths() -> None:
    assert attention_depth(schedule_of(B.sort_unique())) == 2
    assert attention_depth(schedule_of(B.sort_stable())) == 2
    assert attention_depth(schedule_of(B.dyck1(), "()")) == 2
    assert attention_depth(schedule_of(B.frac_prevs())) == 1


def test_aggregates_with_one_selector_share_a_head() -> None:
    t, indices = B.tokens(), S.IndicesSOp(name="indices")
    prevs = S.Select(keys=indices, queries=indices, comparison=S.Comparison.LEQ)
    a = S.AggregateSOp(selector=prevs, sop=B.mapped(lambda x: int(x == "a"), t), name="fa")
    b = S.AggregateSOp(selector=prevs, sop=B.mapped(lambda x: int(x == "b"), t), name="fb")
    root = B.mapped(lambda x, y: x > y, a, b, name="more_a")
    sched = schedule_of(root)
    assert len(sched.layers[0].heads) == 1
    assert sched.layers[0].heads[0].name == "fa, fb"


def test_independent_heads_and_mlps_share_layers() -> None:
    t = B.tokens()
    w1 = S.SelectorWidthSOp(
        selector=S.Select(keys=t, queries=t, comparison=S.Comparison.EQ), name="w1"
    )
    w2 = S.SelectorWidthSOp(
        selector=S.Select(keys=t, queries=t, comparison=S.Comparison.LT), name="w2"
    )
    root = B.mapped(lambda a, b: a == b, w1, w2, name="same")
    sched = schedule_of(root)
    assert sched.n_layers == 1
    assert {h.name for h in sched.layers[0].heads} == {"w1", "w2"}
    # w1 == w2 iff 1/(w1+1) - 1/(w2+1) == 0: a step MLP over both heads' readings, in their layer
    # (before compiler.linear_steps one width was decoded there and the comparison took layer 1).
    assert {m.name for m in sched.layers[0].mlps} == {"same"}


def test_maps_of_one_sop_are_free_views() -> None:
    t = B.tokens()
    upper = B.mapped(str.upper, t, name="upper")
    is_a = B.mapped(lambda x: x == "A", upper, name="is_a")
    sel = S.Select(keys=is_a, queries=is_a, comparison=S.Comparison.EQ)
    sched = schedule_of(S.SelectorWidthSOp(selector=sel, name="w"))
    assert sched.n_layers == 1
    assert [m.name for m in sched.layers[0].mlps] == ["w"]  # only the width decoder


def test_aggregates_of_one_selector_scored_differently_stay_two_heads() -> None:
    # x copies a number (addressed by the query's index), y a one-hot: one selector, two ways
    # of scoring it. Merged under the selector's key, they were a ValueError ("do not share a
    # selector"), and the compile crashed; now they are two heads of one layer.
    from test_compile import all_inputs, check_inputs

    from compiler import compile_sop
    from rasp.errors import Source
    from rasp.interpreter import load_source

    text = (
        "x = aggregate(select(indices, indices, ==), indices);\n"
        'y = aggregate(select(indices, indices, ==), indicator(tokens != "c") * 2);\n'
        "res = x <= y;\n"
    )
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, S.SOp)
    sched = schedule_of(root)
    assert [sorted(h.name for h in layer.heads) for layer in sched.layers] == [["x", "y"]]
    model = compile_sop(root, list("abc"), 6)
    assert check_inputs(model, root, all_inputs(list("abc"), 6)) == 1092


def test_an_mlp_whose_weights_read_only_one_goes_after_the_heads_its_domain_reads() -> None:
    # Plain fuzz seed 1200107, minimised: `y` is 0 at length 1 and 0.0 beyond (one key, then a
    # mean), so `second(x, y)` is one number of two types and its MLP's weights read only `one`.
    # Scheduled by its weights alone it went to layer 0, before the layer-1 head writing `x`,
    # which the certifier evaluates it at: the compile was refused ("reads '_aggregate_2' at
    # residual dimension ..., which neither the embedding nor an earlier sublayer writes").
    from test_compile import all_inputs, check_inputs

    from compiler import compile_sop

    indices = S.IndicesSOp(name="indices")
    first = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=S.ConstSOp(value=0), comparison=S.Comparison.EQ),
        sop=B.tokens(),
    )
    same = S.Select(keys=indices, queries=indices, comparison=S.Comparison.EQ)
    x = S.AggregateSOp(selector=same, sop=first, name="x")
    every = S.Select(
        keys=S.ConstSOp(value=0), queries=S.ConstSOp(value=1), comparison=S.Comparison.NEQ
    )
    y = S.AggregateSOp(selector=every, sop=B.mapped(lambda i: 0, indices), name="y")
    root = B.mapped(lambda a, b: b, x, y, name="second")
    sched = schedule_of(root, n=5)
    layer_of = {b.name: k for k, layer in enumerate(sched.layers) for b in layer.heads}
    layer_of |= {m.name: k for k, layer in enumerate(sched.layers) for m in layer.mlps}
    assert layer_of["second"] >= layer_of["x"]
    model = compile_sop(root, list("abc"), 5)
    assert check_inputs(model, root, all_inputs(list("abc"), 5)) == 363

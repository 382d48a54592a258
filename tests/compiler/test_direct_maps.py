"""A map whose step over an input map's source, with a context, the certifier refuses is built
again from its input maps, each computed first (compiler.alternatives,
`BuildOptions.direct_maps`)."""

from __future__ import annotations

import itertools
import random

import pytest

from compiler import alternatives, build_trials, compile_sop
from compiler.graph import build_graph
from compiler.maps import MapPlanner
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.compiler.loose_sums import count_every_weight
from tests.runtime_helpers import run_compiled

# two bracket balances both zero: `both` was stepped over b1 with z2 as its context, whose error
# (a bool from a steep step) the gate multiplies past the step's margin from N = 256 on
BOTH_ZERO = """
prefix = select(indices, indices, <=);
b1 = aggregate(prefix, indicator(tokens == "(")) - aggregate(prefix, indicator(tokens == ")"));
b2 = aggregate(prefix, indicator(tokens == "{")) - aggregate(prefix, indicator(tokens == "}"));
z1 = b1 == 0;
z2 = b2 == 0;
both = z1 and z2;
"""


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp.get("both")


@pytest.mark.exactness
def test_two_zero_balances_are_two_steps_and_a_table_at_n_256(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _program(BOTH_ZERO)
    # since the output sums count the units that can be on, the default build proves it (775
    # parameters, `both` stepped over b1 with z2 as its context; the direct build made 910):
    # with every weight counted, the bound before, it needs the direct build
    plain = compile_sop(root, list("(){}"), 256, name="both")
    assert [mlp["name"] for layer in plain.metadata["layers"] for mlp in layer["mlp"]] == [
        "z2",
        "both",
    ]
    assert plain.param_count() <= 910
    count_every_weight(monkeypatch)
    model = compile_sop(root, list("(){}"), 256, name="both")
    assert model.metadata["certificate"]["ok"] and model.metadata["config"]["n_layers"] == 2
    ops = [mlp["name"] for layer in model.metadata["layers"] for mlp in layer["mlp"]]
    assert ops == ["z1", "z2", "both"]  # z1 computed on its own first, then the table
    rng = random.Random(5)
    inputs = [list(t) for k in range(1, 5) for t in itertools.product("(){}", repeat=k)]
    inputs += [[rng.choice("(){}") for _ in range(rng.randint(1, 256))] for _ in range(40)]
    inputs += [list("(){}") * 64, list("({") * 64 + list(")}") * 64, list("(" * 128 + ")" * 128)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens
    # without the direct build, the default's refusal
    monkeypatch.setattr(alternatives, "DIRECT", "(off)")
    original = build_trials.instead

    def no_direct(*args: object, **kwargs: object) -> object:
        if args[3] == "(off)":
            return args[1]
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build_trials, "instead", no_direct)
    with pytest.raises(CompileError, match="'z1 and z2' .* a relu decision"):
        compile_sop(root, list("(){}"), 256, name="both")


def test_a_direct_map_reads_its_inputs_themselves() -> None:
    from compiler.build_trials import BuildOptions
    from compiler.plan_context import PlanContext
    from compiler.plan_state import Built
    from compiler.values import infer_values

    graph = build_graph(_program(BOTH_ZERO))
    values = infer_values(graph, list("(){}"), 8)
    both = next(n for n in graph.nodes if n.name == "both")
    names = {}
    for direct in (frozenset(), frozenset({"both"})):
        ctx = PlanContext(graph, values, tuple("(){}"), BuildOptions(direct_maps=direct))
        planner = MapPlanner(ctx, None, Built())  # type: ignore[arg-type]
        names[direct] = sorted(graph[i].name for i in planner.support(both.index))
    assert names[frozenset()] == ["b1", "z2"]  # z1 fused: read through its source
    assert names[frozenset({"both"})] == ["z1", "z2"]


def test_builds_from_one_value_analysis_list_a_maps_rows_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # keep_proved plans up to 7 builds of BOTH_ZERO at N = 256 from one value analysis; each
    # listed the same rows of every map (266K for b1), now listed once for them all
    from collections import Counter

    from compiler.build_stages import plan_build
    from compiler.build_trials import BuildOptions
    from compiler.forms import prepare
    from compiler.plan_context import PlanContext
    from compiler.values import infer_values

    vocab = tuple("(){}")
    sop = prepare(_program(BOTH_ZERO), vocab, 16)
    values = infer_values(build_graph(sop), vocab, 16)
    listed: Counter[tuple[int, tuple[int, ...]]] = Counter()
    original = PlanContext.chain_values

    def counted(ctx: PlanContext, index: int, sources: tuple[int, ...], combos: list) -> object:
        listed[(index, tuple(sources))] += 1
        return original(ctx, index, sources, combos)

    monkeypatch.setattr(PlanContext, "chain_values", counted)
    sketches = [
        plan_build(
            sop,
            vocab,
            16,
            causal=False,
            note=lambda s: None,
            options=options,
            head_masks=True,
            analyse=lambda graph: values,
        ).sketch
        for options in (BuildOptions(), BuildOptions(gates=False), BuildOptions())
    ]
    assert listed and set(listed.values()) == {1}
    assert sketches[0] == sketches[2]

"""Builds kept where proved and no larger (compiler.smaller_builds): maps moved before their
single-key copies (compiler.moved_maps), and a map read two ways read from its one one-hot."""

from __future__ import annotations

import random

import pytest

from compiler import compile_sop, driver
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.certificate import Certificate
from compiler.forms import prepare
from compiler.graph import Op, build_graph
from compiler.model import Sketch
from compiler.moved_maps import innermost, movable, move_maps
from compiler.smaller_builds import no_larger, smaller_instead
from compiler.values import infer_values
from rasp import sops as S
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.random_programs import random_program
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs
from tests.compiler.test_position_folds import SEED

# the rounding of a copy of v's many values, averaged: moved, the copy moves round(v)'s
MOVED = """v = selector_width(select(tokens, tokens, ==) and select(indices, indices, <=)) + aggregate(select(indices, indices, <=), indices + 1, 0);
res = aggregate(select(tokens, tokens, <=), round(shift(v, 1, False)));"""
# f read as a number by a mean and as a one-hot by a select: two step MLPs over m, or one
TWO_WAYS = """m = aggregate(select(indices, indices, <=), tokens_int, 0);
f = round(m * 2);
a = aggregate(select(indices, indices, <=), f, 0);
b = aggregate(select(f, tokens_int, ==), indices, 0);
res = a + b;"""


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


def _without(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compile as before these builds."""
    for module in ("alternatives", "driver"):
        monkeypatch.setattr(
            f"compiler.{module}.smaller_instead", lambda build, kept, note, tried: kept
        )


def _size(model) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    return model.param_count(), len(model.metadata["layers"])


def _movable(text: str, vocab: list, n: int) -> frozenset[str]:
    graph = build_graph(prepare(_root(text), vocab, n))
    return movable(graph, infer_values(graph, vocab, n))


def test_a_map_of_a_copy_moved_before_it_is_smaller_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _root(MOVED)
    model = compile_sop(root, list("ab"), 10)
    assert model.metadata["certificate"]["ok"]
    assert any("~before_copy:" in str(label) for label in model.metadata["residual"])
    assert _size(model) == (15_049, 3)
    inputs = all_inputs(list("ab"), 10)
    assert check_inputs(model, root, inputs) == len(inputs)
    _without(monkeypatch)
    assert _size(compile_sop(root, list("ab"), 10)) == (24_506, 4)


TWO_COPIES = """m = aggregate(select(indices, indices, <=), tokens_int, 0);
a = shift(m, 1, 0);
b = shift(tokens_int, 1, 0);
s = a + b;
res = aggregate(select(s, indices, <), tokens_int, 0);"""


def test_a_map_of_two_copies_by_one_selector_moves_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `shift(m, 1, 0) + shift(tokens_int, 1, 0)` is `shift(m + tokens_int, 1, 0)`: one head
    # copies the sum's few values, not one the mean's many and another the token
    root = _root(TWO_COPIES)
    vocab = [0, 1, 2]
    assert _movable(TWO_COPIES, vocab, 6) == frozenset({"s"})
    model = compile_sop(root, vocab, 6)
    assert model.metadata["certificate"]["ok"]
    assert _size(model) == (3_394, 3)
    inputs = all_inputs(vocab, 6)
    assert check_inputs(model, root, inputs) == len(inputs)
    _without(monkeypatch)
    assert _size(compile_sop(root, vocab, 6)) == (29_004, 3)


def test_a_map_raising_anything_on_an_uncopied_value_is_not_moved() -> None:
    # position 0's index, copied to every query, is 0; the map raises AttributeError (no error
    # of the interpreter's maps) on the indices no query copies, which only the moved map meets
    indices = S.IndicesSOp()
    copy = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=S.ConstSOp(value=0), comparison=S.Comparison.EQ),
        sop=indices,
        default=0,
    )
    root = S.MapSOp(fn=lambda v: "a" if v == 0 else v.upper(), inputs=(copy,))
    graph = build_graph(root)
    values = infer_values(graph, [0, 1], 3)
    assert values.values[graph.root] == ("a",)
    assert movable(graph, values) == frozenset()


def test_copies_by_two_selectors_are_not_moved() -> None:
    text = TWO_COPIES.replace("b = shift(tokens_int, 1, 0)", "b = shift(tokens_int, 2, 0)")
    assert _movable(text, [0, 1, 2], 6) == frozenset()


def test_a_program_no_other_build_proves_compiles_moved_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # test_position_folds' SEED without its fold: refused (a snap margin of 0.00379 against an
    # error of 0.00935, the output's mean reading the copy's one-hot of v0's values); with
    # `round` moved before the copy, proved (compiler.moved_build)
    monkeypatch.setattr("compiler.driver.positions_instead", lambda kept, *rest: kept)
    root = _root(SEED)
    model = compile_sop(root, list("012"), 12, causal=True)
    assert model.metadata["certificate"]["ok"]
    assert any("~before_copy:" in str(label) for label in model.metadata["residual"])
    inputs = all_inputs(list("012"), 5) + random_inputs(list("012"), 12, 60, 2155505)
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.slow
def test_without_the_fold_and_the_move_the_seed_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("compiler.driver.positions_instead", lambda kept, *rest: kept)
    monkeypatch.setattr("compiler.driver.moved_instead", lambda kept, *rest: kept)
    # (nor the copy-snaps last build, tried after them, which proves it too: 23,313 parameters)
    monkeypatch.setattr("compiler.driver.copy_snaps_instead", lambda kept, *rest: kept)
    # (nor the int-defaults last build, which proves it with the bool defaults written as ints:
    # compiler.int_defaults)
    monkeypatch.setattr("compiler.forms.Forms.with_int_defaults", lambda self: None)
    with pytest.raises(CompileError, match="snap margin of 0.00379"):
        compile_sop(_root(SEED), list("012"), 12, causal=True)


def test_the_moved_graph_copies_the_map_of_the_source() -> None:
    vocab, n = list("ab"), 6
    graph = build_graph(prepare(_root(MOVED), vocab, n))
    values = infer_values(graph, vocab, n)
    (name,) = movable(graph, values)
    moved = move_maps(graph, values, frozenset({name}))
    assert len(moved.nodes) == len(graph.nodes) + 1
    node = next(node for node in moved.nodes if node.name == name)
    assert node.op is Op.AGGREGATE and node.value == 0  # round(False)
    source = moved[node.inputs[1]]
    assert source.op is Op.MAP and source.name.endswith("~before_copy")
    assert not source.name.startswith("_")
    assert move_maps(graph, values, frozenset()) is graph


def test_a_map_of_a_mean_is_not_moved() -> None:
    # several keys: the mean of rounded values is not the rounded mean
    text = """m = aggregate(select(indices, indices, <=), tokens_int, 0);
res = round(aggregate(select(indices, indices, <=), m * 3, 0));"""
    assert _movable(text, [0, 1, 2], 6) == frozenset()


def test_a_map_of_a_copy_and_another_s_op_is_not_moved() -> None:
    text = """res = round(shift(aggregate(select(indices, indices, <=), tokens_int, 0), 1, 0) + indices);"""
    assert _movable(text, [0, 1, 2], 6) == frozenset()


def test_a_map_failing_on_a_value_no_query_copies_is_not_moved() -> None:
    # the copy of position 0 (a token, 1 or 2) never divides by zero; x is 0 elsewhere, where
    # the moved map would divide by it
    text = """x = tokens_int - indices;
res = 6 / aggregate(select(indices, 0, ==), x, 1);"""
    assert _movable(text, [1, 2], 4) == frozenset()
    # nor one failing on the default, even where no query takes it (kept as written)
    copy = "aggregate(select(indices, indices, ==), tokens_int, {})"
    assert _movable(f"res = 6 / {copy.format(0)};", [1, 2], 4) == frozenset()
    assert _movable(f"res = 6 / {copy.format(3)};", [1, 2], 4) != frozenset()


def test_a_random_program_moved_agrees() -> None:
    # bench/model_hashes.py's random278: `big` of the copy of position 0's width (839
    # parameters in 2 layers before, 476 moved)
    rng = random.Random(278)
    int_tokens = rng.random() < 0.5
    vocab = [0, 1, 2] if int_tokens else list("abc")
    root = random_program(rng, rng.randint(1, 4), int_tokens)
    model = compile_sop(root, vocab, 4)
    assert model.metadata["certificate"]["ok"]
    assert _size(model) == (476, 2)
    inputs = all_inputs(vocab, 4)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_a_map_read_two_ways_has_one_step_mlp_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _root(TWO_WAYS)
    vocab = [0, 1, 2, 3]
    model = compile_sop(root, vocab, 10)
    assert model.metadata["certificate"]["ok"]
    labels = [str(label) for label in model.metadata["residual"]]
    assert "f" not in labels and "f:0" in labels  # its number is the one-hot's view
    assert _size(model) == (3_578, 2)
    inputs = all_inputs(vocab, 5) + random_inputs(vocab, 10, 200, 68)
    assert check_inputs(model, root, inputs) == len(inputs)
    _without(monkeypatch)
    before = compile_sop(root, vocab, 10)
    assert "f" in [str(label) for label in before.metadata["residual"]]
    assert _size(before) == (4_277, 2)


def test_a_map_read_as_a_number_alone_keeps_its_own() -> None:
    text = """m = aggregate(select(indices, indices, <=), tokens_int, 0);
f = round(m * 2);
res = aggregate(select(indices, indices, <=), f, 0);"""
    model = compile_sop(_root(text), [0, 1, 2, 3], 8)
    labels = [str(label) for label in model.metadata["residual"]]
    assert not any(label.startswith("f:") for label in labels)


def test_no_larger_means_neither_more_parameters_nor_more_layers() -> None:
    def sketch(params: int, layers: int) -> Sketch:
        return _Sized(params, layers)  # type: ignore[return-value]

    assert no_larger(sketch(90, 2), 100, 2)
    assert no_larger(sketch(100, 1), 100, 2)
    assert not no_larger(sketch(100, 2), 100, 2)  # the same size: nothing gained
    assert not no_larger(sketch(10, 3), 100, 2)  # a layer more, however few parameters
    assert not no_larger(sketch(101, 1), 100, 2)


class _Sized:
    def __init__(self, params: int, layers: int) -> None:
        self.params, self.layers = params, layers


def test_the_options_default_to_nothing_moved_or_shared() -> None:
    options = BuildOptions()
    assert options.moved_maps == frozenset() and options.shared_readings == frozenset()


def test_a_last_build_kept_by_keep_proved_tries_its_smaller_builds_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SEED's fold (the driver's last build, through keep_proved) is proved and tries the maps
    # moved on it inside keep_proved; the driver tried them again on the result (planned twice)
    planned: list[BuildOptions] = []
    plan_build = driver.plan_build

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        planned.append(kwargs["options"])
        return plan_build(*args, **kwargs)

    monkeypatch.setattr("compiler.driver.plan_build", counted)
    model = compile_sop(_root(SEED), list("012"), 12, causal=True)
    assert _size(model) == (3_302, 2)
    folded_moved = [o for o in planned if o.positions and o.moved_maps]
    assert len(folded_moved) == 1


def test_smaller_builds_are_tried_once_per_build() -> None:
    vocab, n = list("ab"), 10
    graph = build_graph(prepare(_root(MOVED), vocab, n))
    model = compile_sop(_root(MOVED), vocab, n)
    kept = Kept(model, graph, Certificate(()), BuildOptions(), smaller_tried=True)

    def no_build(options: BuildOptions) -> None:
        raise AssertionError("a build planned again")

    builds = Builds(
        model=no_build,  # type: ignore[arg-type]
        sketch=no_build,  # type: ignore[arg-type]
        single_key=frozenset,
        mixed_copies=lambda: False,
        moves=lambda: frozenset({"x"}),
    )
    assert smaller_instead(builds, kept, lambda stage: None, []) is kept


# round and % 3 of a copy of v's many values: the first alone moved, the copy moves round(v)'s
# values and % 3 is stepped on its one-hot; the chain moved, the copy moves 0..2
CHAIN = MOVED.replace("round(shift(v, 1, False))", "round(shift(v, 1, False)) % 3")


def test_a_chain_of_maps_of_a_copy_moves_whole_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vocab, n = list("ab"), 10
    graph = build_graph(prepare(_root(CHAIN), vocab, n))
    names = movable(graph, infer_values(graph, vocab, n))
    assert len(names) == 2 and len(innermost(graph, names)) == 1
    root = _root(CHAIN)
    model = compile_sop(root, vocab, n)
    assert model.metadata["certificate"]["ok"]
    assert _size(model) == (5_367, 3)
    inputs = all_inputs(vocab, n)
    assert check_inputs(model, root, inputs) == len(inputs)
    # each chain's first alone (as before chains moved), then nothing moved
    monkeypatch.setattr(
        "compiler.driver.movable", lambda graph, values: innermost(graph, movable(graph, values))
    )
    assert _size(compile_sop(root, vocab, n)) == (15_049, 3)
    _without(monkeypatch)
    assert _size(compile_sop(root, vocab, n)) == (24_506, 4)


def test_the_moved_chain_maps_each_source_map() -> None:
    vocab, n = list("ab"), 6
    graph = build_graph(prepare(_root(CHAIN), vocab, n))
    values = infer_values(graph, vocab, n)
    names = movable(graph, values)
    moved = move_maps(graph, values, names)
    sources = [node for node in moved.nodes if node.name.endswith("~before_copy")]
    assert len(sources) == 2
    first, *rest = sources
    assert moved[first.inputs[0]].name == "v"
    for before, node in zip(sources, rest, strict=False):
        assert node.inputs == (before.index,)  # each map of the one before it, before the copy
    copy = moved[moved.root].inputs[1]
    assert moved[copy].op is Op.AGGREGATE and moved[copy].inputs[1] == sources[-1].index
    assert moved[copy].value == 0  # round(False) % 3
    # the first alone moves as before chains did
    alone = move_maps(graph, values, innermost(graph, names))
    assert len(alone.nodes) == len(graph.nodes) + 1


def test_a_chain_stops_at_a_map_failing_on_a_value_its_source_map_takes() -> None:
    # c * 2 moves (0 where x is 0, at positions no query copies); 6 / (c * 2) would divide by
    # that 0 before the copy, where the program never does
    text = """x = tokens_int - indices;
c = aggregate(select(indices, 0, ==), x, 1);
m = c * 2;
res = 6 / m;"""
    assert _movable(text, [1, 2], 4) == frozenset({"m"})
    safe = text.replace("6 / m", "6 / (m + 10)")
    assert _movable(safe, [1, 2], 4) == frozenset({"m", "_map_1", "res"})

"""S-ops the value analysis finds of the position alone, read as maps of indices
(compiler.position_folds): the compile's last build, tried where nothing else is proved.

`SEED` is mixed fuzz seed 2155505 `--causal` reduced (docs/campaigns.md): v0, a width over the
prefix (its `or` holds for every token) plus a prefix mean, is 1.5 i + 2 on every input, but
reads the tokens, so `position_functions` does not rewrite it. Built as written, the output's mean
of `round(shift(v0, 1, False))` reads the copy's one-hot columns times values up to 18: a snap
margin of 0.00379 against an error of 0.00935 at N = 12 (refused at N = 12 to 28). `WIDE` is the
same refusal in another shape: not causal, v0's width of a select by a token not in the
vocabulary and `<`, read by a mean over `select(tokens, tokens, <=)`."""

from __future__ import annotations

import itertools

import pytest

from compiler import compile_sop
from compiler.constants import fold_constants
from compiler.forms import prepare
from compiler.graph import build_graph
from compiler.position_folds import POSITIONS, fold_positions, position_tables
from compiler.smaller_builds import MOVED
from compiler.values import infer_values
from rasp.errors import CompileError, Diagnostic, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs
from tests.compiler.test_copy_sides import SORTED_BY_NOISY

SEED = """v0 = selector_width((select(0.5, tokens_int, <) or select("'", tokens, !=)) and select(indices, indices, <=)) + aggregate((select("\\n", "ß", !=)) and select(indices, indices, <=), (indices + 1), True);
w = selector_width(select(tokens, tokens, ==) and select(indices, indices, <=));
res = aggregate(select(w, indices, ==) and select(indices, indices, <=), round(shift(v0, 1, False)));"""
WIDE = """v = selector_width(select(tokens, "z", !=) and select(indices, indices, <)) + aggregate(select(indices, indices, <=), indices + 1, 0);
res = aggregate(select(tokens, tokens, <=), round(shift(v, 1, False)));"""


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


def _no_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("compiler.driver.positions_instead", lambda kept, *rest: kept)
    # (nor the build after it, which proves these moved: tests/compiler/test_smaller_builds.py)
    monkeypatch.setattr("compiler.driver.moved_instead", lambda kept, *rest: kept)
    # (nor the copy-snaps build, which proves them with v's one-hot snapped before the copy:
    # tests/compiler/test_copy_snaps.py)
    monkeypatch.setattr("compiler.driver.copy_snaps_instead", lambda kept, *rest: kept)
    _no_int_defaults(monkeypatch)


def _no_int_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    # (nor the last build, compiler.int_defaults, which proves WIDE with the shift's default
    # written 0: 2,848 parameters in 3 layers, its maps moved before the copy)
    monkeypatch.setattr("compiler.forms.Forms.with_int_defaults", lambda self: None)


def test_the_seed_compiles_with_its_positional_s_ops_folded_and_agrees() -> None:
    root = _root(SEED)
    model = compile_sop(root, list("012"), 12, causal=True)
    assert model.metadata["certificate"]["ok"]
    # the copy and its map are written by the positional embedding: one head for w, one for res
    assert len(model.metadata["layers"]) == 2
    inputs = all_inputs(list("012"), 5) + random_inputs(list("012"), 12, 60, 2155505)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_without_the_fold_the_seed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_fold(monkeypatch)
    with pytest.raises(CompileError, match="snap decision"):
        compile_sop(_root(WIDE), list("ab"), 12)


def test_another_shape_compiles_folded_and_agrees() -> None:
    root = _root(WIDE)
    model = compile_sop(root, list("ab"), 12)
    assert model.metadata["certificate"]["ok"]
    assert len(model.metadata["layers"]) == 1  # res alone: v and its copy are embedded
    inputs = all_inputs(list("ab"), 8) + random_inputs(list("ab"), 12, 60, 2155505)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_a_sort_by_a_noisy_key_compiles_folded_where_no_snap_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # test_copy_sides' SORTED_BY_NOISY: v0 (a width through a sort of the tokens, plus a mean)
    # is of the position alone, and so is the output, the rank of v0 among the earlier ones
    for module in ("side_tables", "selectors", "joint_readings"):
        monkeypatch.setattr(f"compiler.{module}.snapped", lambda built, reading: reading)
    root = _root(SORTED_BY_NOISY)
    model = compile_sop(root, list("012"), 6, causal=True)
    assert model.metadata["certificate"]["ok"]
    assert [e["name"] for e in model.metadata["embedding"]] == ["res"]
    inputs = all_inputs(list("012"), 6)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_the_folded_s_ops_are_those_of_one_value_per_position() -> None:
    vocab, n = list("012"), 12
    graph = build_graph(prepare(_root(SEED), vocab, n))
    values = infer_values(graph, vocab, n)
    folded = fold_constants(graph, values)
    tables = position_tables(folded, values)
    names = {graph[i].name for i in tables}
    # v0's width (i + 1), v0, its shifted copy and the map of it; not w (it counts tokens), not
    # `_map_1` (a map of indices already: embedded as it is), not the output (a mean by w)
    assert names == {"_selector_width_1", "v0", "_shift_aggregate_1", "_map_2"}
    by_name = {graph[i].name: table for i, table in tables.items()}
    assert by_name["v0"] == tuple(1.5 * i + 2 if i else 2 for i in range(n))
    assert by_name["_map_2"] == (0, *(round(1.5 * i + 0.5) for i in range(1, n)))
    assert type(by_name["_map_2"][0]) is int  # round(False): 0, as the interpreter gives it
    after = fold_positions(folded, values)
    for i, table in tables.items():
        node = after[i]
        assert node.fn is not None and after[node.inputs[0]].name == "indices"
        assert tuple(node.fn(k) for k in range(n)) == table
        assert (node.name, node.span, node.text) == (graph[i].name, graph[i].span, graph[i].text)


def test_a_value_that_depends_on_the_length_is_not_folded() -> None:
    # the width of every key but the query's own is n - 1 at every position: a function of the
    # length, not of the position
    text = 'v = selector_width(select(tokens, "z", !=) and select(indices, indices, !=));\nres = v;'
    vocab, n = list("ab"), 6
    graph = build_graph(prepare(_root(text), vocab, n))
    values = infer_values(graph, vocab, n)
    assert position_tables(fold_constants(graph, values), values) == {}


def test_a_proved_program_is_built_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    # v is i + 1 through the tokens; the default proves it, so the fold is never built
    text = 'v = selector_width(select(tokens, "z", !=) and select(indices, indices, <=));\nres = v * 2;'
    root = _root(text)
    model = compile_sop(root, list("ab"), 8)
    _no_fold(monkeypatch)
    before = compile_sop(root, list("ab"), 8)
    assert model.metadata["residual"] == before.metadata["residual"]
    assert model.tensor_digests() == before.tensor_digests()


def test_a_refusal_names_the_fold_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    # the fold's builds refused too (here, as if planning them had failed): the refusal is the
    # default's, with the fold among what was also tried
    def refused(*args: object, **kwargs: object) -> None:
        raise CompileError([Diagnostic("a table too large", None)])

    # (the fold's and the moved build's keep_proved, through alternatives.form_instead; the
    # driver's default holds its own reference)
    monkeypatch.setattr("compiler.alternatives.keep_proved", refused)
    monkeypatch.setattr("compiler.driver.copy_snaps_instead", lambda kept, *rest: kept)
    _no_int_defaults(monkeypatch)
    with pytest.raises(CompileError, match="snap decision") as refusal:
        compile_sop(_root(WIDE), list("ab"), 12)
    assert f"note: also tried {POSITIONS}: a table too large" in (refusal.value.render())
    assert f"note: also tried {MOVED}: a table too large" in (refusal.value.render())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "vocab", "causal"), [(SEED, "01", True), (WIDE, "ab", False)], ids=["seed", "wide"]
)
def test_every_input_up_to_12_agrees(text: str, vocab: str, causal: bool) -> None:
    root = _root(text)
    model = compile_sop(root, list(vocab), 12, causal=causal)
    # a causal program and model give each prefix's values at its positions: the inputs of
    # length 12 hold every shorter one
    lengths = [12] if causal else range(1, 13)
    inputs = [list(t) for n in lengths for t in itertools.product(vocab, repeat=n)]
    assert check_inputs(model, root, inputs, batch=512) == len(inputs)

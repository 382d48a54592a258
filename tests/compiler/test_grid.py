"""Per-position output grids (compiler.grid): a mean that is k / d_i at position i decodes on that
grid, which reaches lengths where one list of every value the output takes cannot be snapped."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.certify import _grid_margin, recheck
from compiler.fits import merge_noise
from compiler.grid import (
    MAX_DENOMINATOR,
    GridAxis,
    OutputGrid,
    denominators_of,
    int_positions,
    output_denominators,
    output_grid,
    widened_relation,
)
from rasp import sops as S
from rasp.interpreter import Interpreter, load_file
from rasp.parser import parse
from tests.runtime_helpers import as_runtime, run_compiled

PROGRAMS = Path(__file__).resolve().parents[2] / "programs"


def _relation(at: dict[int, list], max_len: int) -> dict[tuple[int, int], tuple]:
    """The same values at position i for every length: the relation of a prefix mean."""
    return {(i, n): tuple(at[i]) for n in range(1, max_len + 1) for i in range(n)}


def test_a_prefix_mean_has_denominator_i_plus_1() -> None:
    at = {i: [0, 1] if i == 0 else [k / (i + 1) for k in range(i + 2)] for i in range(6)}
    assert output_denominators(_relation(at, 6), 6) == (1, 2, 3, 4, 5, 6)


def test_denominators_take_the_lcm_over_lengths() -> None:
    # position 0 averages n keys at length n (a mean over every position): lcm(1..4) = 12
    relation = {(i, n): (0, 1 / n, 1.0) for n in range(1, 5) for i in range(n)}
    assert output_denominators(relation, 4) == (12, 12, 12, 4)


@pytest.mark.parametrize(
    "values",
    [
        [True, False],  # a decoded number cannot tell a bool from 0 / 1
        ["a", 0.5],
        [float("nan"), 0.5],
        [0.5, 2.0**-30],  # a grid finer than MAX_DENOMINATOR
    ],
)
def test_no_grid_for_what_is_not_a_fraction(values: list) -> None:
    assert output_denominators(_relation({0: values, 1: values}, 2), 2) is None


def test_denominators_are_the_least_ones_of_the_fractions() -> None:
    means = [(k, w) for w in range(1, 300) for k in range(-w, w + 1)]
    found = denominators_of(np.array([k / w for k, w in means]))
    assert found.tolist() == [Fraction(k, w).denominator for k, w in means]
    # 2**-30 is no noisy 0 (relative noise); inf and NaN have none
    assert denominators_of(np.array([2.0**-30, np.inf, np.nan, 7.0])).tolist() == [0, 0, 0, 1]


def test_no_grid_without_a_relation_or_for_whole_numbers() -> None:
    assert output_denominators(None, 4) is None
    assert output_denominators(_relation({0: [0, 1], 1: [2, 7]}, 2), 2) is None  # ints: list them
    assert MAX_DENOMINATOR >= 1 << 16


def test_a_list_that_separates_as_well_is_kept() -> None:
    halves = [0, 0.5, 1.0]
    relation = _relation({0: halves, 1: halves}, 2)
    assert output_grid(relation, halves, 2) is None  # both step 0.5: the list is as good
    thirds = [0, 1 / 3, 0.5, 2 / 3, 1.0]  # the list's gap 1/6, the grid's 1/3 (d = 3 at 1)
    relation = _relation({0: [0, 0.5, 1.0], 1: [0, 1 / 3, 2 / 3, 1.0]}, 2)
    assert output_grid(relation, thirds, 2) == OutputGrid(GridAxis.POSITION, (2, 3))


def test_the_list_is_measured_without_its_float64_twins() -> None:
    """Twins (0.75 and 0.7500000000000001) are one listed value: their gap of 1e-16 is no reason
    for a grid. The list's own gap, 1/4, is as wide as the grid's (d = 4 at position 1)."""
    quarters = [0, 0.25, 0.5, 0.75, 1.0]
    twins = [*quarters, 0.75 + 2**-52]
    relation = _relation({0: [0, 0.5, 1.0], 1: quarters}, 2)
    assert output_grid(relation, twins, 2) == OutputGrid(GridAxis.POSITION, (2, 4))
    assert output_grid(relation, merge_noise(twins), 2) is None


def test_a_sum_of_two_means_snaps_to_its_list_where_the_grid_is_too_fine() -> None:
    """A prefix mean plus a suffix mean at N = 16: position 0 is on a grid of lcm(1..16) =
    720,720, finer than float32 resolves at 3; the 1,651 sums (twins merged) lie at least 2.5e-4
    apart. A one-hot output of them was built before (13.7M parameters)."""
    program = (
        "q = aggregate(select(indices, indices, <=), tokens_int, 0);\n"
        "r = aggregate(select(indices, indices, >=), tokens_int, 0);\n"
        "s = q + r;\n"
    )
    interpreter = Interpreter()
    interpreter.exec_program(parse(program))
    root = interpreter.get("s")
    model = compile_sop(root, [0, 1, 2], 16, name="s")
    output = model.metadata["output"]
    assert output["encoding"] == "numerical" and "denominators" not in output
    assert len({float(v) for v in output["values"]}) == 1651  # 0 and 0.0 both listed
    assert model.param_count() < 1000
    inputs = [[2] * 16, [0, 1, 2] * 5, [1] * 16, [2, 0] * 8]
    inputs += random_inputs([0, 1, 2], 16, 60, seed=3)
    assert check_inputs(model, root, inputs) == len(inputs)


def _frac_prevs(max_len: int):
    root = load_file(PROGRAMS / "frac_prevs.rasp").get("frac_prevs")
    return root, compile_sop(root, list("xa"), max_len, name="frac_prevs")


@pytest.mark.exactness
def test_frac_prevs_compiles_at_n_256_and_decodes_the_exact_fraction() -> None:
    """At N = 256 the list of every k/(i+1) has 20,000 values, and 254/255 and 255/256 lie closer
    than float32 resolves a mean over 256 keys; at one position they are 1/256 apart."""
    root, model = _frac_prevs(256)
    output = model.metadata["output"]
    assert output["denominators"] == list(range(1, 257)) and "values" not in output
    assert model.metadata["format_version"] == 4
    assert recheck(model.weights, model.metadata).ok
    rng = random.Random(4)
    inputs = [["x"] * 256, ["a"] * 256, ["x", "a"] * 128, ["a"] * 255 + ["x"]]
    inputs += [[rng.choice("xa") for _ in range(rng.randint(200, 256))] for _ in range(40)]
    inputs += random_inputs("xa", 256, 40, seed=11)
    runtime = as_runtime(model)
    for batch in (inputs, *([x] for x in inputs[:4])):  # padded batches and single inputs
        for tokens, got in zip(batch, run_compiled(runtime, batch), strict=True):
            want = list(S.evaluate(root, tokens).values)
            assert got == want, tokens  # exactly: the same float64 k / (i+1) as the interpreter


def test_a_tampered_grid_is_refused_by_the_certificate() -> None:
    _, model = _frac_prevs(16)
    assert recheck(model.weights, model.metadata).ok
    output = model.metadata["output"]
    for wrong in ([1] * 16, [MAX_DENOMINATOR] * 16):  # off the grid; a step below the error
        output["denominators"] = wrong
        certificate = recheck(model.weights, model.metadata)
        (failure,) = certificate.failures()
        assert (failure.sublayer, failure.kind) == ("decoder", "snap")


def test_the_certifiers_grid_margin() -> None:
    x = np.array([0.5, 1 / 3, 0.0, 1e-12, 0.6000000000000001, 0.3])
    margin = _grid_margin(x, [1, 2, 3, 10])
    # 0.5: on the grids of 2 and 10, half a step of 1/10 is the smaller; 1/3: of 3 only; 0: of all
    assert margin[0] == pytest.approx(0.05) and margin[1] == pytest.approx(1 / 6)
    assert margin[2] == pytest.approx(0.05)
    assert margin[3] == 0.0  # on no grid (float64 noise is relative): refused, not read as 0
    assert margin[4] == pytest.approx(0.05) and margin[5] == pytest.approx(0.05)  # twins of 3/5


def test_a_mean_over_tokens_keeps_its_listed_values() -> None:
    """No relation (the selector compares tokens, not positions): the values are listed."""
    interp = Interpreter()
    interp.exec_program(
        parse('m = aggregate(select(tokens, tokens, <=), indicator(tokens == "a"));', "<t>")
    )
    model = compile_sop(interp.get("m"), list("abc"), 6, name="m")
    output = model.metadata["output"]
    assert "denominators" not in output and 1 / 6 in output["values"]
    assert model.metadata["format_version"] < 4


def _every_key_mean(max_len: int) -> dict[tuple[int, int], tuple]:
    """The relation of a mean over every key of a 0/1 value: k / n at every position of length n
    (floats: the mean of several keys, or the count over the length)."""
    return {
        (i, n): tuple(float(Fraction(k, n)) for k in range(n + 1))
        for n in range(1, max_len + 1)
        for i in range(n)
    }


def test_a_mean_over_every_key_has_one_denominator_per_length() -> None:
    relation = _every_key_mean(6)
    # length 1: whole floats 0.0 and 1.0, whose grid is 2 (a 1 would decode them as ints)
    assert output_denominators(relation, 6, GridAxis.LENGTH) == (2, 2, 3, 4, 5, 6)
    # by position: the lcm of the lengths position i occurs at (i + 1..6)
    assert output_denominators(relation, 6) == (60, 60, 60, 60, 30, 6)
    values = sorted({v for vs in relation.values() for v in vs})
    assert output_grid(relation, values, 6) == OutputGrid(GridAxis.LENGTH, (2, 2, 3, 4, 5, 6))


def test_whole_floats_get_a_denominator_of_two() -> None:
    # a prefix mean times 1.0: position 0 holds 0.0 or 1.0 (floats), later ones k / (i + 1)
    at = {i: [float(Fraction(k, i + 1)) for k in range(i + 2)] for i in range(4)}
    assert output_denominators(_relation(at, 4), 4) == (2, 2, 3, 4)
    ints = {**at, 0: [0, 1]}  # the mean of one key is that key's int: decoded as an int
    assert output_denominators(_relation(ints, 4), 4) == (1, 2, 3, 4)


def _compiled(text: str, vocab: list, max_len: int):
    interp = Interpreter()
    interp.exec_program(parse(text, "<t>"))
    root = interp.get("res")
    return root, compile_sop(root, vocab, max_len, name="res")


def _exactly(runtime, root, inputs: list[list]) -> None:
    """The model's outputs equal the interpreter's, value and type, single and batched."""
    for batch in (inputs, *([x] for x in inputs[:6])):
        for tokens, got in zip(batch, run_compiled(runtime, batch), strict=True):
            want = list(S.evaluate(root, tokens).values)
            assert [(type(v), v) for v in got] == [(type(v), v) for v in want], tokens


def test_a_prefix_mean_times_one_decodes_floats_at_position_0() -> None:
    root, model = _compiled(
        "res = aggregate(select(indices, indices, <=), tokens_int) * 1.0;", [0, 1, 2], 64
    )
    assert model.metadata["output"]["denominators"][:3] == [2, 2, 3]
    inputs = [[2, 0, 1], [1], [0]] + random_inputs([0, 1, 2], 64, 20, seed=2)
    _exactly(as_runtime(model), root, inputs)


@pytest.mark.exactness
def test_the_fraction_of_as_decodes_on_a_length_grid_at_n_256() -> None:
    """At N = 256 the list of every k/n has 20,000 values closer than float32 resolves a mean over
    256 keys; in one input they are 1/n apart. Refused before length grids (format version 5)."""
    root, model = _compiled(
        'res = selector_width(select(tokens, "a", ==)) / length;', ["a", "b"], 256
    )
    output = model.metadata["output"]
    assert output["length_denominators"] == [2, *range(2, 257)] and "values" not in output
    assert model.metadata["format_version"] == 5 and model.metadata["fractions_as_means"]
    assert recheck(model.weights, model.metadata).ok
    rng = random.Random(6)
    inputs = [["a"], ["b"], ["a"] * 256, ["b"] * 256, ["a"] * 255 + ["b"], ["a", "b"] * 128]
    inputs += [[rng.choice("ab") for _ in range(rng.randint(200, 256))] for _ in range(30)]
    inputs += random_inputs("ab", 256, 30, seed=12) + all_inputs("ab", 4)
    _exactly(as_runtime(model), root, inputs)


def test_a_tampered_length_grid_is_refused_by_the_certificate() -> None:
    _, model = _compiled('res = selector_width(select(tokens, "a", ==)) / length;', ["a", "b"], 16)
    output = model.metadata["output"]
    assert output["length_denominators"] == [2, *range(2, 17)]
    output["length_denominators"] = [1] * 16  # off the grid
    (failure,) = recheck(model.weights, model.metadata).failures()
    assert (failure.sublayer, failure.kind) == ("decoder", "snap")


def test_a_suffix_mean_has_one_denominator_per_distance_from_the_end() -> None:
    # position i of n averages the n - i keys from i on: k / (n - i); the last one key, an int
    relation = {
        (i, n): (0, 1) if i == n - 1 else tuple(float(Fraction(k, n - i)) for k in range(n - i + 1))
        for n in range(1, 6)
        for i in range(n)
    }
    assert output_denominators(relation, 5, GridAxis.END) == (1, 2, 3, 4, 5)
    values = sorted({v for vs in relation.values() for v in vs})
    assert output_grid(relation, values, 5) == OutputGrid(GridAxis.END, (1, 2, 3, 4, 5))


@pytest.mark.exactness
def test_a_suffix_mean_decodes_from_the_end_at_n_256() -> None:
    """The mirror of frac_prevs: listed, its values k/(n - i) crowd as frac_prevs' do; counted
    from the end they are 1/(n - i) apart. Refused before end grids (format version 5)."""
    root, model = _compiled(
        'res = aggregate(select(indices, indices, >=), indicator(tokens == "a"));', ["a", "b"], 256
    )
    output = model.metadata["output"]
    assert output["end_denominators"] == list(range(1, 257)) and "values" not in output
    assert model.metadata["format_version"] == 5
    assert recheck(model.weights, model.metadata).ok
    rng = random.Random(7)
    inputs = [["a"], ["b"], ["a"] * 256, ["b"] * 256, ["b"] + ["a"] * 255, ["a", "b"] * 128]
    inputs += [[rng.choice("ab") for _ in range(rng.randint(200, 256))] for _ in range(30)]
    inputs += random_inputs("ab", 256, 30, seed=13) + all_inputs("ab", 4)
    _exactly(as_runtime(model), root, inputs)  # ints at the last position, as the interpreter's


def test_a_map_of_a_count_over_the_length_gets_a_widened_relation() -> None:
    """`hist / length`: the count reads the tokens (no relation); at (i, n) the map may take
    w / n for any w the count can take, a superset whose grid (1/n) fits the map."""
    from compiler.graph import build_graph
    from compiler.values import infer_values

    interp = Interpreter()
    interp.exec_program(parse("res = selector_width(select(tokens, tokens, ==)) / length;", "<t>"))
    graph = build_graph(interp.get("res"))
    sets = infer_values(graph, ("a", "b"), 4)
    root = graph.output.index
    assert sets.relation[root] is None  # the value analysis keeps none for it
    widened = widened_relation(graph, sets.values, sets.relation, root, 4)
    assert widened is not None and set(widened) == {(i, n) for n in range(1, 5) for i in range(n)}
    # w = 1..4 (every token selects itself, so the count is never 0), as floats
    assert widened[(1, 3)] == tuple(w / 3 for w in range(1, 5))
    assert output_denominators(widened, 4, GridAxis.LENGTH) == (2, 2, 3, 4)


def test_a_chain_without_related_inputs_is_widened_over_its_sources(monkeypatch) -> None:
    """`(3 * f - 2) if tokens == "c" else f * 0.5` with f = count / length: none of its inputs has
    a relation (each reads the tokens), but the sources of its chain are the length (which has
    one), the count and the tokens; over them the chain takes k / (2n) at length n."""
    import compiler.grid
    from compiler.graph import build_graph
    from compiler.values import infer_values

    text = (
        'f = selector_width(select(tokens, "a", ==)) / length;\n'
        'res = (3 * f - 2) if tokens == "c" else f * 0.5;'
    )
    interp = Interpreter()
    interp.exec_program(parse(text, "<t>"))
    graph = build_graph(interp.get("res"))
    sets = infer_values(graph, ("a", "b", "c"), 6)
    root = graph.output.index
    assert all(sets.relation[i] is None for i in graph[root].inputs)
    widened = widened_relation(graph, sets.values, sets.relation, root, 6)
    assert widened is not None
    assert output_denominators(widened, 6, GridAxis.LENGTH) == (2, 4, 6, 8, 10, 12)
    # 6 lengths x 7 counts x 3 tokens, 6 maps each: a cap below that widens nothing
    monkeypatch.setattr(compiler.grid, "MAX_WIDENED_CALLS", 6 * 7 * 3 * 6 - 1)
    assert widened_relation(graph, sets.values, sets.relation, root, 6) is None


@pytest.mark.exactness
def test_a_gated_map_of_a_fraction_decodes_on_a_length_grid_at_n_256() -> None:
    text = (
        'f = selector_width(select(tokens, "a", ==)) / length;\n'
        'res = (3 * f - 2) if tokens == "c" else f * 0.5;'
    )
    root, model = _compiled(text, list("abc"), 256)
    assert "length_denominators" in model.metadata["output"]  # refused before: a list
    assert model.param_count() < 1_000  # 290
    inputs = all_inputs("abc", 4) + random_inputs("abc", 256, 40, seed=9)
    # equal in value and type: k / (2n) may differ from 3 * (c / n) - 2 in float64's last bit
    assert check_inputs(model, root, inputs) == len(inputs)
    for tokens, got in zip(inputs, run_compiled(as_runtime(model), inputs), strict=True):
        assert all(type(v) is float for v in got), tokens


@pytest.mark.exactness
def test_a_count_of_the_querys_token_over_the_length_decodes_on_a_length_grid() -> None:
    root, model = _compiled(
        "res = selector_width(select(tokens, tokens, ==)) / length;", list("abc"), 16
    )
    output = model.metadata["output"]
    assert output["length_denominators"] == [2, *range(2, 17)]
    assert model.param_count() < 50_000  # 261,175 with a one-hot of every fraction
    inputs = all_inputs("abc", 5) + random_inputs("abc", 16, 60, seed=3)
    _exactly(as_runtime(model), root, inputs)


REVERSED = {
    # a prefix mean, k / (j + 1) at key j: reversed, k / (n - i) at position i (from the end)
    "prefix": 'f = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n',
    # a fraction of the length: k / n at every key, so at every position
    "fraction": 'f = selector_width(select(tokens, "a", ==)) / length;\n',
}
FLIP = "res = aggregate(select(indices, length - indices - 1, ==), f);"


def test_a_copy_by_positions_takes_its_sources_widened_values_at_the_selected_key() -> None:
    """The value analysis maps a copy's source relation where the source has one; a map of a
    fraction has none (it reads the tokens), and the output grid follows the flip through its
    widened relation: k / (2n) at every position of length n."""
    from compiler.graph import build_graph
    from compiler.values import infer_values

    text = (
        'f = selector_width(select(tokens, "a", ==)) / length;\n'
        'g = (f * 0.5) if tokens == "c" else f;\n' + FLIP.replace("f);", "g);")
    )
    interp = Interpreter()
    interp.exec_program(parse(text, "<t>"))
    graph = build_graph(interp.get("res"))
    sets = infer_values(graph, ("a", "b", "c"), 5)
    root = graph.output.index
    g = graph[root].inputs[1]
    assert sets.relation[g] is None
    copied = widened_relation(graph, sets.values, sets.relation, root, 5)
    source = widened_relation(graph, sets.values, sets.relation, g, 5)
    assert copied is not None and source is not None
    assert all(copied[(i, n)] == source[(n - 1 - i, n)] for n in range(1, 6) for i in range(n))
    assert output_denominators(copied, 5, GridAxis.LENGTH) == (2, 4, 6, 8, 10)


@pytest.mark.exactness
@pytest.mark.parametrize("kind, grid", [("prefix", "end"), ("fraction", "length")])
def test_a_reversed_mean_decodes_on_the_grid_it_has_after_the_flip(kind: str, grid: str) -> None:
    root, model = _compiled(REVERSED[kind] + FLIP, ["a", "b", "c"], 64)
    output = model.metadata["output"]
    assert f"{grid}_denominators" in output and "values" not in output
    assert model.param_count() < 5_000  # 4,688
    inputs = [["a"] * 64, ["b"] + ["a"] * 63, ["a"] * 63 + ["c"]] + all_inputs("abc", 4)
    inputs += random_inputs("abc", 64, 60, seed=17)
    _exactly(as_runtime(model), root, inputs)


@pytest.mark.slow
@pytest.mark.exactness
@pytest.mark.parametrize("kind", ["prefix", "fraction"])
def test_a_reversed_mean_compiles_at_n_256(kind: str) -> None:
    """Listed, the reversed mean's values crowd closer than float32 resolves: refused at N = 256
    before the grid followed the flip (16,592 parameters now)."""
    root, model = _compiled(REVERSED[kind] + FLIP, ["a", "b", "c"], 256)
    assert model.param_count() < 20_000
    rng = random.Random(256)
    inputs = [["a"] * 256, ["c"] + ["a"] * 255, ["a", "b"] * 128]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(200, 256))] for _ in range(30)]
    inputs += random_inputs("abc", 256, 30, seed=18)
    _exactly(as_runtime(model), root, inputs)


@pytest.mark.exactness
@pytest.mark.parametrize("max_len", [16, 64])
def test_a_position_of_ints_on_a_length_grid_decodes_as_ints(max_len: int) -> None:
    """At position 0 `f if indices > 0 else 0` is the int 0 at every length, where the length
    grid's e_n > 1 decoded it as 0.0: the file lists the position (format version 6)."""
    root, model = _compiled(
        'f = selector_width(select(tokens, "a", ==)) / length;\nres = f if indices > 0 else 0;',
        ["a", "b"],
        max_len,
    )
    output = model.metadata["output"]
    assert "length_denominators" in output and output["int_positions"] == [0]
    assert model.metadata["format_version"] == 6
    assert recheck(model.weights, model.metadata).ok
    inputs = [["a"], ["b"], ["a"] * max_len, ["b", "a"] * (max_len // 2)] + all_inputs("ab", 4)
    inputs += random_inputs("ab", max_len, 40, seed=max_len)
    _exactly(as_runtime(model), root, inputs)


def test_int_positions_need_ints_at_every_length() -> None:
    # position 0 holds the int 0 at length 1 and 0.5 at length 2: not a position of ints
    relation = {(0, 1): (0,), (0, 2): (0.5,), (1, 2): (0, 0.5)}
    grid = OutputGrid(GridAxis.LENGTH, (1, 2))
    assert int_positions(relation, grid, 2) == ()
    relation = {(0, 1): (0,), (0, 2): (0,), (1, 2): (0, 0.5)}
    assert int_positions(relation, grid, 2) == (0,)
    # a position whose every denominator is 1 already decodes as ints: not listed
    assert int_positions(relation, OutputGrid(GridAxis.LENGTH, (1, 1)), 2) == ()

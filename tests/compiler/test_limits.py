"""Limits that once refused (or crashed on) programs the compiler can make exact, or refused them
with a misleading reason."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

import transformer
from compiler import compile_sop, mlp
from rasp.errors import CompileError
from rasp.sops import evaluate
from rasp.tools.verify import same_value
from tests.compiler.limit_checks import HALVES, agrees_everywhere, program


def test_a_huge_table_mlp_is_refused_located_before_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a + b over two readings of 282 means each: a 79K-row table, once a MemoryError in the
    # certifier after minutes of building (without the build that copies a and b as numbers,
    # which the compile tries once this one is refused: see the next test)
    from compiler import default_builds

    monkeypatch.setattr(default_builds, "copies_instead_of", lambda *args: None)
    median = program(HALVES, "median")
    with pytest.raises(CompileError) as err:
        compile_sop(median, list(range(11)), 9)
    problem, *notes = err.value.diagnostics
    # (78,961 inputs, 79,524 before the table of a mean wrote an int 0 or 1 first: compiler/fits.py)
    assert problem.message.startswith(
        "'a + b' needs a table MLP of 78,681 hidden units over 78,961"
    )
    assert "6,212,730,441 (input, unit) pairs, more than the compiler builds" in problem.message
    # the build with maps fused through their inputs was tried too, and says why it failed
    assert [n.severity for n in notes] == ["note"]
    assert notes[0].message.startswith("also tried with maps fused through their inputs: '(a +")
    assert problem.span is not None and problem.span.text() == "a + b"
    assert "smaller vocabulary or maximum length" in (problem.hint or "")


@pytest.mark.exactness
def test_the_median_of_copied_means_is_built_copying_numbers() -> None:
    # Where the table above is refused, a and b copied as one number each (one key each) make
    # a + b a free view: 7,020 parameters in 2 layers, certified.
    median = program(HALVES, "median")
    model = compile_sop(median, list(range(11)), 9)
    assert model.param_count() < 10_000 and len(model.metadata["layers"]) == 2
    runtime = transformer.from_tensors(model.weights, model.metadata)
    rng = random.Random(9)
    inputs = [[rng.randrange(11) for _ in range(rng.randint(1, 9))] for _ in range(300)]
    inputs += [[t] * n for t in (0, 10) for n in (1, 2, 9)]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        want = list(evaluate(median, tokens).values)
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("x = tokens_int * indices;", "table"),  # two categorical readings
        ("x = round(3 * aggregate(select(indices, indices, <=), tokens_int));", "step"),
    ],
)
def test_every_mlp_kind_checks_its_size(monkeypatch, text: str, kind: str) -> None:
    monkeypatch.setattr(mlp, "MAX_MLP_PAIRS", 10)
    with pytest.raises(CompileError) as err:
        compile_sop(program(text, "x"), [0, 1, 2], 4)
    # (the other builds tried, refused alike, named in one note)
    problem, *notes = err.value.diagnostics
    assert f"needs a {kind} MLP of" in problem.message and problem.span is not None
    assert all(n.message.endswith(": refused for the same reason") for n in notes)
    monkeypatch.undo()
    compile_sop(program(text, "x"), [0, 1, 2], 4)


@pytest.mark.exactness
@pytest.mark.parametrize("numerical", [True, False])
def test_outputs_closer_than_float32_fall_back_to_a_one_hot(numerical: bool) -> None:
    # tanh(9) and tanh(10) differ by 2.6e-8, below the float32 error of a numerical logit: the
    # snap was refused with a hint ("make the value categorical") that did not help tracr users
    from rasp import tracr as rasp

    tanh = rasp.Map(math.tanh, rasp.tokens)
    sop = rasp.numerical(tanh) if numerical else tanh
    vocab = list(range(11))
    model = compile_sop(sop, vocab, 3, name="tanh")
    assert model.metadata["output"]["encoding"] == "categorical"
    runtime = transformer.from_tensors(model.weights, model.metadata)
    for n in range(1, 4):
        for tokens in itertools.product(vocab, repeat=n):
            assert runtime.run([list(tokens)])[0] == [math.tanh(t) for t in tokens]


def test_a_one_hot_fallback_over_the_parameter_limit_is_refused_before_it_is_built() -> None:
    # The size prediction runs only above N = 64, and for the first build: a one-hot fallback for
    # an output of 18,051 values at N = 17 (a random program) allocated gigabytes before failing.
    # Now the assembly refuses it from its shape, and the refusal says why no one-hot was used.
    from rasp import tracr as rasp

    tanh = rasp.numerical(rasp.Map(math.tanh, rasp.tokens))
    with pytest.raises(CompileError) as refused:
        # the numerical model stores 281 parameters, the one-hot one 375
        compile_sop(tanh, list(range(11)), 3, name="tanh", max_params=300)
    (problem,) = refused.value.diagnostics
    assert "snap" in problem.message
    assert "a one-hot output was not built either: the model would have" in problem.hint
    assert "the model would have 375 parameters" in problem.hint


def test_an_alternative_that_runs_out_of_memory_leaves_the_located_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Certifying a one-hot output of thousands of values can need more memory than there is
    # (`indices` plus two means at N = 24, 5,389 values, under a 6 GB address limit; simulated
    # here): the compile refuses the numerical model, located, and says what happened to the
    # one-hot one, instead of failing with MemoryError.
    from compiler import build_trials
    from rasp import tracr as rasp

    def out_of_memory(model: Any) -> Any:
        if model.metadata["output"]["encoding"] == "categorical":
            raise MemoryError
        return certify(model)

    certify = build_trials.certify_model
    monkeypatch.setattr(build_trials, "certify_model", out_of_memory)
    tanh = rasp.numerical(rasp.Map(math.tanh, rasp.tokens))
    with pytest.raises(CompileError) as refused:
        compile_sop(tanh, list(range(11)), 3, name="tanh")
    (problem,) = refused.value.diagnostics
    assert "snap" in problem.message
    assert "a one-hot output was built, and certifying it ran out of memory" in problem.hint


def test_a_one_hot_fallback_whose_unembedding_alone_is_over_the_limit_is_not_built() -> None:
    from compiler.build_facts import one_hot_too_large
    from compiler.model import CompiledModel

    def numerical(n_values: int) -> CompiledModel:
        return CompiledModel({}, {}, {"output": {"values": list(range(n_values))}})

    assert one_hot_too_large(numerical(17), 300) is None  # 289 parameters may fit
    note = one_hot_too_large(numerical(18), 300)
    assert note is not None and "18 values was not built: it needs at least 324 parameters" in note
    assert one_hot_too_large(numerical(18), None) is None  # no limit


def test_a_one_hot_fallback_for_more_values_than_an_output_lists_is_not_planned() -> None:
    # unlisted: more than grid.MAX_OUTPUT_VALUES values, so at least 10^10 parameters
    from compiler.build_facts import one_hot_too_large
    from compiler.model import CompiledModel

    def output(meta: dict) -> CompiledModel:
        return CompiledModel({}, {}, {"output": meta})

    floats = {"type": "floats"}
    note = one_hot_too_large(output(floats), 200_000_000)
    assert note is not None and "more than 100,000" in note
    assert one_hot_too_large(output(floats), None) is None  # no limit
    # a grid decodes it: its values may be few
    assert one_hot_too_large(output({**floats, "denominators": [1, 2]}), 300) is None


def test_the_numerical_output_is_analysed_once_for_every_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a product of a mean and the index at N = 32 spent 10 s of each build on its output's
    # relation, grid and snap targets: one value analysis, one such result for every build
    from compiler import encode
    from compiler.build_stages import plan_build
    from compiler.build_trials import BuildOptions
    from compiler.values import infer_values

    calls: list[int] = []
    real = encode.output_grid
    monkeypatch.setattr(encode, "output_grid", lambda *a: calls.append(1) or real(*a))
    sop = program("v0 = aggregate(select(tokens, tokens, <=), indices);\nm0 = v0 * indices;", "m0")
    analysis: list = []

    def analyse(graph):
        if not analysis:
            analysis.append(infer_values(graph, ("a", "b"), 6))
        return analysis[0]

    for options in (BuildOptions(), BuildOptions(gates=False)):
        plan_build(
            sop,
            ("a", "b"),
            6,
            causal=False,
            note=lambda _: None,
            options=options,
            head_masks=True,
            analyse=analyse,
        )
    assert len(calls) == 1


def test_a_model_over_the_parameter_limit_is_refused_at_its_output() -> None:
    text = "x = aggregate(select(tokens, tokens, ==), indices);"
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "x"), list("abc"), 8, name="x", max_params=100)
    problem, *notes = refused.value.diagnostics
    assert problem.message.startswith("the model would have ")
    # (the eagerly matched build and the copy build, over the limit alike: no other reason)
    assert notes == []
    assert problem.span is not None and problem.span.text().startswith("aggregate(")
    assert "the limit is 100 parameters" in (problem.hint or "")


def test_a_model_over_the_parameter_limit_is_refused_before_its_token_embedding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sketch built the [|V| + 2, d_model] token embedding only to learn whether the model
    has a positional one, and assembly built it before check_params: reverse over 5,000 tokens
    under a raised limit made three of 400 MB each before being refused."""
    from compiler import assemble

    def embedded(*args: object) -> None:
        raise AssertionError("the token embedding was built")

    monkeypatch.setattr(assemble, "_embeddings", embedded)
    text = "x = aggregate(select(indices, length - indices - 1, ==), tokens);"
    with pytest.raises(CompileError, match="the model would have .* parameters"):
        compile_sop(program(text, "x"), list("abc"), 8, name="x", max_params=100)


def test_assembly_rounds_only_the_special_rows_of_the_token_embedding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The BOS and PAD residuals, which assembly evaluates, read W_E's last two rows: rounding
    all |V| + 2 rows to float32 and back took seconds at 5,000 tokens (length over 5,000 tokens
    built a 25M-parameter model, most of it W_E)."""
    from compiler import assemble

    stored: list[tuple[int, ...]] = []
    rounded = assemble._stored

    def recorded(weights: dict, prefixes: tuple[str, ...]) -> dict:
        out = rounded(weights, prefixes)
        stored.extend(v.shape for k, v in out.items() if k == "embed.W_E")
        return out

    monkeypatch.setattr(assemble, "_stored", recorded)
    text = "x = aggregate(select(indices, length - indices - 1, ==), tokens);"
    model = compile_sop(program(text, "x"), list("abcdef"), 8, name="x")
    assert model.weights["embed.W_E"].shape[0] == 8 and stored
    assert all(shape[0] == 2 for shape in stored)


def test_a_model_whose_header_safetensors_would_not_write_is_refused_with_its_largest_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The certifier's reach is in the file's header, which safetensors caps at 100 MB: a larger
    one is refused at compile time, not an internal error in the writer (the fraction of the own
    token at N = 1024 needs 199 MB). A lower cap stands in for the 100 MB here."""
    import compiler.refusals

    text = "x = selector_width(select(tokens, tokens, ==)) / length;"
    model = compile_sop(program(text, "x"), list("abc"), 16, name="x")
    assert model.header_bytes() < 1_000_000
    monkeypatch.setattr(compiler.refusals, "MAX_HEADER_BYTES", model.header_bytes() - 1)
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "x"), list("abc"), 16, name="x")
    (problem,) = refused.value.diagnostics
    assert problem.message.startswith("at max-len 16 the model's file would need a 0.")
    assert " MB header, over the 0." in problem.message
    assert "the largest part is the " in problem.message
    assert problem.span is not None and problem.span.text().startswith("selector_width(")


def test_the_predicted_header_is_the_written_one_or_larger(tmp_path) -> None:
    import struct

    model = compile_sop(
        program("x = selector_width(select(tokens, tokens, ==)) / length;", "x"),
        list("abc"),
        16,
        name="x",
    )
    model.save(tmp_path / "m.safetensors")
    written = struct.unpack("<Q", (tmp_path / "m.safetensors").read_bytes()[:8])[0]
    assert written <= model.header_bytes() < written + 4096


def test_a_snap_refusal_does_not_suggest_a_categorical_value() -> None:
    from compiler.certificate import Certificate, Check
    from compiler.graph import build_graph
    from compiler.refusals import refusals

    graph = build_graph(program("x = indices + 1;", "x"))
    snap = Check("decoder", "x", "unembed", "snap", 1e-8, 1e-6, "output 1")
    (problem,) = refusals(Certificate((snap,)), graph, one_hot="a one-hot output was tried too")
    assert "categorical" not in (problem.hint or "")
    assert "closer together than float32 resolves (a one-hot output was tried" in problem.hint


def test_a_refusal_lists_the_first_failing_sublayer_and_counts_the_rest() -> None:
    # errors propagate: once one sublayer fails, most after it do too (most_freq at N = 725 listed
    # 83 failures, bounds up to 1e47); the ones to fix are the first
    from compiler.certificate import Certificate, Check
    from compiler.graph import build_graph
    from compiler.refusals import refusals

    graph = build_graph(program("y = indices + 1; x = y * 2;", "x"))
    checks = (
        Check("layer 0 attn", "y", "indices + 1", "softmax", 20, 1, "query 0"),
        Check("layer 0 mlp", "y", "indices + 1", "relu", 3, 5, "unit 0"),
        Check("layer 0 mlp", "x", "y * 2", "relu", 3, 4, "unit 1"),
        Check("layer 1 mlp", "x", "y * 2", "relu", 3, 1e40, "unit 2"),
        Check("decoder", "x", "unembed", "argmax", 1, 1e41, "output 0"),
    )
    problems = refusals(Certificate(checks), graph)
    assert [p.message.split(":")[0] for p in problems[:2]] == [
        "'indices + 1' (layer 0 mlp, y)",
        "'y * 2' (layer 0 mlp, x)",
    ]
    assert "a relu decision has margin 3 but float32 error up to 5" in problems[0].message
    assert problems[2].message.startswith(
        "2 more decisions fail after these, in 2 sublayers from layer 1 mlp on"
    )
    assert problems[2].span is None and len(problems) == 3
    # one failure: nothing to count; "an argmax", not "a argmax"; the decoder is named as the
    # output's, not as 'unembed', and its hint does not ask for a categorical value it has
    (alone,) = refusals(Certificate(checks[-1:]), graph)
    assert alone.message.startswith("the output 'x' (decoder): an argmax decision")
    hint = alone.hint or ""
    assert "categorical" not in hint and "blocks that compute it" in hint


@pytest.mark.parametrize(
    ("text", "vocab", "values"),
    [
        ("y = tokens_int * 2; d = y - tokens_int;", [0, 1, 2, 3], (0, 1, 2, 3)),
        ("y = indices * 2; d = y - indices + length;", [0], (1, 2, 3, 4, 5, 6, 7)),
        # one s-op read twice meets itself: was -1..1, and the model (a view that is 0) refused
        # for not giving -1 ("snap decision has margin 0.5 but float32 error up to 1")
        ("m = aggregate(select(indices, indices, <=), tokens_int); d = m - m;", [0, 1], (0.0, 0)),
        ("y = tokens_int % 3; d = y * y;", [0, 1, 2, 3], (0, 1, 4)),
    ],
)
def test_a_map_of_inputs_with_a_shared_source_lists_only_what_occurs(
    text: str, vocab: list, values: tuple
) -> None:
    from compiler.graph import build_graph
    from compiler.values import infer_values

    graph = build_graph(program(text, "d"))
    assert infer_values(graph, vocab, 4).of(graph.output) == values  # was -3..6 for the first


SHARED = [
    # the condition is always true: `y > 100` (False) never reaches the output, which was refused
    # as "a bool or a number"
    ("y = tokens_int * 2;\nd = tokens_int if y >= tokens_int else y > 100;", [0, 1, 2, 3]),
    # g and m1 share m1, and g's sources (two means) are not one cheap block: a table over
    # (m1, g) whose unreachable rows give outputs outside the value set
    (
        (
            "m1 = aggregate(select(indices, indices, <=), tokens_int);\n"
            "m2 = aggregate(select(indices, indices, >=), tokens_int);\n"
            "g = round(m1 * 2 + m2 * 3);\n"
            'd = "big" if (g - m1 > 2) else "small";'
        ),
        [0, 1, 2],
    ),
    # `v2 - v2` is always 0: refused at every N while its values were taken as independent
    (
        (
            "v0 = aggregate(select(indices, indices - 1, ==), tokens_int == 1);\n"
            "v2 = v0 % 3;\n"
            "d = v2 - v2;"
        ),
        [0, 1],
    ),
]


@pytest.mark.exactness
@pytest.mark.parametrize(("text", "vocab"), SHARED)
def test_maps_with_a_shared_source_compile_and_agree(text: str, vocab: list) -> None:
    d = program(text, "d")
    agrees_everywhere(d, compile_sop(d, vocab, 4), vocab, 4)


def test_a_named_tracr_map_keeps_its_name_after_fusion() -> None:
    # the select's None check of `opp` was the materialised node, so the MLP showed as `_map_2`
    from rasp import tracr as rasp

    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    # not affine (`length - indices - 1` would be addressed numerically, with no map block at all)
    opp = rasp.SequenceMap(lambda n, i: (n - i - 1) % 7, length.named("length"), rasp.indices)
    opp = opp.named("opp")
    flip = rasp.Select(rasp.indices, opp, rasp.Comparison.EQ).named("flip")
    reverse = rasp.Aggregate(flip, rasp.tokens).named("reverse")
    model = compile_sop(reverse, list("abc"), 5)
    mlps = [m["name"] for layer in model.metadata["layers"] for m in layer["mlp"]]
    assert mlps == ["opp"]
    assert any(label.startswith("opp") for label in model.metadata["residual"])
    runtime = transformer.from_tensors(model.weights, model.metadata)
    assert runtime.run(["abca"])[0] == list("acba")


def test_a_node_without_a_span_is_located_at_the_first_node_reading_it() -> None:
    # the digits compiler.order_digits makes have no span; a refusal there points at their width
    import dataclasses

    from compiler.graph import Graph, build_graph
    from compiler.refusals import _spans

    graph = build_graph(program("y = indices + 1; x = y * 2;", "x"))
    nodes = tuple(dataclasses.replace(n, span=None) if n.name == "y" else n for n in graph.nodes)
    spans = _spans(Graph(nodes, graph.root))
    x = next(n for n in graph.nodes if n.name == "x")
    assert spans["y"] == x.span is not None

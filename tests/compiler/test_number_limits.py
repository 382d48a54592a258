"""Limits of numbers that once refused (or crashed on) programs the compiler can make exact, or
refused them with a misleading reason: widths and fractions past float32's steps, values past
float32 and float64, metadata JSON cannot hold."""

from __future__ import annotations

import math
import random

import pytest

import transformer
from compiler import compile_sop
from compiler.model import config_params
from rasp import sops as S
from rasp.errors import CompileError, Source
from rasp.sops import evaluate
from rasp.tools.verify import same_value
from tests.compiler.limit_checks import agrees_everywhere, program


@pytest.mark.slow
@pytest.mark.exactness
def test_a_width_decodes_to_a_number_past_w_720_at_n_1024() -> None:
    # The steps decoding hist's 1/(w+1) near w = 1023 have slopes of about 8.4M: over every input
    # their pre-activations span 2^23, more than float32's integer band [2^23, 2^24) holds, so they
    # once went without it, rounded, and the output had to be a 1,025-wide one-hot (5.4M
    # parameters). Far below its threshold a unit is off whatever the rounding: only the inputs
    # above that need the band.
    import sop_builders as B

    model = compile_sop(B.hist(), list("ab"), 1024)
    assert model.metadata["output"]["encoding"] == "numerical"
    assert model.param_count() < 100_000
    runtime = transformer.from_tensors(model.weights, model.metadata)
    inputs = [["a"] * 1024, ["a"] * 1023 + ["b"], ["b"] + ["a"] * 730, ["a", "b"] * 512, ["b"]]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert got == list(evaluate(B.hist(), tokens).values)


@pytest.mark.exactness
def test_a_map_of_the_length_steps_on_its_decoded_number_where_the_fraction_is_too_fine() -> None:
    # A rotation's `(indices + 3) % length` is a step MLP over the length with indices as its
    # context. On the length head's 1/(length+1), steps 1/(w(w+1)) apart with 200 contexts' noise
    # cannot be resolved at N = 200 (refused until the map fell back to the decoded length).
    text = "rot = aggregate(select(indices, (indices + 3) % length, ==), tokens);"
    rot = program(text, "rot")
    model = compile_sop(rot, list("abc"), 200, name="rot")
    mlps = [block["name"] for layer in model.metadata["layers"] for block in layer["mlp"]]
    assert mlps[:2] == ["length", "_map_2"]  # the length decoded first, then the map over it
    runtime = transformer.from_tensors(model.weights, model.metadata)
    rng = random.Random(0)
    inputs = [rng.choices("abc", k=n) for n in (1, 2, 3, 4, 5, 199, 200)]
    inputs += [rng.choices("abc", k=rng.randint(6, 200)) for _ in range(40)]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert got == list(evaluate(rot, tokens).values)


@pytest.mark.exactness
def test_a_map_of_a_token_and_the_index_steps_over_the_index_where_that_is_smaller() -> None:
    # A digit of a sort key's rank over (token, index) changes every 10 positions: a step MLP over
    # the index number with the token as context needs a few units per change, where a table
    # spends one per (token, index) pair whose digit is not the most common one.
    import sop_builders as B

    # (an "a" adding 100 leaves the tens digit alone: a function of the index, read from its
    # one-hot with no MLP at all, compiler.table_columns; an "a" adding 5 moves it)
    alone = B.mapped(
        lambda t, i: (i + (100 if t == "a" else 0)) // 10 % 10, B.tokens(), S.IndicesSOp()
    )
    assert not any(layer["mlp"] for layer in compile_sop(alone, list("abc"), 64).metadata["layers"])
    tens = B.mapped(
        lambda t, i: (i + (5 if t == "a" else 0)) // 10 % 10,
        B.tokens(),
        S.IndicesSOp(),
        name="tens",
    )
    model = compile_sop(tens, list("abc"), 64, name="tens")
    (spec,) = [block for layer in model.metadata["layers"] for block in layer["mlp"]]
    assert spec["name"] == "tens"
    assert model.metadata["config"]["d_mlp"] <= 40  # a table: 163 units
    runtime = transformer.from_tensors(model.weights, model.metadata)
    rng = random.Random(1)
    inputs = [rng.choices("abc", k=rng.randint(1, 64)) for _ in range(60)]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert got == list(evaluate(tens, tokens).values)


@pytest.mark.exactness
def test_a_mean_of_the_length_is_the_length() -> None:
    # Every mean of 1..17 was once a value of `same_len` (1,555 of them), and the sum below was
    # refused at N = 17 for its 2,000,000 input combinations (3M parameters at N = 5).
    import sop_builders as B

    root = B.means_of_length()
    model = compile_sop(root, list("ab"), 5, name="sum")
    assert config_params(model.metadata["config"]) < 20_000
    agrees_everywhere(root, model, "ab", 5)
    model = compile_sop(root, list("ab"), 17, name="sum")
    runtime = transformer.from_tensors(model.weights, model.metadata)
    rng = random.Random(2)
    inputs = [rng.choices("ab", k=n) for n in range(1, 18)]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert all(
            same_value(g, w) for g, w in zip(got, evaluate(root, tokens).values, strict=True)
        )


def test_an_unreachable_default_is_no_one_hot_output() -> None:
    # Every key is selected, so the default 0.5 is never output. The head's reading used to list
    # it, the certifier checked its snap, and with only the program's values to snap to it failed,
    # and the output fell back to a one-hot of four values; now the value analysis leaves the
    # default out (`ValueSets.never_empty`) and the output is one number.
    from compiler.fits import snap_targets

    text = "m = aggregate(select(length, 0, !=), length, 0.5);"
    sop = program(text, "m")
    model = compile_sop(sop, list("ab"), 4, name="m")
    assert model.metadata["config"]["d_vocab_out"] == 1
    assert 0.5 not in model.metadata["output"]["values"]
    agrees_everywhere(sop, model, "ab", 4)
    # a reading's number equal to a program value (or its float64 twin) leaves the program's
    assert snap_targets((1, 2.0), (0.5, 1.0, 2, 2.0000000000000004)) == (0.5, 1, 2.0)


def test_outputs_beyond_float32_are_labels_without_overflow_warnings() -> None:
    # 32 ^ 32 is 1.5e48: a numerical output's unembedding overflowed float32 (RuntimeWarnings on
    # stderr, a NaN certificate) before the one-hot fallback took over
    import warnings

    sop = program("x = indices ^ indices;", "x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = compile_sop(sop, list("ab"), 33, name="x")
    assert model.metadata["output"]["encoding"] == "categorical"
    runtime = transformer.from_tensors(model.weights, model.metadata)
    (got,) = runtime.run([list("ab" * 16 + "a")])
    assert got == list(evaluate(sop, list("ab" * 16 + "a")).values)


@pytest.mark.exactness
def test_a_map_that_reads_the_index_through_a_few_classes_steps_on_the_classes() -> None:
    # `-1 if indices == 0 else w` stepped with each index as a context read the N-wide index
    # one-hot into a 2N-unit MLP (the paper's sort_bos at N = 256: 1.57M parameters, now 143K)
    text = "w = selector_width(select(tokens, tokens, <));\nx = -1 if indices == 0 else w;"
    sop = program(text, "x")
    model = compile_sop(sop, list("abc"), 64, name="x")
    assert not any(label.startswith("indices:") for label in model.metadata["residual"])
    assert model.metadata["config"]["d_model"] < 20
    runtime = transformer.from_tensors(model.weights, model.metadata)
    rng = random.Random(4)
    inputs = [rng.choices("abc", k=rng.randint(1, 64)) for _ in range(40)]
    for tokens, got in zip(inputs, runtime.run(inputs), strict=True):
        assert got == list(evaluate(sop, tokens).values)


@pytest.mark.parametrize(
    "text",
    [
        "x = tokens_float * 2;",  # 1e308 * 2
        "x = tokens_float * 2 - tokens_float * 2;",  # inf - inf: refused at the first inf
        "x = aggregate(select(indices, indices, <=), tokens_float);",  # the sum overflows
    ],
)
def test_a_value_float64_overflows_to_is_refused_located(text: str) -> None:
    """It used to write a model whose metadata held `Infinity`, which no tool could read (over
    an existing file), or to fail as an internal error (NaN weights)."""
    sop = program(text, "x")
    with pytest.raises(CompileError) as caught:
        compile_sop(sop, [1e308, 1.0], 3, source=Source("<test>", text))
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.message.endswith("can be inf, which no model holds")
    assert diagnostic.span is not None and diagnostic.span.col == 5


@pytest.mark.parametrize(
    ("text", "vocab", "what"),
    [
        ("x = indices * 10 ^ 308 * 10;", ["a", "b"], "'indices * 10 ^ 308' can be"),
        ("x = tokens_int > 1;", [10**310, 1, 2], "'tokens_int' can be"),
        ("x = selector_width(select(tokens_int, tokens_int, <));", [10**310, 1], "'tokens_int'"),
        # the aggregate's means were computed from the refused values: an internal error
        ("x = aggregate(select(indices, indices, <=), length ^ 1000);", ["a"], "'length ^ 1000'"),
    ],
)
def test_a_whole_number_past_float64_is_refused_located(text: str, vocab: list, what: str) -> None:
    """The compiler reads numbers as float64: `float(10 ** 309)` was an internal error in one
    place or another (OverflowError)."""
    sop = program(text, "x")
    with pytest.raises(CompileError) as caught:
        compile_sop(sop, vocab, 3, source=Source("<test>", text))
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.message.startswith(what)
    assert "digits, which no model holds" in diagnostic.message and diagnostic.span is not None


def test_a_model_is_never_saved_with_metadata_json_cannot_hold(tmp_path) -> None:
    sop = program("x = indices + 1;", "x")
    model = compile_sop(sop, ["a"], 2)
    model.metadata["output"]["values"] = [1.0, math.inf]
    path = tmp_path / "m.safetensors"
    with pytest.raises(ValueError, match="JSON"):
        model.save(path)
    assert not path.exists()


def test_a_mean_of_numbers_past_float32_is_refused_before_its_weights_overflow() -> None:
    """A mean of tokens_float * 10^300 was built with inf weights: numpy printed overflow
    warnings and the certifier refused it with a float32 error 'up to nan'. It is refused
    where the weight is made, naming it, with no warning."""
    import warnings

    sop = program("res = aggregate(select(indices, indices, <=), tokens_float * 10 ^ 300);", "res")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning fails the test
        with pytest.raises(CompileError) as refused:
            compile_sop(sop, [1, 2], 4)
    assert refused.value.span is not None
    assert str(refused.value).startswith("the weight blocks.0.attn.W_V (tokens:2) would be 2e+300")


def test_a_step_whose_own_rounding_exceeds_its_margin_says_so_not_a_negative_tolerance() -> None:
    # means of 0, 1e-7 and 1 at N = 4 are 2.5e-8 apart: the step's own float32 rounding (its
    # slope times the inputs' size) is past its margin before any input error; the refusal said
    # "tolerance -1.38e-07"
    text = (
        "m = aggregate(select(indices, indices, <=), tokens_float);\n"
        "res = aggregate(select(m, indices % 2, >), indices, 9);\n"
    )
    # (a query of two values: `select(m, 0, >)` is the map `m > 0`, compiler.constant_sides,
    # refused at its relu decision in the map's words)
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "res"), [0.0, 1e-7, 1.0], 4)
    message = str(refused.value)
    assert "values 2.5e-08 apart cannot be told apart exactly in float32" in message
    assert "no tolerance left: the step's own float32 rounding exceeds its margin" in message
    assert "tolerance -" not in message


def test_a_step_refused_for_large_numbers_names_their_size_not_only_the_length() -> None:
    # a prefix mean of [-1000000, 999999, 1] at N = 4 compared with 0: the input error comes from
    # the numbers' size; the hint said only "use a smaller maximum length"
    text = "m = aggregate(select(indices, indices, <=), tokens_int);\nres = m > 0;\n"
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "res"), [-1000000, 999999, 1], 4)
    assert "cannot be told apart exactly in float32" in str(refused.value)
    hint = refused.value.diagnostics[0].hint or ""
    assert "numbers of smaller magnitude" in hint and "smaller maximum length" in hint

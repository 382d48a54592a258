"""A proved model whose maps of maps take layers of their own after its last head: the build with
the maps fused over their sources, kept where smaller (compiler.alternatives)."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source

CHAIN = """
v0 = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
m0 = v0 if length > 3 else v0 + 3;
x = round(3 * m0 / (m0 + 1));
"""


def test_a_proved_chain_of_maps_after_the_heads_is_fused_where_smaller() -> None:
    # unfused: m0 a table over (length, v0) in its own layer, then x over m0's values: 85,792
    # parameters in 3 layers at N = 8 (2.5M at N = 16); fused over (length, v0): 1,671 in 2
    sop = load_source(Source("<test>", CHAIN)).get("x")
    model = compile_sop(sop, list("ab"), 8)
    assert len(model.metadata["layers"]) == 2
    assert model.param_count() < 5_000
    assert check_inputs(model, sop, all_inputs("ab", 8) + random_inputs("ab", 8, 200, 0))


MAX_OF_WIDTH_AND_MEAN = """
v1 = selector_width(select(tokens, tokens, <));
v2 = aggregate(select(tokens, tokens, ==), indicator(indices < 2));
m0 = v1 if v1 > v2 else v2;
"""


def test_the_fused_build_is_tried_with_a_number_output_where_a_one_hot_was_forced() -> None:
    # the default's table of m0 over (v1, v2) does not snap at N = 16 (margin 0.00208 against a
    # float32 error of 0.00845): a one-hot output of 97 values, 1.24M parameters; fused over
    # the same one-hot, 83,732; fused with a number output, as at N = 8 and 32: 7,087
    sop = load_source(Source("<test>", MAX_OF_WIDTH_AND_MEAN)).get("m0")
    model = compile_sop(sop, list("abc"), 16)
    assert model.metadata["output"]["encoding"] == "numerical"
    assert model.param_count() < 20_000
    inputs = all_inputs("abc", 6) + random_inputs("abc", 16, 300, 0)
    assert check_inputs(model, sop, inputs)


def test_a_limit_the_default_is_over_keeps_the_fused_build_under_it() -> None:
    """At N = 8 the default (85,792 parameters) is over a limit of 5,000 that the fused build
    (1,671) is under: the default's OverParamLimit was raised with only the copy builds tried, so
    every limit between the two refused a model the compile makes without one."""
    sop = load_source(Source("<test>", CHAIN)).get("x")
    model = compile_sop(sop, list("ab"), 8, max_params=5_000)
    assert model.param_count() < 5_000 and model.metadata["certificate"]["ok"]
    assert check_inputs(model, sop, all_inputs("ab", 8))


def test_a_refusal_over_the_limit_lists_the_builds_tried_and_their_sizes() -> None:
    """Under 1,000 parameters the default (85,792) was refused alone: the fused build, tried too
    (1,671), was not named, so the user could not tell that 2,000 would do."""
    sop = load_source(Source("<test>", CHAIN)).get("x")
    with pytest.raises(CompileError) as info:
        compile_sop(sop, list("ab"), 8, max_params=1_000)
    text = info.value.render()
    assert "error: the model would have 85,792 parameters" in text
    assert "note: also tried with maps fused through their inputs:" in text
    assert "the model would have 1,671 parameters" in text
    assert "widest MLP 15 units, 1 output column for 'x')" in text  # (was "1 output columns")

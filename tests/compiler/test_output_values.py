"""A numerical output with no grid snaps to the list of its values (compiler.grid's
MAX_OUTPUT_VALUES); beyond the list the decoder gives the float itself, and a refusal says so."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs, random_inputs

import compiler.assemble_metadata
import compiler.grid
from compiler import compile_sop
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.sops import evaluate
from tests.compiler.test_total_orders import _program
from tests.runtime_helpers import run_compiled

# the mean position of the "a"s: the mean of any subset of 0..n-1, no grid by position or length
MEAN_POSITION = 'res = aggregate(select(tokens, "a", ==), indices, -1);'


def test_an_output_of_tens_of_thousands_of_values_is_listed_and_snapped() -> None:
    root = _program(MEAN_POSITION)
    model = compile_sop(root, list("abc"), 48, name="res")
    listed = model.metadata["output"]["values"]
    assert 10_000 < len(listed) <= compiler.grid.MAX_OUTPUT_VALUES
    inputs = random_inputs("abc", 48, 200, seed=5) + [list("a" * 48), list("b" * 47 + "a")]
    assert check_inputs(model, root, inputs) == len(inputs)


def test_an_output_too_large_to_list_is_refused_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    # with a list of at most 100 values the mean (1,202 values at N = 16) decodes as the float
    # itself, which float32 keeps within 1e-6 of the mean at none of these lengths; a one-hot
    # output of its values (7.3M parameters) is over the limit
    monkeypatch.setattr(compiler.assemble_metadata, "MAX_OUTPUT_VALUES", 100)
    monkeypatch.setattr(compiler.grid, "MAX_OUTPUT_VALUES", 100)
    # nor a grid: the mean's values per length (compiler.means) lie on one of denominator
    # lcm(1..16) = 720,720, which float32 cannot resolve either (a snap refused, not this one)
    monkeypatch.setattr(compiler.grid, "MAX_DENOMINATOR", 1000)
    with pytest.raises(CompileError) as refused:
        compile_sop(_program(MEAN_POSITION), list("abc"), 16, name="res", max_params=50_000)
    problem = refused.value.diagnostics[0]
    assert "too many to list" in problem.message
    assert "may be off by up to" in problem.message
    assert problem.hint is not None and "at most 100,000 values" in problem.hint
    assert "closer together" not in problem.hint


# defs fuzz seed 2156627 (--causal, N = 10), reduced: integers 1 apart, whose error piled up
PILED_UP = """prev_token = shift(tokens, 1, "_");
keys = select(indices, indices, <=) and select(indices, 0, >);
n = selector_width(select(prev_token, tokens, ==) and keys and select(indices, indices, <=));
c = selector_width(select(tokens == "a", True, ==) and select(indices, indices, <=));
v1 = aggregate(select(indices, indices, ==) and select(indices, indices, <=),
    n + round(indices + 1 + n / 2), 0.5);
res = round(c * v1 + n / 2) + max(shift(v1, 2, 1), n);"""


def test_a_snap_between_values_float32_tells_apart_is_not_hinted_as_values_too_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (defs 2156627's reduction; since session 67 the build of its sum's terms from their sources
    # proves it: without that build, its default's output snap is refused as it was)
    monkeypatch.setattr("compiler.known_sums.fused_terms", lambda *args: frozenset())
    # (nor since session 69 the one-hot output of its maps of maps fused, tried after it)
    monkeypatch.setattr("compiler.driver.fused_output_instead", lambda kept, *args: kept)
    with pytest.raises(CompileError) as refused:
        compile_sop(_program(PILED_UP), list("xab"), 10, name="res", causal=True)
    problem = refused.value.diagnostics[0]
    assert "a snap decision has margin 0.5" in problem.message
    assert problem.hint is not None and "closer together" not in problem.hint
    assert problem.hint.startswith("its values are far enough apart for float32; the error is")


# numeric fuzz seed 2196601 (N = 4), reduced: a map of a mean of prefix means over "012", whose
# interpolation carries the mean's error (3.3e-6) times a slope of hundreds to the output snap
# (margin 0.000651 against 0.0017); two of the mean's values are float64 twins (5/6 and 7/6, each
# summed two ways), and so are their outputs, met in two one-hot columns (7/6 and 11/6 both give
# 49/36): since session 69 one column, and the one-hot output is proved
MEAN_OF_MEANS = """v1 = aggregate(select(indices, indices, <=), tokens_int, 0);
v2 = aggregate(full_s, v1, 0);
res = (v2 ^ 2) % 2;"""


def test_a_one_hot_output_writes_float64_twins_of_one_value_in_one_column() -> None:
    from compiler.fits import float64_twins

    root = _program(MEAN_OF_MEANS)
    model = compile_sop(root, list("012"), 4, name="res")
    output = model.metadata["output"]
    assert output["encoding"] == "categorical"
    # 49/36 (1.3611111111111107, ...114 and ...116 as computed) has one column; twins that
    # never meet in a column may keep their own (1/144, and 2.00694... % 2 as computed)
    assert sum(float64_twins(float(v), 49 / 36) for v in output["values"]) == 1
    inputs = all_inputs(list("012"), 4)  # every input, as the campaign's N = 4 does
    assert check_inputs(model, root, inputs) == len(inputs) == 120
    outputs = run_compiled(model, inputs)
    for tokens, got in zip(inputs, outputs, strict=True):
        assert all(map(same_value, got, evaluate(root, tokens).values)), tokens


def test_a_piled_up_snap_says_why_the_one_hot_output_did_not_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # where the two columns were no float64 twins (as if: no column kept), the one-hot output is
    # not built and the refusal says why where its values are far apart
    monkeypatch.setattr("compiler.fits._twin_kept", lambda members, values: None)
    with pytest.raises(CompileError) as refused:
        compile_sop(_program(MEAN_OF_MEANS), list("012"), 4, name="res")
    problem = refused.value.diagnostics[0]
    assert "a snap decision has margin 0.000651" in problem.message
    assert problem.hint is not None
    assert problem.hint.startswith("its values are far enough apart for float32; the error is")
    assert "; a one-hot output was not built either: '(v2 ^ 2) % 2' would write" in problem.hint


# numeric fuzz seed 2196601 itself (N = 4): the map of the map is an interpolation, which a one-hot
# output stepped over too (a relu margin of 4 against 4.49); with the maps of maps fused over their
# sources (compiler.fused_output, the driver's last build) the output is stepped over the mean
SEED_2196601 = MEAN_OF_MEANS.replace("res = (v2 ^ 2) % 2;", "res = (v1 * ((v2 * v2) % 2));")


@pytest.mark.exactness
def test_a_map_of_an_interpolated_map_is_proved_as_a_fused_one_hot_output() -> None:
    from compiler.fused_output import FUSED_ONE_HOT

    root = _program(SEED_2196601)
    notes: list[str] = []
    model = compile_sop(root, list("012"), 4, name="res", progress=lambda s, *_: notes.append(s))
    assert model.metadata["output"]["encoding"] == "categorical"
    assert any(FUSED_ONE_HOT in stage for stage in notes)
    inputs = all_inputs(list("012"), 4)
    outputs = run_compiled(model, inputs)
    for tokens, got in zip(inputs, outputs, strict=True):
        assert all(map(same_value, got, evaluate(root, tokens).values)), tokens

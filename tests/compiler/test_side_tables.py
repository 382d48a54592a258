"""Select sides computed from means as tables over their inputs' one-hots (compiler.side_tables,
tried last by compiler.side_build): programs refused before, each the reduction of a fuzz seed,
compile, and agree with the interpreter on every input up to their N; one whose table is too
large is still refused, located, with the noisy count's hint and this build among those tried.

Each default steps a side over a mean's number with another s-op as context (`length - v1`), or
steps a select's classes of a width minus a mean from its two dimensions: the one-hot it writes
carries that step's rounding (1e-4), which the head's score scale multiplies into a weight error
that moves the mean or count the head takes past its margin."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.loose_sums import means_of_counts_as_any_mean
from tests.compiler.test_compile import all_inputs, check_inputs


@pytest.fixture(autouse=True)
def _means_of_counts_as_any_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    # this file's programs read means of counts as noisy means: since session 70 the value
    # analysis knows such a mean is the count (compiler.values.uniform_keys_average_copies) and
    # proves them; the refusals and builds tested here are reached with it switched off
    means_of_counts_as_any_mean(monkeypatch)


# numeric 2070558: a mean's select reads two maps of means (its snap: margin 0.5, error 0.53)
MAPS_OF_MEANS = """v0 = aggregate(full_s, length);
v1 = aggregate(select(indices, indices, <), v0, 0);
res = aggregate(select(max(v0, v1), (length - v1), !=), indices, 1);"""
# mixed 2041221: a select of the length against a mean, rewritten as the map `length > m`
LENGTH_AGAINST_A_MEAN = """m = aggregate(select(tokens, tokens, <=), indicator(tokens == "1"));
res = aggregate(select(length, m, >), indices, 1);"""
# mixed 2041068: a term of a disjunction's width reads a width minus a mean
WIDTH_MINUS_A_MEAN = """v0 = selector_width(select(tokens, tokens, <=))
    - aggregate(select(tokens, "1", <=), indices, 0);
res = selector_width(select(indices, indices, <=) or select(tokens_int, v0, >));"""


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


@pytest.mark.parametrize(
    ("text", "vocab", "n"),
    [
        (MAPS_OF_MEANS, "abc", 5),
        (LENGTH_AGAINST_A_MEAN, "012", 4),
        (WIDTH_MINUS_A_MEAN, "012", 4),
    ],
    ids=["maps_of_means", "length_against_a_mean", "width_minus_a_mean"],
)
def test_a_side_from_means_compiles_as_a_table_and_agrees(text: str, vocab: str, n: int) -> None:
    root = _root(text)
    model = compile_sop(root, list(vocab), n)
    assert model.metadata["certificate"]["ok"]
    inputs = all_inputs(list(vocab), n)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_the_default_is_refused_and_the_table_build_is_what_proves_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # without the build (compiler.side_build), the same program at the same N is refused
    root = _root(MAPS_OF_MEANS)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list("abc"), 5)
    assert "snap decision" in refused.value.diagnostics[0].message


def test_a_table_too_large_is_still_refused_with_the_noisy_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `length > m` over a mean of counts at N = 24: the table has 103,704 rows (216M parameters);
    # (without the steps per length that compile it: tests/compiler/test_threshold_sides.py)
    monkeypatch.setattr("compiler.side_build.threshold_sides", lambda graph: frozenset())
    # (nor the written-error build, which proves it too: tests/compiler/test_written_sums.py)
    monkeypatch.setattr("compiler.driver.written_instead", lambda kept, builds, note: kept)
    text = 'm = aggregate(select(tokens, tokens, <=), count(tokens, "a"));\n'
    text += "res = aggregate(select(length, m, >), 0, 1);"
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(text), list("abc"), 24)
    first, *rest = refused.value.diagnostics
    assert first.span is not None and "snap decision" in first.message
    assert first.hint is not None and "is a mean decoded from what its head writes" in first.hint
    assert any("also tried with select sides from means as tables" in d.message for d in rest)

"""A term of a disjunction's width whose head reads a side computed with error is refused with
the noisy count's hint, as the width of one select is.

`selector_width(select(indices, indices, <=) or select(tokens_int, v0, >))` with v0 a width minus
a mean: v0's classes for the select are stepped from two dimensions (no integer band), whose
rounding the term heads' scores multiply (0.31), spreading the weights 1/(w+1) is made of. Each
term decodes its own `<name>.frac<k>`; the refusal's hint looked for `<name>.part<k>.frac` and gave
the generic hint (mixed seed 2041068, fuzz62). These programs now compile through the build with
their sides as tables (compiler.side_build, tests/compiler/test_side_tables.py); these tests turn
it off to see the default's refusal, which a larger N still gives."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.loose_sums import means_of_counts_as_any_mean


@pytest.fixture(autouse=True)
def _means_of_counts_as_any_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    # this file's programs read means of counts as noisy means: since session 70 the value
    # analysis knows such a mean is the count (compiler.values.uniform_keys_average_copies) and
    # proves them; the refusals and builds tested here are reached with it switched off
    means_of_counts_as_any_mean(monkeypatch)


@pytest.fixture(autouse=True)
def no_side_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default build's refusal, not replaced by the side tables' model."""
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)


TEXT = """v0 = selector_width(select(tokens, tokens, <=) or select(length, length, !=))
    - aggregate(select(tokens, "ß", <=), indices, True);
res = selector_width(select(indices, indices, <=) or select(tokens_int, v0, >));"""


def test_a_noisy_term_names_its_count_and_what_its_select_reads() -> None:
    root = load_source(Source("<test>", TEXT)).get("res")
    assert isinstance(root, SOp)
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list("012"), 4)
    text = " ".join(d.hint or "" for d in refused.value.diagnostics)
    assert "term 1 of the count 'res' is a count decoded from the 1/(w+1) its head writes" in text
    assert "its select reads 'v0', computed from the mean" in text


MEAN = 'v3 = aggregate(select(tokens, tokens, <=), count(tokens, "a"));\n'


@pytest.mark.parametrize(
    "text",
    [
        # the mean is read by a map (decoded by a step MLP: a relu fails; mixed seed 2041221)
        MEAN + 'm = aggregate(select(length, v3, >), 0, 1);\nres = "y" if m > 0.5 else "n";',
        # the mean is the output (its snap fails; the hint said its values lie too close)
        MEAN + "res = aggregate(select(length, v3, >), 0, 1);",
    ],
)
def test_a_noisy_mean_names_what_its_select_reads(text: str) -> None:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list("abc"), 12)
    hint = " ".join(d.hint or "" for d in refused.value.diagnostics)
    assert "is a mean decoded from what its head writes" in hint
    assert "computed from the mean 'v3'" in hint

"""Values the value analysis lists but an s-op's own reading rules out never give a row.

The analysis pairs the values of `v0 == v0`'s two inputs independently (a sound superset: False
and True), while the comparison's reading, built from its exact points, is True only. A map over
it looked up False's one-hot: a KeyError in gated units, a broken table refused as a ValueError.
Both crashed the compile (random shared-selector programs)."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

pytestmark = pytest.mark.exactness

BASE = """
v2 = aggregate(select(indices, indices, <=), indicator(tokens != "c") * 2);
v0 = aggregate(select(indices, indices, <=), indices);
t = aggregate(select(indices, 0, ==), tokens);
a = v0 == v0;
"""


@pytest.mark.parametrize(
    "expr",
    [
        "v2 if a else v2",  # a step MLP over v2 with `a` as its context (gated units)
        "tokens if a else t",  # a table over (a, tokens, t)
        '"x" if a else tokens',
    ],
)
def test_a_value_the_reading_rules_out_gives_no_row(expr: str) -> None:
    root = load_source(Source("<test>", BASE + f"res = {expr};")).get("res")
    assert isinstance(root, SOp)
    for n in (5, 8):
        model = compile_sop(root, ["a", "b", "c"], n)
        inputs = all_inputs(["a", "b", "c"], min(n, 6))
        assert check_inputs(model, root, inputs) == len(inputs)


SQUARE = """
v1 = aggregate(select(indices, indices, <), indicator(tokens == "a"), {d1});
v2 = aggregate(select(indices, 2, ==), {value}{d2});
res = v2 % 3;
"""


@pytest.mark.parametrize(
    ("value", "d1", "d2", "n"),
    [
        ("v1 * v1", "1", "", 6),  # the analysis lists 0.5 (= 1 * 0.5), the square's reading not
        ("v1 * v1", "0", ", 7", 5),
        ("v1 + v1", "1", "", 6),
    ],
)
def test_a_copied_value_its_sources_reading_rules_out_has_no_dimension(
    value: str, d1: str, d2: str, n: int
) -> None:
    """The copy's reading listed a column for 0.5 that its head never writes, read downstream
    by `v2 % 3`: "blocks read dimensions nobody writes" at layout."""
    text = SQUARE.format(value=value, d1=d1, d2=d2)
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    model = compile_sop(root, ["a", "b", "c"], n)
    inputs = all_inputs(["a", "b", "c"], n)
    assert check_inputs(model, root, inputs) == len(inputs)

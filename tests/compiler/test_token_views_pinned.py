"""A key-only select of one view of the token pins what another view holds.

`aggregate(select(tokens, "2", ==), tokens_int, -1)` averages only keys whose token is "2", so
copies of 2 (or the default): `tokens` and `tokens_int` are two input s-ops of the graph, and
the value analysis, which proved this where the select and the averaged s-op read one view
(`indicator(tokens == "2")`), listed every mean of 0, 1 and 2 for it. A division reading it was
then refused at N = 6 (a snap margin of 5.3e-06 against 0.00275; compiler fuzz numeric
`--causal` seed 2111510, found by gen64), and a cube of it was 797,638 parameters."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

pytestmark = pytest.mark.exactness

MEAN = 'v1 = aggregate(select(tokens, "2", ==), tokens_int, -1);\n'
BEFORE = 'v2 = aggregate(select(indices, indices, <), indicator(tokens == "2"), 1);\n'


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


def test_a_division_by_a_mean_of_pinned_copies_compiles() -> None:
    root = _root(MEAN + BEFORE + "res = (v1 * v1) * (v1 / (indices + 2 - v2));")
    model = compile_sop(root, ["0", "1", "2"], 6)
    inputs = all_inputs(["0", "1", "2"], 6)
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.parametrize(
    ("select", "vocab"),
    [
        ('select(tokens, "2", ==)', ["0", "1", "2"]),
        ('select(tokens == "2", True, ==)', ["0", "1", "2"]),  # through a map of the view
        ('select(tokens_str, "2", ==) and select(indices, indices, <=)', [0, 1, 2]),
    ],
)
def test_a_cube_of_pinned_copies_stays_small(select: str, vocab: list) -> None:
    root = _root(
        f"v1 = aggregate({select}, tokens_int, -1);\nres = (v1 * v1 * v1) / (indices + 3);"
    )
    model = compile_sop(root, vocab, 6)
    assert sum(w.size for w in model.weights.values()) < 20_000
    inputs = all_inputs(vocab, 6)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_a_select_holding_at_two_values_pins_nothing() -> None:
    # "1" and "2" hold 1 and 2: a mean of both is no copy (the means are listed, and agree)
    root = _root('v1 = aggregate(select(tokens, "0", >), tokens_int, -1);\nres = v1 * 2;')
    model = compile_sop(root, ["0", "1", "2"], 5)
    inputs = all_inputs(["0", "1", "2"], 5)
    assert check_inputs(model, root, inputs) == len(inputs)

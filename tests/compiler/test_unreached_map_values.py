"""A map's value that no row gives never occurs, and no block is held to write it.

`c = shift(length > 2, 1, 1.0)` is False only at index 1 of a length of 2 or less, where
`indices < 2` holds: `"q" if c else ("é" if indices < 2 else tokens)` never gives a token. The
value analysis pairs the map's inputs independently and lists the tokens too. The map, a view
of c (its rows read c alone), listed them with no dimension: a head copying it was held to write
their columns from a zero vector (a deviation of 1), and the copy, decoded as the output, listed
them with every logit 0. Both refused a small exact model (an argmax margin of 1 against a float32
error of 2, then of 0 against 3.6e-07; mixed seed 2041011 at N = 8, found by fuzz62)."""

from __future__ import annotations

import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

pytestmark = pytest.mark.exactness

MAP = '("q" if shift((length > 2), 1, 1.0) else ("é" if (indices < 2) else tokens))'


@pytest.mark.parametrize(
    "text",
    [
        f'res = shift({MAP}, 1, "q");',  # the copy is the output
        f'm = shift({MAP}, 1, "q");\nres = m == "é";',  # the copy read by a map
        f'm = {MAP};\nres = m + "!";',  # the map read by a map
        f"res = {MAP};",  # the map is the output
    ],
)
def test_a_value_no_row_gives_is_not_listed(text: str) -> None:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    for n in (3, 6):
        model = compile_sop(root, ["x", "y"], n)
        inputs = all_inputs(["x", "y"], n)
        assert check_inputs(model, root, inputs) == len(inputs)

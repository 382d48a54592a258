"""What a sublayer adds at BOS and PAD is exact where float32 computes it exactly.

`aggregate(select_from_first(tokens, "1"), load_from_location(tokens_int, 0), 0.5)` copies one
key's one-hot, exact at real positions; at BOS its head copies the inner copy's default column
(a 1), which the certifier took with 3 units of roundoff. The outer head read that as the value
error of its copy, and the step MLP of `+ count(tokens, "0")`, whose thresholds rest on the
copy's one-hot at weight 2^23 (the integer band), multiplied it into 13.5 against a margin of
9.33: refused at N = 5 (defs seed 2044031, found by fuzz62). Exact products of exact values on
one dyadic grid are exact in every order (compiler/certify_specials.py)."""

from __future__ import annotations

import numpy as np
import pytest
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from compiler.certify_specials import exact_additions, exact_products
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

pytestmark = pytest.mark.exactness

TEXT = (
    'res = aggregate(select_from_first(tokens, "1"), load_from_location(tokens_int, 0), 0.5)'
    ' + count(tokens, "0");'
)


def test_a_copy_of_a_copy_beside_a_count_is_proved() -> None:
    root = load_source(Source("<test>", TEXT)).get("res")
    assert isinstance(root, SOp)
    model = compile_sop(root, list("012"), 5)
    inputs = all_inputs(list("012"), 5)
    assert check_inputs(model, root, inputs) == len(inputs)


def test_exact_only_where_every_order_is() -> None:
    w = np.array([[1.0, 0.5], [1.0, 0.1]])
    z = np.array([[1.0, 2.0]])
    # column 0: 1 + 2 on the grid 1; column 1: 0.1 is not dyadic
    assert exact_products(z, np.zeros_like(z), w, np.zeros(2)).tolist() == [[True, False]]
    # an input with error is never exact
    assert not exact_products(z, np.array([[0.0, 1e-9]]), w, np.zeros(2)).any()
    # beyond 2^24 steps of the grid a sum may round
    assert not exact_products(np.array([[2.0**24, 1.0]]), np.zeros((1, 2)), w, np.zeros(2))[0, 0]
    x, e = np.array([[1.0, 0.25, 2.0**24]]), np.array([[0.0, 1e-9, 0.0]])
    added = exact_additions(x, e, np.array([0.5, 0.5, 1.0]), np.array([[True, True, True]]))
    assert added.tolist() == [[True, False, False]]

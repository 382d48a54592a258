"""Selectors whose selected keys all hold one value of the aggregated s-op (compiler.count_keys,
`selects_equal_values`): the mean of copies of one number whose float64 sums are exact (a whole
number, 1.5; `compiler.means.sums_exact`) is that number, so the aggregate takes the s-op's values,
not every mean of up to N of them."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_sop
from compiler.count_keys import selects_equal_values
from compiler.graph import build_graph
from compiler.means import sums_exact
from compiler.values import infer_values
from rasp import sops as S
from rasp.seqvalues import sum_in_order
from tests.compiler.test_total_orders import _program  # the program's `res`
from tests.runtime_helpers import run_compiled


def _equal(root: S.SOp, vocab: str, n: int) -> bool:
    """Whether the rule claims equal values for the aggregate `res`."""
    graph = build_graph(root)
    values = infer_values(graph, list(vocab), n)
    node = graph[graph.root]
    selector, sop = node.inputs
    return selects_equal_values(graph, selector, sop, values.values.__getitem__)


MAX_OF = """
bigger = selector_width(select(tokens_int, tokens_int, {order}));
res = aggregate(select({key}, {constant}, ==) {extra}, {sop});
"""


@pytest.mark.parametrize(
    ("order", "key", "constant", "extra", "sop", "equal"),
    [
        (">", "bigger == 0", "True", "", "tokens_int", True),  # the largest
        ("<", "bigger", "0", "", "tokens_int", True),  # the smallest
        (">", "bigger == 0", "True", "and select(indices, 2, <)", "2 * tokens_int + 1", True),
        (">", "not (bigger > 0)", "True", "", "tokens_int", True),
        (">=", "bigger == 1", "True", "", "tokens_int", False),  # `>=` counts the key itself
        (">", "bigger <= 1", "True", "", "tokens_int", False),  # the two largest
        (">", "bigger == 0", "True", "", "indices", False),  # not a function of the number
        (">", "bigger == 0", "False", "", "tokens_int", False),
        (">", "bigger == 0", "True", "or select(indices, 0, ==)", "tokens_int", False),
    ],
)
def test_the_keys_of_the_largest_or_smallest_number(
    order: str, key: str, constant: str, extra: str, sop: str, equal: bool
) -> None:
    text = MAX_OF.format(order=order, key=key, constant=constant, extra=extra, sop=sop)
    assert _equal(_program(text), "0123", 6) is equal


SMALLER = "selector_width(select(tokens_int, tokens_int, <))"


@pytest.mark.parametrize(
    ("text", "equal"),
    [
        ("res = aggregate(select(tokens_int, tokens_int, ==), tokens_int);", True),
        (
            "res = aggregate(select(tokens_int, tokens_int, ==) and select(indices, indices, <),"
            " tokens_int * 3);",
            True,
        ),
        ("res = aggregate(select(tokens_int, tokens_int, <=), tokens_int);", False),
        # a sort without a tie-break: keys of one rank hold one number
        (f"res = aggregate(select({SMALLER}, indices, ==), tokens_int);", True),
        (f"res = aggregate(select({SMALLER}, length - indices - 1, ==), tokens_int + 1);", True),
        (f"res = aggregate(select({SMALLER}, indices, <=), tokens_int);", False),
        (f"res = aggregate(select({SMALLER} % 2, indices, ==), tokens_int);", False),
        (
            "res = aggregate(select(selector_width(select(tokens_int, tokens_int, <=)), indices,"
            " ==), tokens_int);",
            True,  # `<=` counts more for each larger number too
        ),
        ("res = aggregate(select(tokens, tokens, ==), tokens_int);", False),  # another s-op
        ("res = aggregate(select(tokens_int, indices, ==), tokens_int);", False),
    ],
)
def test_the_keys_of_the_querys_own_value(text: str, equal: bool) -> None:
    assert _equal(_program(text), "0123", 6) is equal


def test_values_equal_as_numbers_make_no_claim() -> None:
    # 1 and 1.0 are equal keys for `==`, and a map may still tell them apart
    twins = 'x = 1 if tokens == "a" else (1.0 if tokens == "b" else 2);'
    text = twins + "\nres = aggregate(select(x, x, ==), x);"
    assert not _equal(_program(text), "abc", 6)


@pytest.mark.parametrize(
    ("x", "equal"),
    [
        ("tokens_int * 2 + 1", True),  # one number per digit: keys of one x hold one digit
        ("10 / (tokens_int - 1)", True),  # raises at 1 (no key holds it), one-to-one elsewhere
        ("tokens_int % 2", False),  # 0 and 2 share an x
        ("tokens_int - tokens_int", False),  # a map of two inputs: not a chain of one-input maps
    ],
)
def test_the_keys_of_a_one_to_one_map_of_the_aggregated_sop(x: str, equal: bool) -> None:
    """`select(x, x, ==)` with x read from the aggregated s-op through maps that tell its values
    apart (tracr's `key is not None` check is one): the keys hold the query's s-op value."""
    text = f"x = {x};\nres = aggregate(select(x, x, ==), tokens_int);"
    assert _equal(_program(text), "0123", 6) is equal


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    first=st.sampled_from(["tokens_int * 3", "tokens_int % 3", "tokens_int > 1", "-tokens_int"]),
    then=st.sampled_from(["y", "y + 1", "y * y", "y > 1", "12 / (y - 3)"]),
)
def test_a_claim_through_maps_holds_on_every_input(first: str, then: str) -> None:
    """Whenever the rule claims equal values through a chain of maps, every query's selected
    keys hold one value."""
    text = f"y = {first};\nx = {then};\nres = aggregate(select(x, x, ==), tokens_int);"
    root = _program(text)
    if not _equal(root, "0123", 5):
        return
    for n in range(1, 5):
        for tokens in itertools.product("0123", repeat=n):
            try:
                agree = _selected_values_agree(root, list(tokens))
            except Exception:  # noqa: BLE001 (the map raises on this input: nothing to hold)
                continue
            assert agree, (text, tokens)


def _selected_values_agree(root: S.SOp, tokens: list[str]) -> bool:
    evaluator = S.Evaluator(tokens)
    matrix = evaluator.matrix(root.selector)  # [query, key]
    values = evaluator.seq(root.sop).values
    for row in matrix:
        picked = {float(values[k]) for k in np.flatnonzero(row)}
        if len(picked) > 1:
            return False
    return True


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    order=st.sampled_from([">", "<", ">=", "<=", "==", "!="]),
    compare=st.sampled_from(["==", "<=", ">", "!="]),
    k=st.integers(0, 2),
    negate=st.booleans(),
    extra=st.sampled_from(["", " and select(indices, indices, <=)", " or select(1, 1, ==)"]),
    sop=st.sampled_from(["tokens_int", "tokens_int * tokens_int", "indices"]),
)
def test_a_claim_holds_on_every_input(
    order: str, compare: str, k: int, negate: bool, extra: str, sop: str
) -> None:
    """Whenever the rule claims equal values, every query's selected keys hold one value."""
    key = f"{'not ' if negate else ''}(c {compare} {k})"
    text = f"""
c = selector_width(select(tokens_int, tokens_int, {order}));
res = aggregate(select({key}, True, ==){extra}, {sop});
"""
    root = _program(text)
    if not _equal(root, "012", 5):
        return
    for n in range(1, 6):
        for tokens in itertools.product("012", repeat=n):
            assert _selected_values_agree(root, list(tokens)), (text, tokens)


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("text", "n", "most"),
    [
        # the largest digit: refused from N = 64 on before (any mean of up to N digits)
        (
            MAX_OF.format(
                order=">", key="bigger == 0", constant="True", extra="", sop="tokens_int"
            ),
            256,
            3_000,
        ),  # fmt: skip
        # the tokens sorted, equal ones sharing a rank (a default where no key has the rank)
        (f"res = aggregate(select({SMALLER}, indices, ==), tokens_int, -1);", 64, 20_000),
        # each digit's mean over the earlier keys holding it: the digit
        (
            "res = aggregate(select(tokens_int, tokens_int, ==) and select(indices, indices, <=),"
            " tokens_int);",
            64,
            20_000,
        ),
    ],
)
def test_averages_of_copies_compile_small_and_exact(text: str, n: int, most: int) -> None:
    root = _program(text)
    model = compile_sop(root, list("0123456789"), n, name="res")
    assert model.param_count() < most
    rng = random.Random(n)
    inputs = [list(t) for m in range(1, 4) for t in itertools.product("0123456789", repeat=m)]
    inputs += [[rng.choice("0123456789") for _ in range(rng.randint(4, n))] for _ in range(40)]
    inputs += [["7"] * n, ["0"] * n]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.parametrize(
    ("text", "equal"),
    [
        ("res = aggregate(select(tokens_int, 2, ==), tokens_int * 3);", True),
        ("res = aggregate(select(tokens_int, 2, ==), indicator(tokens_int == 3), 1);", True),
        ("res = aggregate(select(tokens_int, 2, >=), tokens_int > 1);", True),  # 2 and 3: True
        ("res = aggregate(not select(tokens_int, 1, <=), indicator(tokens_int > 1));", True),
        (
            "res = aggregate(select(tokens_int % 2, 0, ==) and select(indices, indices, <),"
            " tokens_int % 2);",
            True,
        ),
        ("res = aggregate(select(tokens_int, 2, >=), tokens_int % 2);", False),  # 0 and 1
        ("res = aggregate(select(tokens_int, 2, ==), indices);", False),  # not of the token
        (
            "res = aggregate(select(tokens_int, 2, ==) or select(indices, 0, ==), tokens_int);",
            False,
        ),
        ("res = aggregate(select(tokens_int, 1, >=), 6 / (tokens_int - 2));", False),  # raises
        # one value as a number, two as values: 1 and 1.0 (a map may tell them apart)
        ("res = aggregate(select(tokens_int, 2, >=), 1 if tokens_int == 2 else 1.0);", False),
    ],
)
def test_the_keys_a_key_only_predicate_pins_to_one_value(text: str, equal: bool) -> None:
    """A select of the key alone (its query side a constant) holds at some of its source's
    values: where the aggregated s-op, computed from that source alone, is one value there, the
    selected keys all hold it (the fuzzed p9489: a mean of `tokens == "b"` over the "a"s is 0)."""
    assert _equal(_program(text), "0123", 6) is equal


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    key=st.sampled_from(["tokens_int", "tokens_int % 2", "tokens_int * tokens_int"]),
    compare=st.sampled_from(["==", "<=", ">", "!="]),
    k=st.integers(0, 3),
    negate=st.booleans(),
    sop=st.sampled_from(
        [
            "tokens_int",
            "indicator(tokens_int > 1)",
            "indicator(tokens_int == 3)",
            "tokens_int % 2 * 4",
        ]
    ),
)
def test_a_key_only_claim_holds_on_every_input(
    key: str, compare: str, k: int, negate: bool, sop: str
) -> None:
    """Whenever the rule claims equal values for a key-only select, every query's selected keys
    hold one value."""
    sel = f"{'not ' if negate else ''}select({key}, {k}, {compare})"
    root = _program(f"res = aggregate({sel}, {sop});")
    if not _equal(root, "0123", 5):
        return
    for n in range(1, 5):
        for tokens in itertools.product("0123", repeat=n):
            assert _selected_values_agree(root, list(tokens)), (sel, sop, tokens)


# The fuzzed p9489: v0 was taken for any mean of 0s and 1s over up to 5 keys, so v1 = length - v0
# was a fraction stepped steeply into v2's one-hot, whose rounding the width head's scores
# multiplied (a relu margin of 3 against a float32 error of 3.01 at N = 6). v0 is 0 or 1.
P9489 = """
v0 = aggregate(select(tokens, "a", ==), indicator(tokens == "b"), 1);
v1 = length - v0;
v2 = round(v1 / (v1 + 1));
res = selector_width(select(indices, 1, >=) or select(indices, v2, >=));
"""


@pytest.mark.parametrize("n", [6, 8])
def test_a_mean_over_pinned_keys_compiles_and_is_exact(n: int) -> None:
    root = _program(P9489)
    model = compile_sop(root, list("ab"), n, name="res")
    assert model.param_count() < 3_000  # 1,744 at N = 6, 2,004 at 8
    inputs = [list(t) for m in range(1, n + 1) for t in itertools.product("ab", repeat=m)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.parametrize(
    "value", [1.5, 2.25, -0.5, 0.1, 0.3, 1 / 3, 1e-300, 5e-324, 2.0**60, 2**53 - 1, 3, 0.0, -0.0]
)
@pytest.mark.parametrize("n", [2, 3, 16, 64])
def test_sums_of_copies_claimed_exact_are(value: float, n: int) -> None:
    """Where `sums_exact` claims it, adding up to n copies in key order and dividing gives the
    value back (the interpreter's mean and tracr's), sign and all; 0.1 is claimed for 2 copies
    only, -0.0 never (the sum starts at 0: the mean of two -0.0 is 0.0)."""
    if sums_exact(value, n):
        for k in range(2, n + 1):
            mean = sum_in_order([value] * k) / k
            assert mean == value and math.copysign(1, mean) == math.copysign(1, value), k


def test_sums_of_copies_exact_beyond_whole_numbers() -> None:
    assert sums_exact(1.5, 2**40) and sums_exact(-2.25, 64) and sums_exact(3, 64)
    assert sums_exact(0.1, 2) and not sums_exact(0.1, 3)  # sum([0.1] * 3) / 3 != 0.1
    assert not sums_exact(2**53 - 1, 2) and not sums_exact(1e308, 2)

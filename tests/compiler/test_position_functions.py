"""S-ops of the position alone written through length, widths or means, compiled as maps of
`indices` (compiler.position_functions)."""

from __future__ import annotations

import itertools

import pytest
from test_compile import all_inputs, check_inputs, exact_outcome, random_inputs

from compiler import compile_sop
from compiler.position_functions import MAX_LEN, position_functions
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import AggregateSOp, IndicesSOp, LengthSOp, MapSOp, SelectorWidthSOp, walk


def _sop(text: str, name: str = "x"):
    return load_source(Source("<test>", text)).get(name)


@pytest.mark.parametrize(
    "text",
    [
        "x = indices % (length + 1);",  # i itself
        "x = (indices if indices < length else 0) * 2;",
        # a mean over a positional selector of a positional value: min(i, 2) / i, 0 at i = 0
        "x = aggregate(select(indices, indices, <), indicator(indices < 2));",
        "x = selector_width(select(indices, indices, <=));",  # i + 1
        "x = aggregate(select(indices, indices, <=), indices) * 2;",  # floats and an int 0
        "x = indices < length;",  # bools
    ],
)
def test_the_rewrite_keeps_every_value_and_type(text: str) -> None:
    sop = _sop(text)
    rewritten = position_functions(sop, 6)
    assert rewritten is not sop
    kinds = (LengthSOp, AggregateSOp, SelectorWidthSOp)
    assert not any(isinstance(n, kinds) for n in walk(rewritten))
    for n in range(1, 7):
        for tokens in itertools.product("ab", repeat=n):
            assert exact_outcome(rewritten, list(tokens)) == exact_outcome(sop, list(tokens))


@pytest.mark.parametrize(
    "text",
    [
        "x = length - indices;",  # depends on the length
        "x = aggregate(select(indices, length - 1, ==), indices);",  # the last index
        "x = indices / (length - indices - 1);",  # the interpreter fails at the last position
        "x = (indices + 1) % 3;",  # a map of indices alone: embedded as it is
        "x = aggregate(select(tokens, tokens, ==), indices);",  # reads tokens
    ],
)
def test_what_is_not_a_function_of_the_position_alone_is_kept(text: str) -> None:
    sop = _sop(text)
    assert position_functions(sop, 6) is sop


def test_a_product_with_a_position_written_through_length_is_one_layer() -> None:
    # `indices % (length + 1)` is i: with a mean it was a table over (index, length, mean),
    # 68,045 parameters in 2 layers at N = 8 (14.1M at N = 16)
    text = (
        "m = aggregate(select(tokens, tokens, <), indicator(indices < 2));\n"
        "x = (indices % (length + 1)) * m;"
    )
    sop = _sop(text)
    model = compile_sop(sop, list("abc"), 8)
    assert model.config["n_layers"] == 1
    assert model.param_count() < 2_000
    assert check_inputs(model, sop, all_inputs("abc", 5) + random_inputs("abc", 8, 300, 0))


def test_a_prefix_mean_of_a_positional_value_is_embedded() -> None:
    # min(i, 2) / i: a head and, with the length, a product MLP a layer later; refused at N = 32
    text = (
        "f = aggregate(select(indices, indices, <), indicator(indices < 2));\n"
        "x = round(length * (f / 3));"
    )
    sop = _sop(text)
    rewritten = position_functions(sop, 32)
    assert any(
        isinstance(n, MapSOp) and len(n.inputs) == 1 and isinstance(n.inputs[0], IndicesSOp)
        for n in walk(rewritten)
    )
    model = compile_sop(sop, list("abc"), 32)
    assert model.config["n_layers"] == 1
    assert check_inputs(model, sop, all_inputs("ab", 6) + random_inputs("abc", 32, 200, 1))


def test_past_the_length_bound_nothing_is_rewritten() -> None:
    sop = _sop("x = indices % (length + 1);")
    assert position_functions(sop, MAX_LEN) is not sop
    assert position_functions(sop, MAX_LEN + 1) is sop


def test_a_copy_of_one_position_stays_an_aggregate() -> None:
    # `where` (i - 1, -1 at 0) is the same at every length, but a head copies it as a number by
    # matching; as a map of indices, `where if ...` read the index one-hot (10 times larger)
    text = (
        'before = aggregate(select(indices + 1, indices, ==), tokens, "-");\n'
        "where = aggregate(select(indices + 1, indices, ==), indices, -1);\n"
        'x = where if before == "a" else -2;'
    )
    sop = _sop(text)
    assert position_functions(sop, 8) is sop
    # a mean of several keys is still rewritten
    averaged = _sop("x = aggregate(select(indices, indices, <=), indices);")
    assert not any(isinstance(n, AggregateSOp) for n in walk(position_functions(averaged, 8)))

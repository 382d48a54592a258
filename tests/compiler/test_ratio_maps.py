"""Maps of a count and the length that depend on their ratio alone, compiled as maps of one mean
(compiler.ratio_maps, through compiler.fraction_means)."""

from __future__ import annotations

import itertools

import pytest

from compiler import compile_sop
from compiler.fraction_means import _counted_select, fraction_means
from compiler.ratio_maps import ratio_maps
from rasp import sops as S
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs
from tests.compiler.test_total_orders import _program  # the program's `res`

COUNT = 'c = selector_width(select(tokens, "a", ==));\n'


def _ratios(text: str, max_len: int) -> dict[str, str]:
    """The program's maps that ratio_maps rewrites: their text -> the table's value at c / n = 1/2
    (or '-' where 1/2 is not a fraction up to max_len)."""
    order = list(S.walk(_program(COUNT + text)))
    found = ratio_maps(order, max_len, lambda node: _counted_select(node, max_len) is not None)
    by_id = {node.id: node for node in order}
    return {by_id[k].text: repr(dict(r.table.entries).get(0.5, "-")) for k, r in found.items()}


@pytest.mark.parametrize(
    "majority",
    ["2 * c > length", "c > length / 2", "c * 2 > length", "c >= length - c", "length / 2 < c"],
)
def test_a_majority_however_written_is_one_head_and_one_step(majority: str) -> None:
    root = _program(COUNT + f"res = {majority};")
    model = compile_sop(root, list("abc"), 256)
    # two heads (count, length), a decoding MLP and a second layer before: 26,217 parameters
    assert model.metadata["config"]["n_layers"] == 1 and model.param_count() == 296
    assert model.metadata.get("fractions_as_means") is True
    # the operation says what the MLP computes (the source text it shares with the fraction
    # would have been replaced by the name `res`)
    (mlp,) = model.metadata["layers"][0]["mlp"]
    assert mlp == {"name": "res", "op": f"{majority} (a table over c / length)"}
    small = compile_sop(root, list("abc"), 7)
    assert check_inputs(small, root, all_inputs("abc", 7)) == 3_279
    inputs = random_inputs("abc", 256, 150, 5) + [["a"] * n + ["b"] * n for n in range(1, 129)]
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.slow
def test_the_majority_is_one_head_at_n_1024() -> None:
    # 94,765 parameters in two layers before (the ratio check then stopped at N = 527)
    root = _program(COUNT + "res = 2 * c > length;")
    model = compile_sop(root, list("ab"), 1024)
    assert model.param_count() == 257 and model.metadata["certificate"]["ok"]
    inputs = [["a"] * n + ["b"] * (n + d) for n in (1, 255, 511) for d in (-1, 0, 1)]
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.parametrize(
    "text",
    [
        "res = 2 * c > length;",
        "res = c * 10 > length * 3;",
        "res = c == length - c;",
        'res = "more" if 3 * c > length else ("tie" if 3 * c == length else "less");',
        "res = round(4 * c / length) if c > 0 else 0;",
    ],
)
def test_the_rewrite_gives_the_same_values_of_the_same_types(text: str) -> None:
    root = _program(COUNT + text)
    rewritten = fraction_means(root, list("abc"), 6)
    assert rewritten is not root
    for n in range(1, 7):
        for tokens in itertools.product("abc", repeat=n):
            want = S.evaluate(root, list(tokens)).values
            got = S.evaluate(rewritten, list(tokens)).values
            assert [(type(v), v) for v in got] == [(type(v), v) for v in want], tokens


def test_only_maps_of_the_ratio_alone_are_rewritten() -> None:
    # `2 * c > length` is (False at 1/2), read by a map of the tokens too
    assert _ratios('res = (2 * c > length) and tokens == "a";', 8) == {"2 * c > length": "False"}
    # `length - c` is no function of c / n, so neither is the sum (its parts, read only by the
    # sum, need no rewrite)
    assert _ratios("res = (length - c) + (2 * c > length);", 8) == {}
    # 1 and 1.0 at the ratio 1/1 (n = 2 and n = 6): equal values of two types
    assert _ratios("res = (1 if length > 5 else 1.0) if 2 * c > length else 0;", 8) == {}
    # raises where c = n (a division by zero): left as it is
    assert _ratios("res = c / (length - c);", 8) == {}
    # a division by the length is fraction_means' own rewrite, and so is what reads it
    assert _ratios("res = c / length > 0.5;", 8) == {}
    # two counts: not one mean
    other = "d = selector_width(select(tokens, tokens, ==));\n"
    assert _ratios(other + "res = c + d > length;", 8) == {}
    # a count of a select that reads the query: a candidate, which fraction_means rewrites where
    # it writes a pick of the query's own mean (not for a query that is the position)
    assert _ratios(other + "res = 2 * d > length;", 8) == {"2 * d > length": "False"}
    prefix = _program("res = 2 * selector_width(select(indices, indices, <=)) > length;")
    assert fraction_means(prefix, list("abc"), 8) is prefix


def test_the_own_tokens_majority_is_a_pick_of_its_mean() -> None:
    # the query's own token is a majority: one mean per token value and a pick, as for
    # `h / length > 0.5` (566 parameters), where it took 27,441 at N = 256
    own = "h = selector_width(select(tokens, tokens, ==));\nres = 2 * h > length;"
    root = _program(own)
    model = compile_sop(root, list("abc"), 256)
    assert model.param_count() == 566 and model.metadata.get("fractions_as_means") is True
    inputs = random_inputs("abc", 256, 100, 9) + [["a"] * n + ["b"] * n for n in range(1, 129)]
    assert check_inputs(model, root, inputs) == len(inputs)
    rewritten = fraction_means(root, list("abc"), 6)
    for tokens in all_inputs("abc", 6):
        want = S.evaluate(root, tokens).values
        assert [(type(v), v) for v in S.evaluate(rewritten, tokens).values] == [
            (type(v), v) for v in want
        ]

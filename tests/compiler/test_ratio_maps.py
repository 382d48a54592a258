"""Maps of a count and the length that depend on their ratio alone, compiled as maps of one mean
(compiler.ratio_maps, through compiler.fraction_means)."""

from __future__ import annotations

import itertools

import pytest

from compiler import compile_sop
from compiler.fraction_means import _counted_select, fraction_means
from compiler.ratio_maps import ratio_maps
from compiler.rewrite import positional_nodes
from rasp import sops as S
from tests.compiler.test_compile import all_inputs, check_inputs, random_inputs
from tests.compiler.test_fraction_means import assert_same_typed_values
from tests.compiler.test_total_orders import _program  # the program's `res`

COUNT = 'c = selector_width(select(tokens, "a", ==));\n'


def _ratios(text: str, max_len: int) -> dict[str, str]:
    """The program's maps that ratio_maps rewrites: their text -> the table's value at c / n = 1/2
    (or '-' where 1/2 is not a fraction up to max_len)."""
    order = list(S.walk(_program(COUNT + text)))
    positional, _ = positional_nodes(order)

    def is_division(node: S.Node) -> bool:
        return _counted_select(node, max_len, positional) is not None

    found = ratio_maps(order, max_len, is_division)
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


def test_maps_of_two_counts_rewrite_each_count_s_map() -> None:
    other = "d = selector_width(select(tokens, tokens, ==));\n"
    both = _ratios(other + "res = (2 * c > length) and (2 * d < length);", 8)
    assert both == {"2 * c > length": "False", "2 * d < length": "False"}
    # a count over the length with the index: no function of c / n
    assert _ratios("res = 2 * c > indices;", 8) == {}
    assert _ratios("res = (2 * c > length) and indices > 2;", 8) == {"2 * c > length": "False"}


@pytest.mark.exactness
def test_two_majorities_are_two_tables_over_one_head() -> None:
    root = _program(
        COUNT + 'd = selector_width(select(tokens, "b", ==));\n'
        "res = (2 * c > length) and (2 * d < length);"
    )
    model = compile_sop(root, list("abc"), 64)
    # 15,677 parameters in three layers before: the map of both counts kept either from a table
    assert model.param_count() < 1_000 and model.metadata["config"]["n_layers"] == 2
    inputs = all_inputs("abc", 5) + random_inputs("abc", 64, 100, 3)
    assert check_inputs(model, root, inputs) == len(inputs)


SO_FAR = 'selector_width(select(tokens, "a", ==) and select(indices, indices, <=))'


@pytest.mark.parametrize(
    "text",
    [
        f"s = {SO_FAR};\nres = 2 * s > indices + 1;",  # "a" is the majority so far
        f"s = {SO_FAR};\nres = s * 3 >= indices + 1;",
        f's = {SO_FAR};\nres = "more" if 2 * s > indices + 1 else "not";',
        f"s = {SO_FAR};\nres = s == 0;",
        # the keys from the query on: their width reads the length too
        's = selector_width(select(indices, indices, >=) and select(tokens, "b", !=));\n'
        "res = 2 * s > length - indices;",
        # the query's own token among the tokens so far: a pick
        "s = selector_width(select(tokens, tokens, ==) and select(indices, indices, <=));\n"
        "res = 2 * s > indices + 1;",
    ],
)
def test_maps_of_a_count_within_a_scope_are_maps_of_its_mean(text: str) -> None:
    root = _program(text)
    rewritten = fraction_means(root, list("abc"), 6)
    assert rewritten is not root
    assert not any(isinstance(node, S.SelectorWidthSOp) for node in S.walk(rewritten))
    assert_same_typed_values(root, rewritten)


@pytest.mark.parametrize(
    "text",
    [
        # no function of c / (i + 1): the index alone changes it (`2 * s > indices` is one:
        # 2c >= i + 1)
        f"s = {SO_FAR};\nres = 2 * s > indices + 2;",
        f"s = {SO_FAR};\nres = s + indices;",
        # the scope selects no key at position 0
        's = selector_width(select(tokens, "a", ==) and select(indices, indices, <));\n'
        "res = 2 * s > indices;",
    ],
)
def test_maps_of_a_scoped_count_not_of_its_ratio_are_left_as_they_are(text: str) -> None:
    root = _program(text)
    assert fraction_means(root, list("abc"), 6) is root


@pytest.mark.exactness
@pytest.mark.parametrize("n", [64, 256])
def test_the_majority_so_far_is_one_head_and_one_step(n: int) -> None:
    root = _program(f"s = {SO_FAR};\nres = 2 * s > indices + 1;")
    model = compile_sop(root, list("abc"), n)
    # 4,062 parameters in two layers at N = 64 before (the count decoded, then compared)
    assert model.param_count() == 296 and model.metadata["config"]["n_layers"] == 1
    (mlp,) = model.metadata["layers"][0]["mlp"]
    assert mlp["op"] == (
        "2 * s > indices + 1 (a table over s / selector_width(select(indices, indices, <=)))"
    )
    inputs = all_inputs("abc", 4) + random_inputs("abc", n, 60, 11)
    inputs += [["a", "b"] * (n // 2), ["b", "a"] * (n // 2), ["a"] * n]
    assert check_inputs(model, root, inputs) == len(inputs)


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


def test_a_map_that_reads_two_index_nodes_gives_both_the_position() -> None:
    """The compiler merges duplicate nodes before this rewrite; called on a graph whose map reads
    two `indices` nodes, every one of them takes the position (it raised a KeyError where only
    one did)."""
    import dataclasses

    from compiler.rewrite import rebuilt

    root = _program(f"s = {SO_FAR};\nres = 2 * s > indices + 1 + 0 * indices;")
    order = list(S.walk(root))
    plus = next(n for n in order if isinstance(n, S.MapSOp) and n.text == "0 * indices")
    fresh = dataclasses.replace(
        plus,
        inputs=tuple(S.IndicesSOp() if isinstance(c, S.IndicesSOp) else c for c in plus.inputs),
    )
    new: dict[int, S.Node] = {}
    for node in order:
        new[node.id] = fresh if node is plus else rebuilt(node, new)
    twice = new[root.id]
    assert len({n.id for n in S.walk(twice) if isinstance(n, S.IndicesSOp)}) == 2
    rewritten = fraction_means(twice, list("abc"), 6)
    assert rewritten is not twice
    assert_same_typed_values(twice, rewritten)

"""A whole number's type per length and position (compiler.output_types, format version 7, 8 for
a categorical output): the decoder gives the interpreter's int or float where positions decide it."""

from __future__ import annotations

import itertools

import pytest

from compiler import compile_sop
from compiler.model import CompiledModel
from compiler.output_grid import GridAxis, OutputGrid
from compiler.output_types import whole_types
from rasp import sops as S
from tests.compiler.test_total_orders import _program
from tests.runtime_helpers import run_compiled

PREFIX_MEAN = 'f = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'
SUFFIX_MEAN = 'f = aggregate(select(indices, indices, >=), indicator(tokens == "b"));\n'
PROGRAMS = {
    # position 0 of a one-token input: the int -1 + 1 (one key each); 0.0 elsewhere (a mean)
    "shifted_copy_plus_mean": PREFIX_MEAN
    + "c = aggregate(select(indices, indices + 1, ==), f, -1);\nres = c + f;",
    # the last position's suffix mean is one key's value (an int), the others means (floats)
    "flipped_copy_plus_mean": SUFFIX_MEAN
    + "c = aggregate(select(indices, length - indices - 1, ==), f, -1);\nres = c + f;",
    "copy_times_two": PREFIX_MEAN
    + "c = aggregate(select(indices, (indices + 2) % length, ==), f, -1);\nres = c * 2;",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_whole_numbers_decode_with_the_interpreters_type(name: str) -> None:
    root = _program(PROGRAMS[name])
    model = compile_sop(root, list("abc"), 8, name="res")
    output = model.metadata["output"]
    assert model.metadata["format_version"] == 7 and len(output["whole_types"]) == 8
    _decodes_typed(model, root)


def test_a_one_hot_outputs_whole_numbers_decode_with_the_interpreters_type() -> None:
    # twice the prefix mean of ones: the int 2 at position 0 (one key), 2.0 elsewhere (a mean);
    # one value, so a one-hot output whose column lists 2 or 2.0 (both decoded as 2 before). (With
    # `length` read too: a map of the mean alone leaves the model as one logit, as the mean does.)
    root = _program(
        "ones = indicator(tokens == tokens);\n"
        "res = aggregate(select(indices, indices, <=), ones) * 2 + 0 * length;"
    )
    model = compile_sop(root, list("abc"), 8, name="res")
    output = model.metadata["output"]
    assert output["encoding"] == "categorical" and model.metadata["format_version"] == 8
    assert output["whole_types"][2] == "iff"
    _decodes_typed(model, root)


def _decodes_typed(model: CompiledModel, root: S.Node) -> None:
    """The model gives the interpreter's values with their types on every input up to 5 tokens
    over "abc" and a few of 8."""
    inputs = [list(t) for n in range(1, 6) for t in itertools.product("abc", repeat=n)]
    inputs += [list("ab" * 4), list("c" * 8), list("abcabcab")]
    for start in range(0, len(inputs), 128):
        chunk = inputs[start : start + 128]
        for tokens, got in zip(chunk, run_compiled(model, chunk), strict=True):
            want = S.evaluate(root, tokens).values
            assert [type(v) for v in got] == [type(v) for v in want], (tokens, got, want)
            assert got == pytest.approx(list(want), rel=1e-9), (tokens, got, want)


def test_a_whole_float_whose_int_is_listed_is_flagged() -> None:
    # the listed 0 and 0.0 decode as 0: the cell holding only floats says 0.0
    relation = {(0, 1): (0,), (0, 2): (0.0, 0.5), (1, 2): (0.5, 1.0)}
    assert whole_types(relation, 2, (0, 0.0, 0.5, 1.0), None) == ("i", "ff")


def test_an_int_listed_only_as_a_float_is_flagged() -> None:
    # a one-hot output lists one of 0 and 0.0: listed 0.0, the cell holding the int 0 says so
    relation = {(0, 1): (0,), (0, 2): (0.0, 0.5), (1, 2): (0.5, 1.0)}
    assert whole_types(relation, 2, (0.0, 0.5, 1.0), None) == ("i", "ff")
    assert whole_types(relation, 2, (0, 0.5, 1.0), None) == ("i", "ff")  # 0.0 decodes as 0
    assert whole_types({(0, 1): (0.0,), (0, 2): (0.5,)}, 2, (0.0, 0.5), None) is None


def test_no_flags_where_the_rule_already_gives_every_type() -> None:
    relation = {(0, 1): (1,), (0, 2): (0.5,), (1, 2): (2.0,)}
    assert whole_types(relation, 2, (0.5, 1, 2.0), None) is None  # 2.0's int is not listed
    assert whole_types(None, 2, (0.5, 1, 2.0), None) is None  # nothing known per position
    # a cell with a whole int and a whole float keeps the rule: "."
    assert whole_types({(0, 1): (0, 0.0)}, 1, (0, 0.0), None) is None


def test_a_grid_cell_of_ints_above_denominator_1_is_flagged() -> None:
    relation = {(0, 1): (1,), (0, 2): (0,), (1, 2): (0.5, 1.0)}
    grid = OutputGrid(GridAxis.LENGTH, (1, 2))
    assert whole_types(relation, 2, None, grid) == ("i", "if")
    # listed among int_positions, the rule already decodes position 0 as ints
    listed = OutputGrid(GridAxis.LENGTH, (1, 2), int_positions=(0,))
    assert whole_types(relation, 2, None, listed) is None
    # a denominator of 1 over whole floats would give ints
    assert whole_types({(0, 1): (1.0,)}, 1, None, OutputGrid(GridAxis.POSITION, (1,))) == ("f",)

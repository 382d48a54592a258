"""`output.whole_types` (format version 7; 8 on a categorical output): a whole number's type per
input length and position."""

from __future__ import annotations

from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
from test_runtime_file_errors import expect_format_error
from test_runtime_grids import _edited, length_grid_mean_of_a

import transformer
from transformer.decoding import OutputEncoding, OutputSpec, OutputType


def _typed(rows: list[list[object]]) -> list[list[tuple[type, object]]]:
    return [[(type(v), v) for v in row] for row in rows]


def test_a_listed_whole_number_takes_its_cells_type() -> None:
    # 0 and 0.0 listed: the int wins, but for cells flagged "f"; 2.0 listed alone: a float, but
    # for cells flagged "i"
    values = (0, 0.0, 0.5, 2.0)
    flags = ("i", "f.", "fi.")
    spec = OutputSpec("out", OutputEncoding.NUMERICAL, OutputType.FLOATS, values, whole_types=flags)
    numbers = np.array([[0.0, 2.0, 0.5], [0.0, 0.0, 9.0], [0.01, 9.0, 9.0]])
    got = spec.from_numbers(numbers, [3, 2, 1])
    assert _typed(got) == _typed([[0.0, 2, 0.5], [0.0, 0], [0]])
    plain = OutputSpec("out", OutputEncoding.NUMERICAL, OutputType.FLOATS, values)
    assert _typed(plain.from_numbers(numbers, [3, 2, 1])) == _typed([[0, 2.0, 0.5], [0, 0], [0]])


def test_a_grid_whole_number_takes_its_cells_type() -> None:
    # a length grid e_n: k / e_n is a float, but an int where flagged "i"; d = 1 gives an int,
    # but a float where flagged "f"
    e = (1, 2, 4)
    flags = ("f", "i.", ".i.")
    spec = OutputSpec(
        "out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, e, whole_types=flags
    )
    numbers = np.array([[0.0, 1.0, 0.75], [1.0, 9.0, 9.0], [1.0, 0.5, 9.0]])
    got = spec.from_numbers(numbers, [3, 1, 2])
    assert _typed(got) == _typed([[0.0, 1, 0.75], [1.0], [1, 0.5]])


def whole_types_mean_of_a(max_len: int = 6) -> hm.Handmade:
    made = length_grid_mean_of_a(max_len)
    made.metadata["format_version"] = 7
    made.metadata["output"]["whole_types"] = ["." * (n - 1) + "f" for n in range(1, max_len + 1)]
    return made


def test_whole_types_load_from_a_version_7_file(tmp_path: Path) -> None:
    model = transformer.load(whole_types_mean_of_a().save(tmp_path / "m.safetensors"))
    assert model.meta.output.whole_types[2] == "..f"
    # twice the mean of "a" over BOS and 3 tokens, at "aaa": 6 / 4; at "bbb" the last is 0.0
    assert _typed(model.run(["bbb"])) == _typed([[0.0, 0.0, 0.0]])


def identity_of_whole_numbers(version: int = 8) -> hm.Handmade:
    """Each token copied, a one-hot output listing 1 and 2.0: position 0 flagged "f" (1.0), the
    last position of 3 flagged "i" (2)."""
    made = hm.identity([1, 2.0], max_len=3, out_type="floats")
    made.metadata["format_version"] = version
    made.metadata["output"]["whole_types"] = ["f", "f.", "f.i"]
    return made


def test_a_categorical_outputs_whole_numbers_take_their_cells_type(tmp_path: Path) -> None:
    model = transformer.load(identity_of_whole_numbers().save(tmp_path / "m.safetensors"))
    got = model.run([[1, 2.0, 2.0], [2.0, 1], [1]])
    assert _typed(got) == _typed([[1.0, 2.0, 2], [2.0, 1], [1.0]])
    ids, lengths = model.encode([[1, 1, 1]])
    assert _typed(model.to_values(model.run_ids(ids), lengths)) == _typed([[1.0, 1, 1]])


def test_a_categorical_outputs_whole_types_need_version_8(tmp_path: Path) -> None:
    path = identity_of_whole_numbers(version=7).save(tmp_path / "m.safetensors")
    fragment = "'output.whole_types' of a categorical output needs 'format_version' 8"
    expect_format_error(path, fragment)


WHOLE_TYPE_CASES = {
    "old_version": (
        lambda m: m.update(format_version=6),
        ("'output.whole_types' needs 'format_version' 7",),
    ),
    "without_values_or_grid": (
        lambda m: m["output"].pop("length_denominators"),
        ("'output.whole_types' needs 'output.values' or a grid",),
    ),
    "too_few": (
        lambda m: m["output"].update(whole_types=["i"] * 1),
        ("'output.whole_types' must hold 6 strings",),
    ),
    "wrong_length": (
        lambda m: m["output"]["whole_types"].__setitem__(2, "i"),
        ("'output.whole_types' must hold 6 strings, the n-th of n characters",),
    ),
    "unknown_flag": (
        lambda m: m["output"]["whole_types"].__setitem__(0, "x"),
        ("'i', 'f' or '.'",),
    ),
}


@pytest.mark.parametrize("case", sorted(WHOLE_TYPE_CASES))
def test_invalid_whole_types(case: str, tmp_path: Path) -> None:
    edit, fragments = WHOLE_TYPE_CASES[case]
    expect_format_error(_edited(tmp_path, edit, whole_types_mean_of_a()), *fragments)

"""`output.none_at` (format version 9): the listed number a numerical output decodes as None (a
number standing in for tracr's None in the model)."""

from __future__ import annotations

from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
from test_runtime_file_errors import expect_format_error

import transformer
from transformer.decoding import OutputEncoding, OutputSpec, OutputType

NUMBERS = [-1, 0.5, 2]  # tokens, each copied as its number; -1 stands in for None


def copied_numbers(version: int = 9) -> hm.Handmade:
    """No blocks: W_U reads each token's one-hot as its number, decoded as None at -1."""
    made = hm.identity(NUMBERS, max_len=3, out_type="floats")
    made.tensors["unembed.W_U"] = np.zeros((len(NUMBERS) + 2, 1), dtype=np.float32)
    made.tensors["unembed.W_U"][: len(NUMBERS), 0] = NUMBERS
    made.tensors["unembed.b_U"] = np.zeros(1, dtype=np.float32)
    made.metadata["config"]["d_vocab_out"] = 1
    made.metadata["format_version"] = version
    made.metadata["output"] = {
        "name": "same",
        "encoding": "numerical",
        "type": "floats",
        "values": list(NUMBERS),
        "none_at": -1,
    }
    return made


def test_the_stand_in_decodes_as_none(tmp_path: Path) -> None:
    model = transformer.load(copied_numbers().save(tmp_path / "m.safetensors"))
    assert model.run([[0.5, -1, 2], [-1]]) == [[0.5, None, 2], [None]]
    ids, lengths = model.encode([[2, -1]])
    assert model.to_values(model.run_ids(ids), lengths) == [[2, None]]
    array = model.run_array(np.array([[-1, 0.5, 2]], dtype=object))
    assert array.dtype == object and array.tolist() == [[None, 0.5, 2]]


def test_whole_types_leave_none_alone() -> None:
    spec = OutputSpec(
        "out",
        OutputEncoding.NUMERICAL,
        OutputType.FLOATS,
        (-1, 0.5, 2),
        whole_types=("f", "ff"),
        none_at=-1,
    )
    got = spec.from_numbers(np.array([[-1.0, 2.0], [2.0, 9.0]]), [2, 1])
    assert got == [[None, 2.0], [2.0]] and type(got[0][1]) is float


NONE_AT_CASES = {
    "old_version": (lambda m: m.update(format_version=8), "needs 'format_version' 9"),
    "not_listed": (
        lambda m: m["output"].update(none_at=3),
        "'output.none_at' must be one of the numbers 'output.values' lists, got 3",
    ),
    "a_bool": (lambda m: m["output"].update(none_at=True), "got true"),
    "a_string": (lambda m: m["output"].update(none_at="-1"), 'got "-1"'),
    "unlisted": (
        lambda m: m["output"].pop("values"),
        "'output.none_at' needs a numerical output with 'output.values'",
    ),
}


@pytest.mark.parametrize("case", sorted(NONE_AT_CASES))
def test_a_malformed_none_at_is_refused(tmp_path: Path, case: str) -> None:
    made = copied_numbers()
    edit, fragment = NONE_AT_CASES[case]
    edit(made.metadata)
    expect_format_error(made.save(tmp_path / "m.safetensors"), fragment)

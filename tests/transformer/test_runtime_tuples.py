"""`output.tuples`: a tracr program's output, whose strings starting with "\\x00" are boxed tuples
(docs/format.md). The runtime decodes them as the strings they are; the tools unbox them."""

from __future__ import annotations

from pathlib import Path

import handmade_models as hm
import pytest
from test_runtime_file_errors import expect_format_error
from test_runtime_grids import _edited, grid_mean_of_a

import transformer

TOKENS = ["\x00(1, 2)", "a"]


def test_output_tuples_loads_and_the_runtime_gives_the_strings(tmp_path: Path) -> None:
    made = hm.identity(TOKENS, out_type="strings")
    plain = transformer.load(made.save(tmp_path / "plain.safetensors"))
    assert plain.meta.output.tuples is False  # absent: every string is the program's own
    made.metadata["output"]["tuples"] = True
    model = transformer.load(made.save(tmp_path / "tuples.safetensors"))
    assert model.meta.output.tuples is True
    assert model.run([TOKENS]) == [TOKENS]


@pytest.mark.parametrize(
    ("made", "value", "fragment"),
    [
        (lambda: hm.identity(TOKENS, out_type="strings"), "yes", "'output.tuples' must be"),
        (grid_mean_of_a, True, "'output.tuples' needs a categorical output"),
    ],
)
def test_invalid_output_tuples(made: object, value: object, fragment: str, tmp_path: Path) -> None:
    def edit(meta: dict) -> None:
        meta["output"]["tuples"] = value

    expect_format_error(_edited(tmp_path, edit, made()), fragment)  # type: ignore[operator]

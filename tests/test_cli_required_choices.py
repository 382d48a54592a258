"""A required option of fixed choices, left out, is named with them: `rasp export M -o DIR` said
only `the following arguments are required: --to`."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["export", "m.safetensors", "-o", "out"],
            "rasp export: error: the following arguments are required: --to "
            "(write --to transformer-lens)",
        ),
        (
            ["export", "m.safetensors"],
            "rasp export: error: the following arguments are required: --to, -o/--output "
            "(write --to transformer-lens)",
        ),
        # an option without choices keeps argparse's words
        (
            ["export", "m.safetensors", "--to", "transformer-lens"],
            "rasp export: error: the following arguments are required: -o/--output",
        ),
    ],
)
def test_a_missing_option_of_fixed_choices_names_them(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.rstrip().endswith(message)

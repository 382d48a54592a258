"""A misspelt command, or a program given without one, is named with what to type: argparse only
listed the seven commands (`rasp complie`, `rasp sort.rasp --input abc`)."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run


@pytest.mark.parametrize(
    ("argv", "guess"),
    [
        (["complie", "p.rasp"], "(did you mean 'compile'?)"),
        (["Run", "p.rasp"], "(did you mean 'run'?)"),
        (
            ["sort.rasp", "--input", "abc"],
            "(to run a program, name the command first: rasp run sort.rasp --input abc)",
        ),
        (
            ["m.safetensors", "--input", "abc"],
            "(to run a model: rasp run --model m.safetensors --input abc; to see inside it: "
            "rasp show m.safetensors)",
        ),
    ],
)
def test_an_unknown_command_says_what_to_type(
    capsys: pytest.CaptureFixture[str], argv: list[str], guess: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.rstrip().endswith(
        f"rasp: error: argument COMMAND: invalid choice: {argv[0]!r} {guess}"
    )


def test_a_word_like_no_command_keeps_argparses_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "xyzzy")
    assert code == 2 and err.rstrip().endswith(
        "(choose from 'run', 'compile', 'verify', 'show', 'draw', 'export', 'repl')"
    )

"""An input typed without `--input` (`rasp run p.rasp hello`), or with a space and no quotes
(`--input hello world`), is named with the argument to write: argparse said only that --input is
required, or that `world` is an unrecognized argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parents[1]
REVERSE = str(ROOT / "programs" / "reverse.rasp")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ("run", REVERSE, "hello"),
            "rasp run: error: the following arguments are required: --input "
            "(write the input after it: --input 'hello')",
        ),
        (
            ("run", REVERSE, "hello", "world"),
            "rasp run: error: the following arguments are required: --input "
            "(write the input after it: --input 'hello world')",
        ),
        (
            ("run", REVERSE, "--input", "hello", "world"),
            "rasp run: error: unrecognized arguments: world (an input with spaces is one "
            "argument, in quotes: --input 'hello world')",
        ),
        (
            ("run", "--model", "m.safetensors", "abc"),
            "rasp run: error: the following arguments are required: --input "
            "(write the input after it: --input 'abc')",
        ),
        (
            ("draw", REVERSE, "abc", "-o", "x.png"),
            "rasp draw: error: the following arguments are required: --input "
            "(write the input after it: --input 'abc')",
        ),
    ],
)
def test_a_stray_input_names_the_argument_to_write(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], said: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.rstrip().splitlines()[-1] == said


def test_no_guess_where_nothing_is_stray(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", REVERSE)
    assert code == 2
    assert err.rstrip().endswith("the following arguments are required: --input")
    code, out, _ = run(capsys, "run", "--input", "abc", REVERSE)
    assert code == 0 and out == "[c, b, a] (strings)\n"


@pytest.mark.parametrize("argv", [("run",), ("run", "--json"), ("run", "-q")])
def test_run_alone_names_the_program_and_the_input(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    """`rasp run` alone said only that --input is required; `rasp run --input abc` then said
    that a program is too. Both are named at once."""
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.rstrip().splitlines()[-1] == (
        "rasp run: error: the following arguments are required: FILE.rasp "
        "(or --model M.safetensors), --input"
    )


def test_run_with_a_model_or_an_input_keeps_its_own_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "run", "--mod", "m.safetensors")
    assert code == 2 and err.rstrip().endswith("the following arguments are required: --input")
    code, _, err = run(capsys, "run", "--input", "abc")
    assert code == 2 and err.rstrip().endswith(
        "give either FILE.rasp or --model M.safetensors (exactly one)"
    )
    code, out, _ = run(capsys, "run", "-h")
    assert code == 0 and "usage: rasp run" in out

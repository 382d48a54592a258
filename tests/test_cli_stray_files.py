"""A second file on the command line (`rasp verify sort.safetensors p.rasp`, `rasp show a b`) is
named with the command line to write: a model after --model, or one file per run. argparse said
only `unrecognized arguments: p.rasp` (rasp.tools.cli_args)."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ("verify", "sort.safetensors", "p.rasp"),
            "rasp verify: error: unrecognized arguments: p.rasp (a model goes after --model: "
            "`rasp verify p.rasp --model sort.safetensors`)",
        ),
        (
            ("verify", "p.rasp", "sort.safetensors"),
            "rasp verify: error: unrecognized arguments: sort.safetensors (a model goes after "
            "--model: `rasp verify p.rasp --model sort.safetensors`)",
        ),
        (
            ("run", "m.safetensors", "p.rasp", "--input", "a b"),
            "rasp run: error: unrecognized arguments: p.rasp (a model goes after --model: "
            "`rasp run p.rasp --model m.safetensors --input 'a b'`)",
        ),
        (
            ("verify", "p.rasp", "--model", "m.safetensors", "n.safetensors"),
            "rasp verify: error: unrecognized arguments: n.safetensors (rasp verify takes one "
            "model, after --model: run it once for each)",
        ),
        (
            ("repl", "a.rasp", "b.rasp"),
            "rasp repl: error: unrecognized arguments: b.rasp (rasp repl takes one program: load "
            'the others inside it, load "b.rasp";)',
        ),
        (
            ("show", "a.safetensors", "b.safetensors"),
            "rasp show: error: unrecognized arguments: b.safetensors (rasp show takes one "
            "model: run it once for each)",
        ),
        (
            ("compile", "a.rasp", "b.rasp", "--vocab", "ab", "--max-len", "4", "-o", "m"),
            "rasp compile: error: unrecognized arguments: b.rasp (rasp compile takes one "
            "program: run it once for each)",
        ),
    ],
)
def test_a_second_file_names_the_command_line_to_write(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], said: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.rstrip().splitlines()[-1] == said


def test_other_stray_words_keep_argparses_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "show", "a.safetensors", "extra")
    assert code == 2
    assert err.rstrip().splitlines()[-1] == "rasp show: error: unrecognized arguments: extra"

"""`--help` (issue 11): every command has examples, every argument a description, the token rule is
said, and every example is a valid command line that runs."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from rasp.tools.cli_parser import arguments, build_parser
from rasp.tools.help_text import EXAMPLES
from tests.cli_helpers import has_matplotlib, run

ROOT = Path(__file__).resolve().parents[1]


def _example_argv(line: str) -> list[str]:
    words = shlex.split(line)
    if "<" in words:  # `rasp run - ... < FILE`: the redirection is the shell's
        words = words[: words.index("<")]
    assert words[0] == "rasp"
    return words[1:]


def test_every_command_has_examples_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in build_parser().subcommand_parsers:  # type: ignore[attr-defined]
        assert run(capsys, command, "--help")[0] == 0
        text = capsys.readouterr().out or run(capsys, command, "--help")[1]
        assert "examples:" in text and EXAMPLES[command][0] in text, command
    assert "examples:" in run(capsys, "--help")[1]


def test_every_argument_is_described_in_the_help() -> None:
    # compile's and draw's -o, export's --to and -o, show's and export's M.safetensors had none
    for command, sub in build_parser().subcommand_parsers.items():  # type: ignore[attr-defined]
        for action in arguments(sub):
            assert action.help, (command, action.option_strings or action.dest)


def test_help_says_how_tokens_are_read(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "compile", "verify", "draw"):
        text = run(capsys, command, "--help")[1]
        assert "`tokens` is `tokens_str`" in text and '[1,"1",true,1.0]' in text, command


def test_the_help_examples_are_valid_command_lines() -> None:
    parser = build_parser()
    for command, lines in EXAMPLES.items():
        for line in lines:
            if "COMMAND" in line:
                continue
            args = parser.parse_args(_example_argv(line))
            assert args.command == (command if command != "rasp" else args.command), line


@pytest.mark.slow
def test_the_help_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example works, run from a directory holding the repository's programs."""
    import subprocess

    (tmp_path / "programs").symlink_to(ROOT / "programs")
    order = ["rasp", "compile", "run", "show", "verify", "export", "draw"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for command in order:
        for line in EXAMPLES[command]:
            if "COMMAND" in line:
                continue
            if command == "draw" and not has_matplotlib():
                continue
            words = shlex.split(line)
            feed = None
            if "<" in words:
                feed = (tmp_path / words[words.index("<") + 1]).read_bytes()
                words = words[: words.index("<")]
            done = subprocess.run(
                [sys.executable, "-m", "rasp", *words[1:]],
                cwd=tmp_path,
                env=env,
                input=feed,
                capture_output=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, (line, done.stderr.decode())

"""`rasp help` and `rasp help COMMAND`, as git and pip spell them, print the help that `--help`
prints."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run


@pytest.mark.parametrize("command", [(), ("compile",), ("repl",)])
def test_help_word_is_help_option(capsys: pytest.CaptureFixture[str], command: tuple[str]) -> None:
    code, expected, _ = run(capsys, *command, "--help")
    assert code == 0
    code, out, err = run(capsys, "help", *command)
    assert (code, out, err) == (0, expected, "")
    assert out.startswith("usage: rasp" + "".join(f" {c}" for c in command))


def test_help_of_an_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "help", "nope")
    assert code == 2 and "invalid choice: 'nope'" in err

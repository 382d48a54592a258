"""Running the `rasp` command line in-process from tests, and whether `draw` can (matplotlib)."""

from __future__ import annotations

import pytest

from rasp.tools.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`rasp ARGV...`: its exit code, standard output and standard error."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        return False
    return True

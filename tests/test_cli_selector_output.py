"""`rasp run` of a program whose last name is a selector: a class runs one to see which keys it
selects, and the refusal says where its grid is shown (the REPL), as well as how to make an s-op."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.tools.repl import ReplSession
from tests.cli_helpers import run


def test_a_selector_output_points_at_the_repls_grid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("prev.rasp").write_text("prev = select(indices, indices - 1, ==);\n")
    code, out, err = run(capsys, "run", "prev.rasp", "--input", "abc")
    assert (code, out) == (1, "")
    assert err.splitlines()[-1] == (
        "hint: a program's output is an s-op: aggregate the selector, or count it with "
        "selector_width(...); to see which keys it selects, rasp repl prev.rasp shows its grid: "
        'prev("abc");'
    )
    # what it names works: the REPL draws the grid of the keys each query selects
    session = ReplSession()
    session.load_path("prev.rasp")
    assert session.feed('prev("abc");').splitlines() == [
        "\t = ",
        " \t\t\t     a b c",
        " \t\t\t a |      ",
        " \t\t\t b | 1    ",
        " \t\t\t c |   1  ",
    ]

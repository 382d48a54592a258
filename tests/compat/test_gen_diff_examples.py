"""gen_diff's reading of the example in force: a `set example` that fails leaves it as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compat.gen_diff import USAGE, chunks, main, selector_example, session_text, usage_error
from tests.compat.rasp_gen import Program
from tests.compat.test_original_sessions import our_lines


def test_a_failing_set_example_leaves_the_example() -> None:
    """Seed 951801: after `set example hello` (an unbound name: an error in both), the grid of
    the example `[-2, 7, 0]`, aligned here for its long tokens (section 7), was compared as one
    of "hello" and reported as a divergence."""
    program = Program(
        "[-2, 7, 0]",
        ("set example hello", 'set s-op example "ab"', "x = select(indices, indices, <=);"),
    )
    assert selector_example(program, 2) == "[-2, 7, 0]"
    assert selector_example(program, 2, "s-op") == '"ab"'
    ours = our_lines(session_text([program]))
    assert "ERR" in ours  # the failing `set example`
    theirs = [
        line.replace(" -2 7  0", " -2 7 0").replace("  7 | 1  1", " 7 | 1 1") for line in ours
    ]
    theirs = [
        line.replace("  0 | 1  1  1", " 0 | 1 1 1").replace("      -2", "     -2")
        for line in theirs
    ]
    assert theirs != ours
    assert chunks(ours, [program]) == chunks(theirs, [program])


def test_a_run_without_the_original_says_how_to_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README's `python tests/compat/gen_diff.py SEED COUNT` without RASP_ORIGINAL ended in a
    KeyError traceback; without arguments, an IndexError."""
    monkeypatch.delenv("RASP_ORIGINAL", raising=False)
    assert main(["954551", "3"]) == 2
    assert "RASP_ORIGINAL (unset) is no checkout" in capsys.readouterr().err
    monkeypatch.setenv("RASP_ORIGINAL", str(tmp_path))
    assert main(["954551", "3"]) == 2
    assert f"RASP_ORIGINAL ({tmp_path}) is no checkout" in capsys.readouterr().err
    (tmp_path / "RASP_support").mkdir()
    assert usage_error(["954551", "3", "10"]) == ""
    for argv in ([], ["954551"], ["x", "3"], ["1", "2", "3", "4"]):
        assert usage_error(argv) == USAGE

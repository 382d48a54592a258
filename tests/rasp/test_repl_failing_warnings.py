"""A REPL statement that fails prints its error first, then its lint warnings; the error names a
warning inside what failed as the likely cause (rasp.tools.failure_warnings). Transcript:
tests/golden/repl/failing_warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.tools.repl import ReplSession
from tests.cli_helpers import run

LIKELY = "hint: likely because of the warning below, at <repl>:1:11"


def test_the_error_comes_first_and_names_the_warning_inside_it() -> None:
    printed = ReplSession().feed("y = 10 / (indices < 3 < 1);")
    assert printed.index("error: division by zero") < printed.index("warning: comparisons")
    assert LIKELY in printed and printed.index(LIKELY) < printed.index("warning: comparisons")


def test_a_warning_outside_what_failed_follows_the_error_without_the_hint() -> None:
    printed = ReplSession().feed("x = 1 < indices < 3 + foo;")
    assert printed.index("error: Undefined variable: foo") < printed.index("warning:")
    assert "likely because" not in printed


def test_a_statement_that_failed_leaves_no_warning_for_a_later_compile() -> None:
    # (:compile names a warning of an expression the output reads as a constant's likely cause:
    # the failed statement bound nothing)
    session = ReplSession()
    session.feed("y = 10 / (indices < 3 < 1);")
    assert session.precedence_warnings == []
    session.feed("z = 1 < indices < 3;")
    assert len(session.precedence_warnings) == 1


@pytest.mark.parametrize(
    ("flags", "hint"),
    [
        ((), "hint: likely because of the warning above, at c.rasp:1:11"),
        (("--quiet",), "hint: likely because of the warning at c.rasp:1:11 (comparisons do not"),
    ],
)
def test_rasp_run_names_the_warning_as_the_likely_cause_too(
    flags: tuple[str, ...],
    hint: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # (--quiet shows no warning: the hint then says what it warns of)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.rasp").write_text("y = 10 / (indices < 3 < 1);\n", encoding="utf-8")
    code, _, err = run(capsys, "run", "c.rasp", "--input", "abc", *flags)
    assert code == 1 and hint in err
    assert ("warning:" in err.split("error:")[0]) is not bool(flags)


def test_a_loaded_files_failing_statement_names_the_warning_too(tmp_path: Path) -> None:
    # (a typed statement got the hint, the same statement of a loaded file none)
    program = tmp_path / "f.rasp"
    program.write_text("y = 10 / (indices < 3 < 1);\nz = tokens;\n", encoding="utf-8")
    session = ReplSession()
    first = session.feed(f'load "{program}";')
    cause = f"hint: likely because of the warning above, at {program}:1:11"
    assert first.index("warning: comparisons") < first.index("error: division by zero")
    assert first.index("error: division by zero") < first.index(cause)
    # loaded again, the warning is not printed again: the hint says what it warns of
    again = session.feed(f'load "{program}";')
    assert "warning:" not in again
    assert f"likely because of the warning at {program}:1:11 (comparisons do not chain" in again

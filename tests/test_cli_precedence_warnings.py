"""The precedence lint (`rasp.lint`) on the command line: `rasp run`, `compile` and `verify` show
each warning located on stderr before the program runs, never on stdout (`--json`'s object keeps
to stdout; compile's and verify's list them in `warnings`), `--quiet` silences them, and parentheses that spell
the grouping say the program means it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run

TRAP = 'x = tokens == "a";\nnot_b = not tokens == "b";\n'
WARNING = "p.rasp:2:9: warning: 'not' applies to tokens alone: this is (not tokens) == \"b\""


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "p.rasp"
    path.write_text(TRAP, encoding="utf-8")
    return path


def test_run_warns_on_stderr_and_still_runs_the_original_meaning(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "run", "p.rasp", "--input", "abc")
    assert code == 0
    assert out == "[F]*3 (bools)\n"  # (not tokens) == "b", as the original computes it
    assert err.splitlines() == [
        WARNING + ", false at every position",
        '    not_b = not tokens == "b";',
        "            ^~~~~~~~~~~~~~~~~",
        'hint: write not (tokens == "b") (or tokens != "b"); (not tokens) == "b" keeps this '
        "meaning without the warning",
    ]


def test_json_stdout_holds_only_the_result(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "run", "p.rasp", "--input", "abc", "--json")
    assert code == 0 and json.loads(out) == [False, False, False]
    assert err.startswith(WARNING)


def test_quiet_silences_it_and_parentheses_say_it_is_meant(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "run", "p.rasp", "--input", "abc", "--quiet")[1:] == ("[F]*3 (bools)\n", "")
    program.write_text(TRAP.replace("not tokens", "(not tokens)"), encoding="utf-8")
    assert run(capsys, "run", "p.rasp", "--input", "abc") == (0, "[F]*3 (bools)\n", "")


def test_a_warning_comes_before_the_error_it_explains(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("v.rasp").write_text('v = tokens in ["a", "e"] and indices < 2;\n', encoding="utf-8")
    code, _, err = run(capsys, "run", "v.rasp", "--input", "abc")
    assert code == 1
    assert err.index("v.rasp:1:5: warning: 'in' is looser") < err.index("v.rasp:1:15: error:")


def test_a_loaded_files_warning_is_shown_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("h.rasp").write_text("m = indices % 2 * 3;\n", encoding="utf-8")
    Path("main.rasp").write_text('load "h";\nload "h";\ny = m + 1;\n', encoding="utf-8")
    code, out, err = run(capsys, "run", "main.rasp", "--input", "abc")
    assert (code, out) == (0, "[1, 2, 3] (ints)\n")  # indices % 6 + 1
    assert err.count("warning:") == 1
    assert err.startswith("h.rasp:1:5: warning: '%' is looser than '*' in RASP")


def test_compile_and_verify_warn_and_compile_json_lists_it(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "compile",
        "p.rasp",
        "--vocab",
        "ab",
        "--max-len",
        "3",
        "-o",
        "m.safetensors",
        "--json",
    )
    assert code == 0 and err.startswith(WARNING)
    warnings = json.loads(out)["warnings"]
    assert warnings[0].startswith("p.rasp:2:9: 'not' applies to tokens alone")
    code, _, err = run(capsys, "verify", "p.rasp", "--model", "m.safetensors")
    assert code == 0 and err.startswith(WARNING)
    code, out, err = run(capsys, "verify", "p.rasp", "--model", "m.safetensors", "--json")
    assert code == 0 and err.startswith(WARNING)
    assert json.loads(out)["warnings"] == warnings[:1]  # (verify probes no failing inputs)
    code, out, _ = run(capsys, "verify", "p.rasp", "--vocab", "ab", "--max-len", "2", "--json")
    assert code == 0 and json.loads(out)["warnings"] == warnings[:1]

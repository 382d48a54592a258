"""The tracr campaigns, run by hand: without TRACR_SRC, or with wrong arguments, one line (what is
wrong, then the usage) and exit status 2. They ended in a traceback: ModuleNotFoundError for tracr
or absl without TRACR_SRC, IndexError or ValueError for missing or wrong arguments."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.from_tracr import campaign_start
from tests.from_tracr.campaign_start import Usage, start_problem

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGNS = [
    "tracr_friendly_campaign",
    "tracr_lib_campaign",
    "mixed_encodings_campaign",
    "numpy_means_campaign",
]


def _run(script: str, *args: str, tracr_src: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TRACR_SRC"}
    env["PYTHONPATH"] = str(ROOT)
    if tracr_src is not None:
        env["TRACR_SRC"] = str(tracr_src)
    path = ROOT / "tests" / "from_tracr" / f"{script}.py"
    return subprocess.run(
        [sys.executable, str(path), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def _one_line(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr  # (no traceback)
    return lines[0]


@pytest.mark.parametrize("script", CAMPAIGNS)
def test_a_campaign_without_tracr_src_says_what_to_set(script: str) -> None:
    line = _one_line(_run(script, "780100", "3", "-v"))
    assert line.startswith("error: TRACR_SRC is unset (set it to a checkout of deepmind/tracr); ")
    usage = f"usage: TRACR_SRC=/path/to/tracr PYTHONPATH=. python tests/from_tracr/{script}.py"
    assert f"{usage} SEED COUNT" in line


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ((), "2 arguments expected, got 0"),
        (("780100",), "2 arguments expected, got 1"),
        (("780100", "x"), "'x' is not a whole number"),
        (("780100", "3", "--deeper"), "unknown option --deeper"),
    ],
)
def test_wrong_arguments_are_one_line_before_tracr_is_looked_for(
    args: tuple[str, ...], problem: str
) -> None:
    line = _one_line(_run("tracr_lib_campaign", *args))  # (TRACR_SRC unset: not the problem)
    assert line.startswith(f"error: {problem}; usage: ")
    assert line.endswith("SEED COUNT [-v] [--their-lib] [--big] [--deep]")


def test_a_folder_that_is_no_tracr_checkout_is_named(tmp_path: Path) -> None:
    line = _one_line(_run("mixed_encodings_campaign", "1", "2", "5", tracr_src=tmp_path))
    assert f"error: TRACR_SRC ({tmp_path}) is no checkout of deepmind/tracr" in line
    assert "(no tracr/rasp/rasp.py)" in line


def test_the_checkout_and_absl_are_checked_as_each_campaign_imports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A campaign of tracr's library needs tracr/compiler/lib.py too; numpy_means_campaign only
    tracr.rasp. Then absl (tracr's dependency), which this project does not install."""
    (tmp_path / "tracr" / "rasp").mkdir(parents=True)
    (tmp_path / "tracr" / "rasp" / "rasp.py").write_text("")
    monkeypatch.setenv("TRACR_SRC", str(tmp_path))
    have: set[str] = set()
    monkeypatch.setattr(campaign_start, "_importable", lambda name: name in have)
    lib, rasp_only = Usage("LIB", 2, 2), Usage("RASP", 2, 2, compiler=False)
    assert "(no tracr/compiler/lib.py); usage: LIB" in start_problem(["1", "2"], lib)
    absl = "error: absl is not importable (tracr needs absl-py: pip install absl-py); usage: RASP"
    assert start_problem(["1", "2"], rasp_only) == absl
    have.add("absl")
    assert start_problem(["1", "2", "-v"], rasp_only) == ""
    (tmp_path / "tracr" / "compiler").mkdir()
    (tmp_path / "tracr" / "compiler" / "lib.py").write_text("")
    assert start_problem(["1", "2"], lib) == ""
    assert start_problem(["1", "2", "3"], Usage("M", 2, 3)) == ""


@pytest.mark.skipif(importlib.util.find_spec("tracr") is not None, reason="tracr is installed")
def test_recording_tracr_values_without_tracr_says_so() -> None:
    line = _one_line(_run("record_tracr_values"))
    assert line == (
        "error: tracr is not importable (run this with a Python where tracr is installed); "
        "usage: python tests/from_tracr/record_tracr_values.py"
    )
    assert _one_line(_run("record_tracr_values", "5")).startswith("error: 0 arguments expected")

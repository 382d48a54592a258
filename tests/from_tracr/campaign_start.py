"""Whether a tracr campaign run by hand can start: where it cannot, one line on stderr (what is
wrong, then the usage) and exit status 2, before the campaign imports DeepMind's tracr.

The campaigns import tracr (from TRACR_SRC) and its dependency absl at their top: a run without
TRACR_SRC, or with no SEED, ended in a ModuleNotFoundError or IndexError traceback (as
tests/compat/gen_diff.py did without the original RASP).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Usage:
    """How a campaign is run: its usage line, how many positional arguments (whole numbers) it
    takes, and its flags."""

    line: str
    least: int
    most: int
    flags: frozenset[str] = frozenset({"-v"})
    tracr_src: bool = True  # tracr comes from TRACR_SRC (else: installed in this Python)
    compiler: bool = True  # it imports tracr.compiler.lib (not only tracr.rasp)


def _importable(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def argument_problem(argv: Sequence[str], usage: Usage) -> str:
    """What is wrong with the arguments ("" where nothing is)."""
    unknown = [a for a in argv if a.startswith("-") and a not in usage.flags]
    if unknown:
        return f"unknown option {unknown[0]}"
    args = [a for a in argv if not a.startswith("-")]
    if not usage.least <= len(args) <= usage.most:
        wanted = usage.least if usage.least == usage.most else f"{usage.least} to {usage.most}"
        return f"{wanted} arguments expected, got {len(args)}"
    bad = [a for a in args if not a.isdigit()]
    return f"{bad[0]!r} is not a whole number" if bad else ""


def tracr_problem(usage: Usage) -> str:
    """Why tracr cannot be imported as the campaign imports it ("" where it can)."""
    if usage.tracr_src:
        src = os.environ.get("TRACR_SRC", "")
        if not src:
            return "TRACR_SRC is unset (set it to a checkout of deepmind/tracr)"
        needed = ["tracr/rasp/rasp.py"] + (["tracr/compiler/lib.py"] if usage.compiler else [])
        missing = [p for p in needed if not (Path(src) / p).is_file()]
        if missing:
            return f"TRACR_SRC ({src}) is no checkout of deepmind/tracr (no {missing[0]})"
    elif not _importable("tracr"):
        return "tracr is not importable (run this with a Python where tracr is installed)"
    if not _importable("absl"):
        return "absl is not importable (tracr needs absl-py: pip install absl-py)"
    return ""


def start_problem(argv: Sequence[str], usage: Usage) -> str:
    """The one line a run that cannot start prints ("" where it can)."""
    problem = argument_problem(argv, usage) or tracr_problem(usage)
    return f"error: {problem}; usage: {usage.line}" if problem else ""


def exit_unless_startable(usage: Usage) -> None:
    """Exit with status 2 and one line on stderr where this run (sys.argv) cannot start."""
    line = start_problem(sys.argv[1:], usage)
    if line:
        print(line, file=sys.stderr)
        raise SystemExit(2)

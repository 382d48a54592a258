"""Shared fixtures: golden-file comparison with `--update-golden` (or `UPDATE_GOLDEN=1`); the
hypothesis profile; `sum` as on Python 3.12; `program`, a program's text written to a file; the
lengths of the texts `rasp.parser.parse` reads."""

from __future__ import annotations

import builtins
import difflib
import gc
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# pytest-xdist runs one worker per core, and torch's OpenMP threads busy-wait between parallel
# regions by default: two workers' spinning threads on two cores made some tests 8x slower. A
# passive wait changes only how idle threads wait, never how many there are or the evaluation order.
# Set before any worker starts (they inherit it) and before torch is first imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Deterministic by default: every run draws the same examples (a failure reproduces, and CI does
# not pass or fail by chance). HYPOTHESIS_PROFILE=explore draws fresh ones each run, to hunt.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

GOLDEN_DIR = Path(__file__).parent / "golden"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The garbage collected now, and the heap left frozen, so that pytest's closing collections
    (its unraisable-exception check, in `pytest_unconfigure` and its cleanup) walk nothing.

    A pytest-xdist worker reports its session finished after this hook; execnet then gives it 5
    seconds to end and sends it SIGINT if it has not (`WorkerGateway._terminate_execution`). Those
    closing collections over a worker's whole heap took longer on a loaded machine, and the SIGINT
    landed in a WeakSet callback they ran: a passing `pytest -n 2` ended with a
    PytestUnraisableExceptionWarning holding a KeyboardInterrupt. What this collection finalizes
    still reaches pytest's unraisable hook and is reported as before."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def program(tmp_path: Path) -> Callable[..., str]:
    """Writes a program's text to a file in `tmp_path` (`prog.rasp` unless named) and gives its
    path, for the CLI tests."""

    def write(text: str, name: str = "prog.rasp") -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return write


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files under tests/golden/ from the current output (no comparing)",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when golden files should be rewritten rather than compared."""
    return (
        bool(request.config.getoption("--update-golden")) or os.environ.get("UPDATE_GOLDEN") == "1"
    )


@pytest.fixture
def golden(update_golden: bool) -> Callable[[Path, str], None]:
    """`golden(path, actual)`: compare `actual` with the file (diff on failure), or rewrite it."""

    def check(path: Path, actual: str) -> None:
        if update_golden:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"missing golden file {path}; run pytest with --update-golden to create it")
        expected = path.read_text(encoding="utf-8")
        if actual != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    actual.splitlines(keepends=True),
                    fromfile=f"{path} (expected)",
                    tofile="actual",
                )
            )
            pytest.fail(f"output differs from {path.name}:\n{diff}", pytrace=False)

    return check


@pytest.fixture
def compensated_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sum` of floats as Python 3.12 computes it, compensating rounding ([0.1] * 10 sums to 1.0),
    on any Python: a program's values must not change with it (the interpreter adds in key order).
    `math.fsum` rounds once, not as Neumaier does, but both give the exact sum in these tests."""
    python_sum = builtins.sum

    def compensated(values: Iterable[Any], start: Any = 0) -> Any:
        values = list(values)
        if values and all(type(v) is float for v in values):
            return math.fsum([start, *values])
        return python_sum(values, start)

    monkeypatch.setattr(builtins, "sum", compensated)
    assert sum([0.1] * 10) == 1.0


@pytest.fixture
def parsed_lengths(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each text `rasp.parser.parse` is given from now on (a str or a Source), in
    order: tests that a long statement is not parsed again at each line count them."""
    import rasp.parser

    lengths: list[int] = []
    parse = rasp.parser.parse

    def counted(text: Any, *args: Any, **kwargs: Any) -> Any:
        lengths.append(len(getattr(text, "text", text)))
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(rasp.parser, "parse", counted)
    return lengths


# -- the CLI tests' shared files (a test module's own fixture of the same name takes precedence) --


@pytest.fixture(scope="module")
def prev_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-built previous-token model, saved once per module."""
    pytest.importorskip("transformer")
    from tests.transformer.handmade_models import previous_token

    return previous_token().save(tmp_path_factory.mktemp("cli") / "prev.safetensors")


@pytest.fixture()
def reverse_file(tmp_path: Path) -> Path:
    """The paper's reverse as a `.rasp` file."""
    pytest.importorskip("compiler")
    from tests.model_cli_files import REVERSE

    path = tmp_path / "reverse.rasp"
    path.write_text(REVERSE)
    return path


@pytest.fixture(scope="module")
def reverse_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """programs/reverse.rasp compiled by the CLI for "abc" at N = 4, once per module."""
    pytest.importorskip("compiler")
    from rasp.tools.cli import main

    path = tmp_path_factory.mktemp("conventions") / "reverse.safetensors"
    program = Path(__file__).resolve().parents[1] / "programs" / "reverse.rasp"
    argv = ["compile", str(program), "--vocab", "abc", "--max-len", "4", "-o", str(path), "-q"]
    assert main(argv) == 0
    return path

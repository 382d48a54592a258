"""bench/bench_scale.py's options that read an earlier run's results (`--speed-only`, `--plot`,
`--merge`): a file that is missing or not results is one line and exit status 2, before any
measuring (bench/README.md), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_bench_scale import _bench


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--speed-only", "--speed-cases", "length:4"], None),
        (["--plot"], None),
        (["--speed-only"], "[1, 2]"),
        (["--plot"], "{not json"),
    ],
)
def test_a_run_reading_results_that_are_not_there_says_so_in_one_line(
    tmp_path: Path, args: list[str], text: str | None
) -> None:
    results = tmp_path / "results.json"
    if text is not None:
        results.write_text(text)
    done = _bench(*args, "--results", str(results))
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"bench_scale.py: error: {args[0]} reads {results}, which ")
    assert results.exists() == (text is not None)  # (nothing written in its place)


def test_a_merge_of_a_missing_part_says_which(tmp_path: Path) -> None:
    part, results = tmp_path / "part.json", tmp_path / "merged.json"
    done = _bench("--merge", str(part), "--results", str(results))
    assert done.returncode == 2 and not results.exists()
    assert done.stderr == (
        f"bench_scale.py: error: --merge reads {part}, which does not exist; give a results "
        "file of an earlier run\n"
    )

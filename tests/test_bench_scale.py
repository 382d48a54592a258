"""bench/bench_scale.py writes where it is told (bench/README.md, how to run): a run with its own
`--results` file leaves the committed results and plot alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    """bench/bench_scale.py run with `args`, the repository first on PYTHONPATH (it imports it)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "bench/bench_scale.py", *args],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_run_with_its_own_results_file_draws_its_plot_beside_it(tmp_path: Path) -> None:
    """It once drew every run's plot over bench/scale.png, whatever `--results` said."""
    pytest.importorskip("matplotlib")
    committed = {
        p: p.read_bytes()
        for p in (ROOT / "bench" / "scale.png", ROOT / "bench" / "results" / "scale.json")
    }
    results = tmp_path / "sizes.json"
    done = _bench(
        "--sizes-only", "--lengths", "10", "--programs", "length", "--results", str(results)
    )
    assert done.returncode == 0, done.stderr
    assert all(path.read_bytes() == data for path, data in committed.items())
    rows = json.loads(results.read_text())["sizes"]
    assert [(row["program"], row["N"], row["params"]) for row in rows] == [("length", 10, 470)]
    assert (tmp_path / "sizes.png").stat().st_size > 0
    assert "| length | 10 | 1 |" in done.stdout


def test_mixed_lengths_rows_go_to_their_own_file(tmp_path: Path) -> None:
    """`--mixed` adds rows to its own results file, never to scale.json (bench/README.md)."""
    committed = (ROOT / "bench" / "results" / "scale.json").read_bytes()
    results = tmp_path / "mixed.json"
    names = ["forward", "forward_padded", "run", "run_str", "run_array", "run_array_per_length"]
    kept = {"program": "sort", "N": 4, "device": "cpu", "threads": 1}
    kept |= {f"{name}{clock}": 1.0 for name in names for clock in ("_s", "_cpu_s")}
    results.write_text(json.dumps({"mixed": [kept]}))
    done = _bench("--mixed", "--speed-cases", "hist:4", "--threads", "1", "--results", str(results))
    assert done.returncode == 0, done.stderr
    assert (ROOT / "bench" / "results" / "scale.json").read_bytes() == committed
    rows = json.loads(results.read_text())["mixed"]
    assert [(row["program"], row["N"], row["threads"]) for row in rows] == [
        ("sort", 4, 1),  # kept
        ("hist", 4, 1),
    ]
    assert rows[1]["forward_cpu_s"] > 0 and rows[1]["run_array_s"] > 0
    assert "| hist | 4 | cpu | 1 | CPU | " in done.stdout

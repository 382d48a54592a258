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


def test_a_run_with_its_own_results_file_draws_its_plot_beside_it(tmp_path: Path) -> None:
    """It once drew every run's plot over bench/scale.png, whatever `--results` said."""
    pytest.importorskip("matplotlib")
    committed = {
        p: p.read_bytes()
        for p in (ROOT / "bench" / "scale.png", ROOT / "bench" / "results" / "scale.json")
    }
    results = tmp_path / "sizes.json"
    command = [sys.executable, "bench/bench_scale.py", "--sizes-only", "--lengths", "10"]
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    done = subprocess.run(
        [*command, "--programs", "length", "--results", str(results)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert all(path.read_bytes() == data for path, data in committed.items())
    rows = json.loads(results.read_text())["sizes"]
    assert [(row["program"], row["N"], row["params"]) for row in rows] == [("length", 10, 470)]
    assert (tmp_path / "sizes.png").stat().st_size > 0
    assert "| length | 10 | 1 |" in done.stdout

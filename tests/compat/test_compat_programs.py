"""Programs written for the original RASP, with outputs derived by hand from its semantics.

Each `programs/*.rasp` file holds its expectations in comment lines:

    # case: {"input": "aba", "name": "x", "out": [0, 1, 1]}   (name: default the CLI's default)
    # compile: {"vocab": "ab", "max_len": 8}                   (absent: interpreter only)

Every case runs through the command line as a user would (`rasp run FILE --input X --json`), and,
for a file with a `compile` line, through `rasp compile` and `rasp run --model`. Each file exposed a
bug (see its header); the expected outputs were worked out from the original's rules, not by running
our interpreter.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from rasp.tools.cli import main

PROGRAMS = Path(__file__).parent / "programs"


def _spec(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    cases: list[dict[str, Any]] = []
    compile_spec = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# case: "):
            cases.append(json.loads(line.removeprefix("# case: ")))
        elif line.startswith("# compile: "):
            compile_spec = json.loads(line.removeprefix("# compile: "))
    assert cases, f"{path.name} has no '# case:' line"
    return cases, compile_spec


FILES = sorted(PROGRAMS.glob("*.rasp"))
CASES = [(f, c) for f in FILES for c in _spec(f)[0]]
# Programs the certifier refuses (a strict xfail each, with the reason). Long addition was one
# until the certifier stopped adding a rounding to the BOS/PAD residuals where a sublayer writes an
# exact 0.0, and judged the exactness of a sum per column of weights (its bound times the integer
# band's K ~ 2^23 exceeded the step's margin).
NOT_YET_CERTIFIED: set[str] = set()

COMPILED = [
    pytest.param(
        f,
        name,
        spec,
        marks=[pytest.mark.xfail(strict=True, reason="refused by the certifier (see above)")]
        if f.stem in NOT_YET_CERTIFIED
        else [],
        id=f"{f.stem}-{name or 'default'}",
    )
    for f in FILES
    if (spec := _spec(f)[1]) is not None
    for name in sorted({c.get("name") or "" for c in _spec(f)[0]})
]


def same(got: Any, want: Any) -> bool:
    """Equal as RASP values: numbers within 1e-6 relative, a bool only equals a bool."""
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(got, bool) or isinstance(want, bool):
        return isinstance(got, bool) and isinstance(want, bool) and got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)
    return bool(got == want)


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _id(item: tuple[Any, ...]) -> str:
    path, case = item[0], item[1]
    name = case.get("name") if isinstance(case, dict) else case
    return f"{path.stem}-{name or 'default'}-{case['input'] if isinstance(case, dict) else ''}"


@pytest.mark.parametrize(("path", "case"), CASES, ids=[_id(c) for c in CASES])
def test_interpreter(capsys: pytest.CaptureFixture[str], path: Path, case: dict[str, Any]) -> None:
    argv = ["run", str(path), "--input", case["input"], "--json"]
    if case.get("name"):
        argv += ["--name", case["name"]]
    got = run_json(capsys, argv)
    assert same(got, case["out"]), f"got {got}, want {case['out']}"


@pytest.mark.exactness
@pytest.mark.parametrize(("path", "name", "spec"), COMPILED)
def test_compiled(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    path: Path,
    name: str,
    spec: dict[str, Any],
) -> None:
    model = tmp_path / "m.safetensors"
    argv = ["compile", str(path), "--vocab", spec["vocab"], "--max-len", str(spec["max_len"])]
    argv += ["-o", str(model)] + (["--name", name] if name else [])
    code = main(argv)
    _, err = capsys.readouterr()
    assert code == 0, err
    for case in _spec(path)[0]:
        if (case.get("name") or "") != name:
            continue
        got = run_json(capsys, ["run", "--model", str(model), "--input", case["input"], "--json"])
        assert same(got, case["out"]), f"input {case['input']}: got {got}, want {case['out']}"

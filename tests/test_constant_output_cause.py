"""A compile whose output is one value everywhere names the precedence warning shown before it,
where the output reads the expression warned of (`0 < x < 3` is `(0 < x) < 3`: a bool below 3),
instead of asking whether the vocabulary holds the tokens the program looks for."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformer")

from tests.cli_helpers import run


def _compile(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> str:
    program = tmp_path / "p.rasp"
    program.write_text(text, encoding="utf-8")
    argv = ["compile", str(program), "--vocab", "[1,2,3,4]", "--max-len", "4"]
    code, _, err = run(capsys, *argv, "-o", str(tmp_path / "p.safetensors"))
    assert code == 0
    return err


def test_a_constant_output_names_the_chained_comparison_it_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = _compile(capsys, tmp_path, "res = 0 < tokens_int < 3;\n")
    last = err.strip().splitlines()[-1]
    assert last.startswith("warning: the output `res` is True at every position")
    assert "the model computes a constant, likely because of the warning at " in last
    assert "p.rasp:1:7 (comparisons do not chain in RASP" in last
    assert "vocabulary" not in last


def test_a_warning_the_output_does_not_read_leaves_the_vocabulary_question(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = "unused = 0 < tokens_int < 3;\nres = tokens_int == 7;\n"
    last = _compile(capsys, tmp_path, text).strip().splitlines()[-1]
    assert last.endswith("(does the vocabulary hold the tokens the program looks for?)")

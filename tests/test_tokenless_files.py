"""Programs that never mention `tokens` have no token one-hot in their residual (compiler.layout,
since 2026-12-05): every tool reads such a file, and one an earlier compiler wrote with the
one-hot is told apart (a review of that change, session 53)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from rasp.tools.cli import main
from tests.cli_helpers import run
from tests.test_weight_digests import edited_copy

ROOT = Path(__file__).resolve().parents[1]
LENGTH = str(ROOT / "programs" / "length.rasp")
REVERSED_INDICES = "rev = aggregate(select(indices, length - indices - 1, ==), indices);\n"


def _compile(program: str, out: Path) -> Path:
    code = main(["compile", "-q", program, "--vocab", "abc", "--max-len", "4", "-o", str(out)])
    assert code == 0
    return out


def test_a_file_an_earlier_compiler_wrote_with_the_one_hot_says_recompile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As compilers before 2026-12-05 wrote length.rasp: the one-hot laid out, nothing reading it.
    from compiler import driver

    with monkeypatch.context() as patch:
        patch.setattr(driver, "reads_tokens", lambda sop: True)
        old = _compile(LENGTH, tmp_path / "old.safetensors")
    new = _compile(LENGTH, tmp_path / "new.safetensors")
    labels = [json.loads(_header(p))["residual"] for p in (old, new)]
    assert "tokens:a" in labels[0] and not any(label.startswith("tokens") for label in labels[1])
    code, out, err = run(capsys, "verify", "--model", str(new), "--max-len", "2")
    assert code == 0, err
    # the old file runs and is as its compiler wrote it, but its reach is not what the program
    # compiles to now: not proved, and the line says what to do
    code, out, err = run(capsys, "run", "--model", str(old), "--input", "abc")
    assert (code, out, err) == (0, "[3]*3 (ints)\n", "")
    code, out, err = run(capsys, "verify", "--model", str(old), "--max-len", "2")
    assert code == 1
    line = next(line for line in (out + err).splitlines() if "certificate: NOT proved" in line)
    assert "the file's reach differs from the one the recorded program compiles to" in line
    assert line.endswith("written by an earlier compiler: compile the program again)"), line


def _header(path: Path) -> str:
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + size])["__metadata__"]["rasp_forge"]


def test_every_tool_reads_a_file_without_the_one_hot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "rev.rasp"
    program.write_text(REVERSED_INDICES)
    path = _compile(str(program), tmp_path / "rev.safetensors")
    code, out, _ = run(capsys, "show", str(path))
    assert code == 0 and "tokens" not in out.split("residual stream")[1]
    code, out, _ = run(capsys, "run", "--model", str(path), "--input", "abc")
    assert (code, out) == (0, "[2, 1, 0] (ints)\n")
    code, out, err = run(
        capsys, "export", "--to", "transformer-lens", "-o", str(tmp_path / "tl"), str(path)
    )
    assert code == 0, err
    assert "tokens" not in " ".join(
        json.loads((tmp_path / "tl" / "rasp_forge.json").read_text())["residual"]
    )
    # a wrong embedding is found where it is wrong: BOS's `one` (W_pos[0, 0], 0 -> 7)
    wrong = edited_copy(path, tmp_path / "wrong.safetensors", "pos_embed.W_pos", 7.0)
    code, out, err = run(capsys, "verify", "--model", str(wrong), "--max-len", "3")
    assert code == 1
    assert "first divergence: the `one` dim, after the embedding, at BOS" in out + err

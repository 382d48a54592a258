"""Programs that never mention `tokens` have no token one-hot in their residual (compiler.layout,
since 2026-12-05): every tool reads such a file, and one an earlier compiler wrote with the
one-hot verifies: its reach is compared by residual label (a review of that change, session 53)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from rasp.tools.cli import main
from tests.cli_helpers import run
from tests.test_weight_digests import edit_metadata, edited_copy

ROOT = Path(__file__).resolve().parents[1]
LENGTH = str(ROOT / "programs" / "length.rasp")
REVERSED_INDICES = "rev = aggregate(select(indices, length - indices - 1, ==), indices);\n"


def _compile(program: str, out: Path) -> Path:
    code = main(["compile", "-q", program, "--vocab", "abc", "--max-len", "4", "-o", str(out)])
    assert code == 0
    return out


def _old_and_new(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """length.rasp as compilers before 2026-12-05 wrote it (the one-hot laid out at dimensions
    3..5, nothing reading it, every later dimension 3 further on) and as now."""
    from compiler import driver

    with monkeypatch.context() as patch:
        patch.setattr(driver, "reads_tokens", lambda sop: True)
        old = _compile(LENGTH, tmp_path / "old.safetensors")
    new = _compile(LENGTH, tmp_path / "new.safetensors")
    labels = [json.loads(_header(p))["residual"] for p in (old, new)]
    assert "tokens:a" in labels[0] and not any(label.startswith("tokens") for label in labels[1])
    return old, new


def _reach_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("  reach:"))


def test_a_file_an_earlier_compiler_wrote_with_the_one_hot_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its reach names the same dimensions 3 further on: by position it differed from the rebuilt
    # one and verify said 'NOT proved ... compile the program again'; by label it is equal.
    old, new = _old_and_new(tmp_path, monkeypatch)
    code, out, err = run(capsys, "verify", "--model", str(new), "--max-len", "2")
    assert code == 0, err
    assert (
        _reach_line(out) == "  reach:       rebuilt from the recorded program: equal to the file's"
    )
    code, out, err = run(capsys, "run", "--model", str(old), "--input", "abc")
    assert (code, out, err) == (0, "[3]*3 (ints)\n", "")
    code, out, err = run(capsys, "verify", "--model", str(old), "--max-len", "2")
    assert code == 0, out + err
    assert "NOT proved" not in out + err
    assert _reach_line(out) == (
        "  reach:       rebuilt from the recorded program: equal to the file's with its residual "
        "dimensions matched by label (laid out otherwise; the file also lays out tokens:a, "
        "tokens:b, tokens:c, which its reach does not read)"
    )


def test_an_earlier_compilers_file_whose_reach_differs_by_label_is_not_proved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real difference is still refused, named by label: the old file's MLP says round(1 / x)
    is 1 at x = 0.25, and a reading read through a dimension renamed."""
    old, _ = _old_and_new(tmp_path, monkeypatch)

    def outputs(meta: dict[str, Any]) -> None:
        meta["reach"]["mlps"][0]["outputs"][0] = 1.0

    def renamed(meta: dict[str, Any]) -> None:
        meta["residual"][meta["residual"].index("first_share")] = "first_shared"

    for edit, named in [
        (outputs, "layer 0 mlp (`seq_length`), outputs[0] is 1.0 in the file, 4.0 rebuilt"),
        (renamed, 'reading `first_share`, terms[0][0][0] is "first_shared" in the file, '),
    ]:
        edited = edit_metadata(old, tmp_path / "edited.safetensors", edit)
        code, out, err = run(capsys, "verify", "--model", str(edited), "--max-len", "2")
        assert code == 1
        line = next(line for line in (out + err).splitlines() if "certificate: NOT proved" in line)
        assert (
            "the file's reach differs from the one the recorded program compiles to, its "
            f"residual dimensions matched by label: {named}"
        ) in line, line
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

"""Every tool that reads a compiled file says so where it was edited after compiling (its
`weights_sha256`/`fields_sha256`, docs/format.md), as `rasp run --model` does: a review of how
the digests meet each tool (session 53)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from rasp.tools.cli import main
from tests.cli_helpers import run
from tests.test_weight_digests import edit_metadata, edited_copy

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("digest_tools") / "reverse.safetensors"
    program = str(ROOT / "programs" / "reverse.rasp")
    code = main(["compile", "-q", program, "--vocab", "abc", "--max-len", "4", "-o", str(path)])
    assert code == 0
    return path


def test_export_of_an_edited_tensor_warns_once(
    compiled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It exported silently what its certificate was not proved for, where run and verify warn.
    code, _, err = run(
        capsys, "export", "--to", "transformer-lens", "-o", str(tmp_path / "a"), str(compiled)
    )
    assert code == 0 and "warning" not in err
    edited = edited_copy(compiled, tmp_path / "edited.safetensors", "blocks.1.attn.W_V", 0.5)
    out_dir = tmp_path / "b"
    code, out, err = run(
        capsys, "export", "--to", "transformer-lens", "-o", str(out_dir), str(edited)
    )
    assert code == 0, err
    assert err.count("warning:") == 1
    assert "tensor 'blocks.1.attn.W_V' differs from the digest" in err
    assert "EditedWeightsWarning" not in err
    assert (out_dir / "model.safetensors").exists()  # it still exports what the file holds
    code, out, err = run(
        capsys, "export", "-q", "--to", "transformer-lens", "-o", str(out_dir), str(edited)
    )
    assert (code, err) == (0, "")
    code, out, err = run(
        capsys, "export", "--json", "--to", "transformer-lens", "-o", str(out_dir), str(edited)
    )
    assert code == 0 and json.loads(out)["files"] and err.count("warning:") == 1


def test_export_of_an_edited_runtime_field_warns(
    compiled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = edit_metadata(
        compiled, tmp_path / "swapped.safetensors", lambda m: m["vocab"]["tokens"].reverse()
    )
    code, _, err = run(
        capsys, "export", "--to", "transformer-lens", "-o", str(tmp_path / "c"), str(path)
    )
    assert code == 0 and err.count("metadata field 'vocab' differs") == 1


@pytest.mark.parametrize("key", ["weights_sha256", "fields_sha256"])
def test_a_malformed_digest_is_named_by_its_entry(
    compiled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    # The refusal showed the object's first 60 characters: valid digests, never the bad one.
    entry = "unembed.b_U" if key == "weights_sha256" else "vocab"
    path = edit_metadata(
        compiled, tmp_path / "bad.safetensors", lambda m: m[key].update({entry: "X"})
    )
    code, out, err = run(capsys, "show", str(path))
    assert code == 1 and out == ""
    assert f"metadata field '{key}' must map" in err
    assert f'got "X" for "{entry}"' in err


def test_interop_warns_at_the_callers_line(compiled: Path, tmp_path: Path) -> None:
    # to_transformer_lens(path) and mask_hooks(path) load the file: the warning pointed at
    # interop.py's `model = load(model)`, not at the user's call
    from transformer import interop
    from transformer.digests import EditedWeightsWarning

    edited = edited_copy(compiled, tmp_path / "edited.safetensors", "unembed.b_U", 2.0)
    with pytest.warns(EditedWeightsWarning, match="'unembed.b_U' differs") as caught:
        interop.to_transformer_lens(edited)
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]
    with pytest.warns(EditedWeightsWarning) as caught:
        assert interop.mask_hooks(edited) == []
    assert [Path(w.filename).name for w in caught] == [Path(__file__).name]

"""A file whose tensors were edited after compiling must not present its certificate as theirs:
the compiler records each tensor's SHA-256 (`weights_sha256`, docs/format.md) and every reader
names the tensors that differ (`transformer.load`, `rasp run/show/verify --model`)."""

from __future__ import annotations

import contextlib
import io
import json
import struct
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

import torch

import transformer
from rasp.tools.cli import main
from tests.cli_helpers import run
from transformer.digests import EditedWeightsWarning, tensor_sha256

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("digests") / "reverse.safetensors"
    program = str(ROOT / "programs" / "reverse.rasp")
    code = main(["compile", "-q", program, "--vocab", "abc", "--max-len", "4", "-o", str(path)])
    assert code == 0
    return path


def edited_copy(source: Path, target: Path, tensor: str, value: float) -> Path:
    """`source` with the first value of `tensor` set to `value`, the metadata unchanged."""
    data = source.read_bytes()
    size = int.from_bytes(data[:8], "little")
    begin = 8 + size + json.loads(data[8 : 8 + size])[tensor]["data_offsets"][0]
    target.write_bytes(data[:begin] + struct.pack("<f", value) + data[begin + 4 :])
    return target


def test_the_compiler_records_each_tensors_digest(compiled: Path) -> None:
    meta = transformer.read_metadata(compiled)
    from safetensors.numpy import load_file

    tensors = load_file(str(compiled))
    assert meta["weights_sha256"] == {name: tensor_sha256(t) for name, t in tensors.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unedited file loads without a warning
        model = transformer.load(compiled)
    assert model.edited_tensors == ()
    assert model.to(dtype=torch.float64).edited_tensors == ()


def test_load_names_an_edited_tensor(compiled: Path, tmp_path: Path) -> None:
    edited = edited_copy(compiled, tmp_path / "edited.safetensors", "unembed.b_U", 1e30)
    with pytest.warns(EditedWeightsWarning, match=r"tensor 'unembed\.b_U' differs") as caught:
        model = transformer.load(edited)
    assert str(edited) in str(caught[0].message)
    assert model.edited_tensors == ("unembed.b_U",)
    assert model.run(["abc"]) == [["a", "a", "a"]]  # it runs what the file holds


def test_from_tensors_names_an_edited_tensor(compiled: Path) -> None:
    from safetensors.numpy import load_file

    tensors = load_file(str(compiled))
    meta = transformer.read_metadata(compiled)
    assert transformer.from_tensors(tensors, meta).edited_tensors == ()
    tensors["embed.W_E"] = tensors["embed.W_E"] + np.float32(0.5)
    with pytest.warns(EditedWeightsWarning, match="embed.W_E"):
        assert transformer.from_tensors(tensors, meta).edited_tensors == ("embed.W_E",)


def test_a_file_without_digests_loads_as_before(compiled: Path, tmp_path: Path) -> None:
    from safetensors.numpy import load_file

    from transformer.fileformat import save

    meta = transformer.read_metadata(compiled)
    del meta["weights_sha256"], meta["fields_sha256"]
    path = tmp_path / "old.safetensors"
    save(path, load_file(str(compiled)), meta)
    assert transformer.load(path).edited_tensors is None
    assert transformer.load(path).edited_fields is None
    code, out, _ = run_cli(path, "show", "--json")
    assert code == 0 and json.loads(out)["edited_tensors"] is None
    assert json.loads(out)["edited_fields"] is None


@pytest.mark.parametrize(
    "digests",
    [["x"], {"embed.W_E": "abc"}, {"embed.W_E": 3}, "deadbeef", {"embed.W_E": "A" * 64}],
)
def test_a_malformed_digest_field_is_refused(
    compiled: Path, tmp_path: Path, digests: object
) -> None:
    from safetensors.numpy import load_file

    from transformer.fileformat import save

    meta = transformer.read_metadata(compiled)
    meta["weights_sha256"] = digests
    path = tmp_path / "bad.safetensors"
    save(path, load_file(str(compiled)), meta)
    with pytest.raises(transformer.ModelFormatError, match="'weights_sha256' must map"):
        transformer.load(path)
    del meta["weights_sha256"]
    meta["fields_sha256"] = digests
    save(path, load_file(str(compiled)), meta)
    with pytest.raises(transformer.ModelFormatError, match="'fields_sha256' must map"):
        transformer.load(path)


def run_cli(model: Path, command: str, *more: str) -> tuple[int, str, str]:
    argv = [command, *(["--model"] if command in ("run", "verify") else []), str(model), *more]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_show_does_not_present_the_certificate_as_the_edited_weights(
    compiled: Path, tmp_path: Path
) -> None:
    code, out, _ = run_cli(compiled, "show")
    assert code == 0 and "certificate: every decision proved" in out
    edited = edited_copy(compiled, tmp_path / "edited.safetensors", "blocks.1.attn.W_V", 0.5)
    code, out, err = run_cli(edited, "show")
    assert code == 0, err
    assert "certificate: every decision proved" not in out
    assert "certificate: NOT for this file: tensor 'blocks.1.attn.W_V' differs" in out
    assert "  the file records: every decision proved" in out
    code, out, _ = run_cli(edited, "show", "--json")
    assert json.loads(out)["edited_tensors"] == ["blocks.1.attn.W_V"]
    assert json.loads(out)["edited_fields"] == []


def test_run_and_verify_warn_once(
    compiled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = edited_copy(compiled, tmp_path / "edited.safetensors", "unembed.b_U", 1e30)
    code, out, err = run(capsys, "run", "--model", str(edited), "--input", "abc")
    assert code == 0 and out == "[a]*3 (strings)\n"
    assert err.count("warning:") == 1 and "'unembed.b_U' differs" in err
    assert "EditedWeightsWarning" not in err  # the console's line, not Python's warning
    code, out, err = run(capsys, "run", "-q", "--model", str(edited), "--input", "abc")
    assert (code, err) == (0, "")
    code, out, err = run(capsys, "verify", "--model", str(edited), "--max-len", "2")
    assert code == 1 and err.count("'unembed.b_U' differs") == 1
    assert "certificate: NOT proved" in out + err


def edit_metadata(compiled: Path, target: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    from safetensors.numpy import load_file

    from transformer.fileformat import save

    meta = transformer.read_metadata(compiled)
    edit(meta)
    save(target, load_file(str(compiled)), meta)
    return target


@pytest.mark.parametrize(
    ("field", "edit"),
    [
        # each ran, and decoded, otherwise than the certificate was proved for: swapped output
        # columns, swapped tokens, bidirectional attention made causal
        ("output", lambda m: m["output"]["values"].reverse()),
        ("vocab", lambda m: m["vocab"]["tokens"].reverse()),
        ("config", lambda m: m["config"].update(attention_dir="causal")),
    ],
)
def test_a_runtime_field_edited_after_compiling_is_named(
    compiled: Path, tmp_path: Path, field: str, edit: Callable[[dict[str, Any]], None]
) -> None:
    path = edit_metadata(compiled, tmp_path / "edited.safetensors", edit)
    with pytest.warns(EditedWeightsWarning, match=f"metadata field '{field}' differs"):
        model = transformer.load(path)
    assert (model.edited_tensors, model.edited_fields) == ((), (field,))
    code, out, _ = run_cli(path, "show")
    assert code == 0 and f"certificate: NOT for this file: metadata field '{field}'" in out
    code, out, err = run_cli(path, "run", "--input", "abc")
    assert code == 0 and err.count(f"metadata field '{field}' differs") == 1
    # informative fields (the layer table, the certificate itself) are not digested
    unrelated = edit_metadata(
        compiled, tmp_path / "informative.safetensors", lambda m: m["layers"][0].update(mlp=[])
    )
    assert transformer.load(unrelated).edited_fields == ()


def test_the_digest_is_of_the_values_whatever_the_layout(compiled: Path) -> None:
    """Non-contiguous, float64-computed and grad-tracking tensors handed to `from_tensors` hold the
    compiled values: the reader's digest must match the compiler's (no warning)."""
    from safetensors.numpy import load_file

    meta = transformer.read_metadata(compiled)
    tensors = load_file(str(compiled))
    layouts: list[dict[str, Any]] = [
        {name: np.asfortranarray(t) for name, t in tensors.items()},
        {name: t.astype(np.float64).astype(np.float32) for name, t in tensors.items()},
        {
            name: torch.from_numpy(np.asfortranarray(t)).requires_grad_()
            for name, t in tensors.items()
        },
    ]
    for layout in layouts:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert transformer.from_tensors(layout, meta).edited_tensors == ()


def test_the_recorded_field_digests_are_the_readers(compiled: Path, tmp_path: Path) -> None:
    """The compiler's `fields_sha256` (its own list of fields: it does not import the runtime)
    is what the reader computes of every runtime field, non-ASCII and float tokens included."""
    from compiler import compile_sop
    from rasp.interpreter import load_source
    from rasp.sources import Source
    from transformer.digests import RUNTIME_FIELDS, field_sha256

    sop = load_source(Source("<test>", "res = tokens;")).get("res")
    path = tmp_path / "unicode.safetensors"
    compile_sop(sop, ["ä", "β", 0.1, 2], 3).save(path)
    for model in (compiled, path):
        meta = transformer.read_metadata(model)
        assert meta["fields_sha256"] == {name: field_sha256(meta[name]) for name in RUNTIME_FIELDS}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert transformer.load(model).edited_fields == ()

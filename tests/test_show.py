"""`rasp show` and the torch-free model-file reader: summary text (golden), JSON, and bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file

from rasp.tools.inspect import (
    ModelFileError,
    expected_shapes,
    format_summary,
    group_residual,
    read_model_file,
    summarize,
    summary_json,
)

FAKE_META: dict[str, Any] = {
    "format": "rasp-forge-model",
    "format_version": 1,
    "compiler_version": "0.1.0",
    "config": {"n_layers": 1, "d_model": 8, "n_heads": 1, "d_head": 2, "d_mlp": 3, "n_ctx": 4,
               "d_vocab": 4, "d_vocab_out": 2, "act_fn": "relu", "normalization_type": None,
               "attention_dir": "bidirectional"},
    "max_len": 3,
    "vocab": {"tokens": ["a", "b"], "bos_id": 2, "pad_id": 3},
    "output": {"name": "frac", "encoding": "numerical", "type": "floats"},
    "residual": ["one", "bos", "tokens:a", "tokens:b", "indices:0", "indices:1", "indices:2", "frac"],
    "layers": [{"attn": [{"head": 0, "name": "frac", "op": "numerical aggregate(select(...), tokens == \"a\")"}],
                "mlp": []}],
    "program": {"file": "frac.rasp", "source": "frac = 1;\n", "sha256": "ab" * 32},
}


def fake_tensors(meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """Deterministic weights of the right shapes; every third entry is zero."""
    tensors = {}
    for name, shape in expected_shapes(meta["config"]).items():
        values = np.arange(int(np.prod(shape)), dtype=np.float32) % 3
        tensors[name] = values.reshape(shape)
    return tensors


def write_fake_model(path: Path, meta: dict[str, Any] | None = None,
                     tensors: dict[str, np.ndarray] | None = None) -> Path:
    meta = FAKE_META if meta is None else meta
    save_file(fake_tensors(meta) if tensors is None else tensors, str(path),
              metadata={"rasp_forge": json.dumps(meta)})
    return path


GOLDEN_FAKE = """\
model:       MODEL (format 1, compiler 0.1.0)
program:     frac.rasp
sha256:      abababababababababababababababababababababababababababababababab
output:      frac (numerical, floats)
vocab:       a b  (bos id 2, pad id 3)
max length:  3
shape:       1 layers, 1 heads/layer, d_model 8, d_head 2, d_mlp 3, n_ctx 4, bidirectional
heads used:  1 (per layer)
parameters:  219 total, 140 non-zero (63.9%)

layer  block   name  operation
0      head 0  frac  numerical aggregate(select(...), tokens == "a")

certificate: none (compiled before certificates existed)

residual stream (8 dims):
     0  one
     1  bos
     2  tokens: a b
     4  indices: 0..2
     7  frac"""


def test_summary_text_is_golden(tmp_path: Path) -> None:
    path = write_fake_model(tmp_path / "m.safetensors")
    text = format_summary(summarize(read_model_file(path)))
    assert text.replace(str(path), "MODEL") == GOLDEN_FAKE


def test_summary_json(tmp_path: Path) -> None:
    path = write_fake_model(tmp_path / "m.safetensors")
    data = summary_json(summarize(read_model_file(path)))
    json.dumps(data)  # serialisable
    assert data["parameters"] == {"total": 219, "nonzero": 140}
    assert "source" not in data["program"] and data["program"]["sha256"] == "ab" * 32
    assert data["residual"][2] == {"name": "tokens", "dims": [2, 4], "encoding": "categorical",
                                   "values": ["a", "b"]}
    assert data["residual"][-1]["encoding"] == "numerical"


def test_group_residual_keeps_separate_runs() -> None:
    groups = group_residual(["x:1", "x:2", "y", "x:3"])
    assert [(g.name, g.start, g.stop, g.values) for g in groups] == [
        ("x", 0, 2, ("1", "2")), ("y", 2, 3, None), ("x", 3, 4, ("3",))]
    assert group_residual(["i:0", "i:1", "i:2", "i:5", "i:x"])[0].describe() == "i: 0..2 5 x"


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = write_fake_model(tmp_path / "good.safetensors")
    data = good.read_bytes()
    out: dict[str, tuple[Path, str]] = {}
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) - 40])
    out["truncated"] = (truncated, "not a readable safetensors file")
    text = tmp_path / "text.safetensors"
    text.write_text("this is not a model\n")
    out["text"] = (text, "not a readable safetensors file")
    newer = dict(FAKE_META, format_version=2)
    out["newer"] = (write_fake_model(tmp_path / "newer.safetensors", newer), "format version 2 is newer")
    tensors = fake_tensors(FAKE_META)
    del tensors["blocks.0.mlp.W_out"]
    out["missing"] = (write_fake_model(tmp_path / "missing.safetensors", tensors=tensors),
                      "missing tensor 'blocks.0.mlp.W_out'")
    tensors = fake_tensors(FAKE_META)
    tensors["unembed.W_U"] = np.zeros((8, 5), dtype=np.float32)
    out["shape"] = (write_fake_model(tmp_path / "shape.safetensors", tensors=tensors),
                    "tensor 'unembed.W_U' has shape [8, 5], the config says [8, 2]")
    no_meta = tmp_path / "nometa.safetensors"
    save_file(fake_tensors(FAKE_META), str(no_meta))
    out["no metadata"] = (no_meta, "no 'rasp_forge' metadata entry")
    bad_json = tmp_path / "badjson.safetensors"
    save_file(fake_tensors(FAKE_META), str(bad_json), metadata={"rasp_forge": "{not json"})
    out["bad json"] = (bad_json, "not valid JSON")
    out["absent"] = (tmp_path / "absent.safetensors", "no such model file")
    return out


def test_bad_files_give_one_clear_error(tmp_path: Path) -> None:
    for case, (path, expected) in _bad_files(tmp_path).items():
        with pytest.raises(ModelFileError) as info:
            read_model_file(path)
        rendered = info.value.render()
        assert expected in rendered, case
        assert rendered.startswith(f"error: {path}: ") and "\n" not in rendered, case


REVERSE = """\
opp = length - indices - 1;
flip = select(indices, opp, ==);
reverse = aggregate(flip, tokens);
"""


def test_show_of_a_compiled_program_is_golden(tmp_path: Path, golden: Any) -> None:
    """`rasp show` of the compiler's reverse at N=5 (rewrite with --update-golden if the compiler changes)."""
    pytest.importorskip("compiler")
    import compiler
    from rasp.errors import Source
    from rasp.interpreter import load_file

    program = tmp_path / "reverse.rasp"
    program.write_text(REVERSE)
    sop = load_file(program).get("reverse")
    model = compiler.compile_sop(sop, list("abc"), 5, name="reverse", source=Source("reverse.rasp", REVERSE))
    path = tmp_path / "reverse.safetensors"
    model.save(path)
    summary = summarize(read_model_file(path))
    assert summary.total_params == model.param_count()
    golden(Path(__file__).parent / "golden" / "show" / "reverse.txt",
           format_summary(summary).replace(str(path), "reverse.safetensors") + "\n")


def test_show_and_export_do_not_load_torch(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = write_fake_model(tmp_path / "m.safetensors")
    code = (
        "import sys\n"
        "from rasp.tools.cli import main\n"
        f"assert main(['show', {str(path)!r}]) == 0\n"
        f"assert main(['show', {str(path)!r}, '--json']) == 0\n"
        f"assert main(['export', {str(path)!r}, '--to', 'transformer-lens', '-o', {str(tmp_path / 'tl')!r}]) == 0\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], check=False)
    assert result.returncode == 0, result.stderr

"""`rasp show` names the sublayers that write each residual group, and `--json` those that read
it too, read off the weights (`rasp.tools.residual_traffic`): the layer map names the variable a
head computes (`seen_count`), not the helper dimension it writes (`seen_count.frac`), so nothing
said which head wrote a dimension, nor which heads read a variable as query, key or value."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rasp.tools.residual_traffic import Traffic, traffic_of

SEEN = """\
earlier = select(tokens, tokens, ==) and select(indices, indices, <);
seen_count = selector_width(earlier);
seen = seen_count > 0;
"""


def test_show_names_the_writers_and_readers_of_each_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("compiler")
    from rasp.tools.cli import main

    program = tmp_path / "seen.rasp"
    program.write_text(SEEN)
    model = tmp_path / "seen.safetensors"
    args = ["compile", str(program), "--vocab", "ab", "--max-len", "4", "-o", str(model), "-q"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["show", str(model)]) == 0
    text = capsys.readouterr().out
    assert "residual stream (8 dims, and the sublayers that write them):" in text
    assert "     5  seen_count.frac   layer 0 head 0\n" in text
    assert "     6  seen: False True  layer 0 mlp\n" in text
    assert main(["show", str(model), "--json"]) == 0
    groups = {g["name"]: g for g in json.loads(capsys.readouterr().out)["residual"]}
    assert groups["seen_count.frac"]["written_by"] == ["layer 0 head 0"]
    assert groups["seen_count.frac"]["read_by"] == ["layer 0 mlp"]
    assert groups["tokens"]["written_by"] == ["embedding"]
    assert groups["tokens"]["read_by"] == ["layer 0 head 0 (q, k)"]
    assert groups["seen"]["read_by"] == ["unembed"]


def test_a_layers_bias_is_its_own_writer_only_where_no_head_writes_the_group() -> None:
    d_model = 4
    tensors = {
        "embed.W_E": np.array([[1, 0, 0, 0]], np.float32),
        "blocks.0.attn.W_Q": np.zeros((2, d_model, 1), np.float32),
        "blocks.0.attn.W_K": np.zeros((2, d_model, 1), np.float32),
        "blocks.0.attn.W_V": np.array([[[1], [0], [0], [0]], [[0], [0], [0], [0]]], np.float32),
        "blocks.0.attn.W_O": np.array([[[0, 1, 0, 0]], [[0, 0, 0, 0]]], np.float32),
        "blocks.0.attn.b_O": np.array([0, 1, 1, 0], np.float32),
        "blocks.0.mlp.W_in": np.array([[0], [0], [1], [0]], np.float32),
        "blocks.0.mlp.W_out": np.array([[0, 0, 0, 1]], np.float32),
        "blocks.0.mlp.b_out": np.zeros(d_model, np.float32),
        "unembed.W_U": np.array([[0], [0], [0], [1]], np.float32),
    }
    found = traffic_of(tensors, d_model, [(0, 1), (1, 2), (2, 3), (3, 4)])
    assert found == [
        Traffic(("embedding",), ("layer 0 head 0 (v)",)),
        Traffic(("layer 0 head 0",), ()),
        Traffic(("layer 0 attn",), ("layer 0 mlp",)),
        Traffic(("layer 0 mlp",), ("unembed",)),
    ]

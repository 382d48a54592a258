"""Models without a positional embedding (config.positional false, format version 3): a program that
reads no position stores no [n_ctx, d_model] block of zeros, and every reader treats the missing
W_pos as zero: the runtime, the TransformerLens layout and the file checks."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
import torch

import transformer
from transformer import ModelFormatError
from transformer.fileformat import save, tensor_shapes, uniform_tensors

INPUTS = ["".join(t) for n in range(1, 6) for t in itertools.product("ab", repeat=n)]


def _without_positions() -> hm.Handmade:
    made = hm.mean_of_a()
    assert not made.tensors["pos_embed.W_pos"].any()  # the program never reads a position
    tensors = {k: v for k, v in made.tensors.items() if k != "pos_embed.W_pos"}
    meta = json.loads(json.dumps(made.metadata))
    meta["config"]["positional"] = False
    meta["format_version"] = 3
    return hm.Handmade(tensors, meta)


def _write(path: Path, tensors: dict[str, np.ndarray], meta: dict) -> Path:
    save(path, tensors, meta)
    return path


def test_a_model_without_positions_runs_as_with_zero_positions(tmp_path: Path) -> None:
    with_zeros = transformer.load(hm.mean_of_a().save(tmp_path / "zeros.safetensors"))
    without = transformer.load(_without_positions().save(tmp_path / "none.safetensors"))
    assert not without.config.positional and "positional" not in with_zeros.config.to_dict()
    assert "pos_embed.W_pos" not in without.model.state_dict()
    ids, _ = without.encode(INPUTS)
    assert torch.equal(without.forward(ids), with_zeros.forward(ids))
    assert without.run(INPUTS, batch_size=7) == with_zeros.run(INPUTS)
    _, cache = without.model.run_with_cache(ids)  # the hook is there, and zero
    assert cache["hook_pos_embed"].shape == cache["hook_embed"].shape
    assert not cache["hook_pos_embed"].any()


def test_the_transformer_lens_layout_gets_a_zero_w_pos() -> None:
    made = _without_positions()
    config = made.metadata["config"]
    assert "pos_embed.W_pos" not in tensor_shapes(config)
    padded = uniform_tensors(made.tensors, config)
    assert padded["pos_embed.W_pos"].shape == (config["n_ctx"], config["d_model"])
    assert not padded["pos_embed.W_pos"].any()


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (
            lambda t, m: m.update(format_version=2),
            "'config.positional' false needs 'format_version' 3",
        ),
        (
            lambda t, m: m["config"].update(positional=0),
            "'config.positional' must be true or false",
        ),
        (
            lambda t, m: t.update({"pos_embed.W_pos": np.zeros((7, 7), dtype=np.float32)}),
            "unexpected tensor(s) 'pos_embed.W_pos'",
        ),
        (
            lambda t, m: m["config"].pop("positional"),
            "missing tensor(s) 'pos_embed.W_pos'",
        ),
    ],
    ids=["old_version", "not_bool", "w_pos_stored", "w_pos_missing"],
)
def test_the_positional_field_is_checked(edit, fragment: str, tmp_path: Path) -> None:
    made = _without_positions()
    tensors, meta = dict(made.tensors), json.loads(json.dumps(made.metadata))
    edit(tensors, meta)
    path = _write(tmp_path / "bad.safetensors", tensors, meta)
    with pytest.raises(ModelFormatError) as info:
        transformer.load(path)
    assert fragment in str(info.value)


def test_a_model_without_positions_keeps_its_dtype(tmp_path: Path) -> None:
    """Its zero position embedding was made in torch's default dtype: a float64 copy recorded a
    float32 `hook_pos_embed`, and under `torch.set_default_dtype(torch.float64)` the float64 zeros
    made the residual float64 and the first head raised `RuntimeError: expected scalar type Float
    but found Double`."""
    model = transformer.load(_without_positions().save(tmp_path / "none.safetensors"))
    ids, _ = model.encode(INPUTS)
    expected = model.run(INPUTS)
    wide = model.to(dtype=torch.float64)
    _, cache = wide.run_with_cache(ids)
    assert {tensor.dtype for tensor in cache.values()} == {torch.float64}
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        _, cache = model.run_with_cache(ids)
        assert {tensor.dtype for tensor in cache.values()} == {torch.float32}
        assert model.run(INPUTS) == expected  # a float output: float32 logits, as before
        assert len(wide.run(INPUTS)) == len(INPUTS)
    finally:
        torch.set_default_dtype(default)

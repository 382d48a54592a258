"""`to_transformer_lens`: config kwargs and state dict for `HookedTransformerConfig(**cfg)`."""

from __future__ import annotations

from pathlib import Path

import handmade_models as hm
import torch

from transformer.interop import to_transformer_lens


def test_config_matches_transformer_lens_field_names(causal_mean_path: Path) -> None:
    cfg, _ = to_transformer_lens(causal_mean_path)
    file_config = hm.mean_of_a(causal=True).metadata["config"]
    for name, value in file_config.items():
        assert cfg[name] == value, name
    assert cfg["attention_dir"] == "causal"
    assert cfg["act_fn"] == "relu" and cfg["normalization_type"] is None
    assert cfg["default_prepend_bos"] is False
    assert cfg["positional_embedding_type"] == "standard"
    assert cfg["attn_only"] is False
    assert "original_architecture" not in cfg
    assert cfg["dtype"] is torch.float32


def test_state_dict_is_the_file_tensors(prev_path: Path) -> None:
    _, state = to_transformer_lens(prev_path)
    made = hm.previous_token()
    assert set(state) == set(made.tensors)
    for name, value in made.tensors.items():
        assert state[name].dtype == torch.float32
        assert torch.equal(state[name], torch.from_numpy(value)), name


def test_a_loaded_model_gives_the_same_as_its_file(prev_path: Path) -> None:
    import transformer

    from_file = to_transformer_lens(prev_path)
    from_model = to_transformer_lens(transformer.load(prev_path))
    assert from_file[0] == from_model[0]
    assert all(torch.equal(from_file[1][k], from_model[1][k]) for k in from_file[1])

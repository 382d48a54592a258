"""`to_transformer_lens`: config kwargs and state dict for `HookedTransformerConfig(**cfg)`."""

from __future__ import annotations

from pathlib import Path

import handmade_models as hm
import pytest
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


def test_padding_a_narrower_layer_keeps_its_scores_with_a_query_bias() -> None:
    """TransformerLens divides every layer's scores by the padded width's sqrt: the narrower layer's
    whole query, W_Q and b_Q alike, is scaled to match. With only W_Q scaled, a file with a
    query bias ran in TransformerLens with other scores than in the runtime, and nothing said so
    (the export re-certifies only where the factor rounds)."""
    import numpy as np

    from transformer.fileformat import tensor_shapes, uniform_tensors

    shape = [{"n_heads": 1, "d_head": 4, "d_mlp": 1}, {"n_heads": 1, "d_head": 1, "d_mlp": 1}]
    config = {"n_layers": 2, "d_model": 3, "n_heads": 1, "d_head": 4, "d_mlp": 1, "n_ctx": 3,
              "d_vocab": 4, "d_vocab_out": 2, "layers": shape}  # fmt: skip
    rng = np.random.default_rng(0)
    tensors = {
        name: rng.integers(-3, 4, size).astype(np.float32)
        for name, size in tensor_shapes(config).items()
    }
    padded = uniform_tensors(tensors, config)
    x = rng.integers(-3, 4, (5, 3)).astype(np.float64)  # [pos, d_model]

    def scores(t: dict[str, np.ndarray], layer: int, width: int) -> np.ndarray:
        attn = f"blocks.{layer}.attn."
        q = x @ t[attn + "W_Q"][0].astype(np.float64) + t[attn + "b_Q"][0]
        k = x @ t[attn + "W_K"][0].astype(np.float64) + t[attn + "b_K"][0]
        return q @ k.T / np.sqrt(width)

    for layer, own in enumerate(shape):
        assert np.array_equal(scores(tensors, layer, own["d_head"]), scores(padded, layer, 4))


def test_a_query_scaled_by_an_irrational_factor_is_named_in_a_warning() -> None:
    """Widths 16 and 7 export as 16: layer 1's query is scaled by sqrt(16 / 7), which rounds, and
    the file's certificate does not cover the rounded scores (induction over 'abc' at max-len 6
    has such a layer). `rasp export` re-certifies; the Python function said nothing."""
    import warnings

    from transformer.interop import RoundedQueryWarning, _warn_rounded_queries

    def config(widths: list[int]) -> dict[str, object]:
        layers = [{"n_heads": 1, "d_head": w, "d_mlp": 1} for w in widths]
        return {"d_head": max(widths), "layers": layers}

    with pytest.warns(RoundedQueryWarning, match=r"^layer 1 \(d_head 7\): .*sqrt\(16 / d_head\)"):
        _warn_rounded_queries(config([16, 7]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_rounded_queries(config([16, 4, 1, 0]))  # powers of 4 apart (0: no heads): exact
        _warn_rounded_queries({"d_head": 5})  # format version 1: one width, nothing scaled


def test_an_exact_padding_warns_nothing(prev_path: Path) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_transformer_lens(prev_path)

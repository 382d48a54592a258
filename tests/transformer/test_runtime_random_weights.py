"""The torch model against the independent numpy forward pass on random configs and weights
(several heads and layers, causal or not), activation by activation."""

from __future__ import annotations

from typing import Any

import handmade_models as hm
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer import ModelConfig
from transformer.fileformat import tensor_shapes
from transformer.model import Transformer


@st.composite
def random_models(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, np.ndarray], np.ndarray]:
    config = {
        "n_layers": draw(st.integers(0, 3)),
        "d_model": draw(st.integers(1, 6)),
        "n_heads": draw(st.integers(1, 3)),
        "d_head": draw(st.integers(1, 4)),
        "d_mlp": draw(st.integers(0, 5)),
        "n_ctx": draw(st.integers(1, 6)),
        "d_vocab": draw(st.integers(3, 6)),
        "d_vocab_out": draw(st.integers(1, 4)),
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": draw(st.sampled_from(["bidirectional", "causal"])),
    }
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    tensors = {
        name: rng.normal(size=shape).astype(np.float32)
        for name, shape in tensor_shapes(config).items()
    }
    n_pos = draw(st.integers(1, config["n_ctx"]))
    ids = rng.integers(0, config["d_vocab"], size=(draw(st.integers(1, 3)), n_pos))
    return config, tensors, ids


@settings(max_examples=80, derandomize=True, deadline=None)
@given(random_models())
def test_torch_model_matches_numpy_reference(
    case: tuple[dict[str, Any], dict[str, np.ndarray], np.ndarray],
) -> None:
    config, tensors, ids = case
    model = Transformer(ModelConfig(**config))
    model.load_state_dict({k: torch.from_numpy(v) for k, v in tensors.items()}, strict=True)
    with torch.inference_mode():
        logits, cache = model.run_with_cache(torch.from_numpy(ids))
    reference = hm.numpy_forward(tensors, config, ids)
    for name, expected in reference.items():
        got = (logits if name == "logits" else cache[name]).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4, err_msg=name)


def test_config_refuses_choices_the_model_does_not_implement() -> None:
    sizes = {"n_layers": 1, "d_model": 2, "n_heads": 1, "d_head": 1, "d_mlp": 1, "n_ctx": 2,
             "d_vocab": 3, "d_vocab_out": 1}  # fmt: skip
    for bad in ({"act_fn": "gelu"}, {"normalization_type": "LN"}, {"attention_dir": "sideways"}):
        with pytest.raises(ValueError, match=r"act_fn|attention_dir"):
            ModelConfig(**sizes, **bad)  # type: ignore[arg-type]
    assert ModelConfig(**sizes).to_dict()["attention_dir"] == "bidirectional"

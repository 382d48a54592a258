"""Hand a compiled model to TransformerLens without needing TransformerLens here.

    cfg, state = to_transformer_lens("reverse.safetensors")  # or a loaded CompiledTransformer
    from transformer_lens import HookedTransformer, HookedTransformerConfig
    tl_model = HookedTransformer(HookedTransformerConfig(**cfg))
    tl_model.load_state_dict(state, strict=False)  # TL also registers masks/IGNORE buffers

The tensor names and the block (no LayerNorm, relu MLP, scores / sqrt(d_head)) are already
TransformerLens's. TransformerLens gives every layer the same head count and widths, so a layer
that stores fewer (format version 2) is padded with zero heads, head columns and hidden units, and
its W_Q is scaled by sqrt(d_head / own d_head) so that TransformerLens's larger divisor gives the
same scores (exact when the ratio is a power of 4; otherwise W_Q rounds once, and `rasp export`,
which re-certifies the padded weights, is the checked way to TransformerLens). Feed
TransformerLens the ids from `CompiledTransformer.encode` (BOS first; it must not prepend its own).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch

from transformer.compiled import CompiledTransformer
from transformer.fileformat import uniform_tensors
from transformer.io import load


def to_transformer_lens(
    model: str | os.PathLike[str] | CompiledTransformer,
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """`HookedTransformerConfig` keyword arguments and a float32 state dict for a compiled model
    (a file path, or a model already loaded with `transformer.load`)."""
    if not isinstance(model, CompiledTransformer):
        model = load(model)
    cfg = model.config
    config = {
        "n_layers": cfg.n_layers,
        "d_model": cfg.d_model,
        "n_heads": cfg.n_heads,
        "d_head": cfg.d_head,
        "d_mlp": cfg.d_mlp,
        "n_ctx": cfg.n_ctx,
        "d_vocab": cfg.d_vocab,
        "d_vocab_out": cfg.d_vocab_out,
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": cfg.attention_dir,
        "attn_only": False,
        "positional_embedding_type": "standard",
        "default_prepend_bos": False,  # our ids already hold BOS at position 0
        "use_attn_scale": True,  # scores / sqrt(d_head), as the weights assume
        "dtype": torch.float32,
    }
    tensors = {
        name: t.detach().cpu().float().numpy() for name, t in model.model.state_dict().items()
    }
    padded = uniform_tensors(tensors, cfg.to_dict())
    state = {
        name: torch.from_numpy(np.array(value, dtype=np.float32)) for name, value in padded.items()
    }
    return config, state

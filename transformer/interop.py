"""Hand a compiled model to TransformerLens without needing TransformerLens here.

    cfg, state = to_transformer_lens("reverse.safetensors")  # or a loaded CompiledTransformer
    from transformer_lens import HookedTransformer, HookedTransformerConfig
    tl_model = HookedTransformer(HookedTransformerConfig(**cfg))
    tl_model.load_state_dict(state, strict=False)  # TL also registers masks/IGNORE buffers

The tensor names and the block (no LayerNorm, relu MLP, scores / sqrt(d_head)) are already
TransformerLens's. TransformerLens gives every layer the same head count and widths, so a layer
that stores fewer (format version 2) is padded with zero heads, head columns and hidden units, and
its query (W_Q and b_Q) is scaled by sqrt(d_head / own d_head) so that TransformerLens's larger
divisor gives the same scores (exact when the ratio is a power of 4; otherwise the query rounds
once, a `RoundedQueryWarning` names the layer, and `rasp export`, which re-certifies the padded
weights, is the checked way to TransformerLens). Feed
TransformerLens the ids from `CompiledTransformer.encode` (BOS first; it must not prepend its own).

TransformerLens has no per-head masks (format version 3): a model with a masked head is refused
unless the caller asks for its masks as hooks and registers `mask_hooks(model)` on the
HookedTransformer (each hook sets the scores of the keys a head does not see to -inf):

    cfg, state = to_transformer_lens(model, masks_by_hooks=True)
    ...
    for name, hook in mask_hooks(model):
        tl_model.add_hook(name, hook, is_permanent=True)

(`rasp compile --no-head-masks` builds a model without masked heads, for TransformerLens as is.)

A HookedTransformer's logits decode as the runtime's do (argmax for a categorical output; for a
numerical one the single logit snapped to the listed values or to a grid, with the output's
type rules), given the `rasp_forge.json` that `rasp export` writes:

    decode_logits("DIR/rasp_forge.json", logits, lengths)  # [[value, ...], ...]
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from transformer.compiled import CompiledTransformer
from transformer.digests import EditedWeightsWarning, edited_text
from transformer.errors import ModelFormatError, ModelInputError
from transformer.fileformat import (
    FORMAT_VERSION,
    is_power_of_4,
    uniform_d_head,
    uniform_d_mlp,
    uniform_tensors,
)
from transformer.io import load
from transformer.logit_values import decode_logits as _decode
from transformer.metadata_checks import Checker
from transformer.model import seen_keys
from transformer.output_metadata import parse_output
from transformer.ties import AUTO

Hook = Callable[[torch.Tensor, Any], torch.Tensor]


def to_transformer_lens(
    model: str | os.PathLike[str] | CompiledTransformer, *, masks_by_hooks: bool = False
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """`HookedTransformerConfig` keyword arguments and a float32 state dict for a compiled model
    (a file path, or a model already loaded with `transformer.load`).

    A model with a masked head is refused (TransformerLens would run it unmasked, wrongly) unless
    `masks_by_hooks`: then the caller registers `mask_hooks(model)` on the HookedTransformer."""
    if not isinstance(model, CompiledTransformer):
        model = _loaded(model)
    model.model.check_dtype()  # weights rounded to bfloat16 in place would be handed on
    cfg = model.config
    masked = masked_heads(model)
    if masked and not masks_by_hooks:
        raise ModelInputError(
            f"{masked[0]} sees only some keys (a per-head mask), which TransformerLens's "
            "HookedTransformer cannot express: compile with compile_sop(..., head_masks=False) "
            "(rasp compile --no-head-masks), or pass "
            "masks_by_hooks=True and register mask_hooks(model) on the HookedTransformer"
        )
    _warn_rounded_queries(cfg.to_dict())
    config = {
        "n_layers": cfg.n_layers,
        "d_model": cfg.d_model,
        "n_heads": cfg.n_heads,
        "d_head": uniform_d_head(cfg.to_dict()),
        "d_mlp": uniform_d_mlp(cfg.to_dict()),  # at least 1: TransformerLens runs no empty MLP
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


def _loaded(path: str | os.PathLike[str]) -> CompiledTransformer:
    """`load(path)`, its EditedWeightsWarning said at the line that called this module's function
    (`load`'s pointed here, at `model = load(model)`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EditedWeightsWarning)
        model = load(path)
    if model.edited_tensors or model.edited_fields:
        text = edited_text(str(path), model.edited_tensors, model.edited_fields)
        warnings.warn(EditedWeightsWarning(text), stacklevel=3)
    return model


class RoundedQueryWarning(UserWarning):
    """A layer's query was scaled by an irrational factor for TransformerLens's one head width,
    so its scores round once and the file's certificate no longer covers them."""


def _warn_rounded_queries(config: Mapping[str, Any]) -> None:
    """Say which layers' W_Q round when scaled to the uniform head width (`uniform_tensors`):
    the certificate proved the file's weights, not those; `rasp export` re-certifies them."""
    width = uniform_d_head(config)
    rounded = [
        f"layer {index} (d_head {layer['d_head']})"
        for index, layer in enumerate(config.get("layers") or [])
        if layer["d_head"] and not is_power_of_4(width / layer["d_head"])
    ]
    if rounded:
        warnings.warn(
            f"{', '.join(rounded)}: the query is scaled by sqrt({width} / d_head) for "
            f"TransformerLens's one head width {width}, which rounds once in float32; the "
            "file's certificate does not cover the rounded scores (`rasp export` re-certifies "
            "the padded weights and refuses them where they are not proved)",
            RoundedQueryWarning,
            stacklevel=3,
        )


def masked_heads(model: CompiledTransformer) -> list[str]:
    """`layer L head H (keys <= query)` for every head with a mask, in order."""
    cfg = model.config
    return [
        f"layer {layer} head {head} (keys {shape.mask(head)} query)"
        for layer, shape in enumerate(cfg.layers)
        for head in range(shape.n_heads)
        if shape.mask(head)
    ]


def mask_hooks(model: str | os.PathLike[str] | CompiledTransformer) -> list[tuple[str, Hook]]:
    """(hook name, hook) pairs that give a HookedTransformer built from `to_transformer_lens` the
    model's per-head masks: at `blocks.L.attn.hook_attn_scores` (scores [batch, head, query,
    key], the queries being the last positions, as with a KV cache) every key the head does not
    see gets -inf. The padded heads TransformerLens adds see
    every key. Empty for a model without masked heads."""
    if not isinstance(model, CompiledTransformer):
        model = _loaded(model)
    cfg = model.config
    hooks: list[tuple[str, Hook]] = []
    for layer, shape in enumerate(cfg.layers):
        if not any(shape.masks):
            continue
        masks = tuple(shape.mask(h) for h in range(shape.n_heads))
        masks += ("",) * (cfg.n_heads - shape.n_heads)  # TransformerLens's padding heads
        hooks.append((f"blocks.{layer}.attn.hook_attn_scores", _masking_hook(masks)))
    return hooks


def _masking_hook(masks: tuple[str, ...]) -> Hook:
    # The keys seen are built for the longest scores given so far, as the runtime builds its own
    # (model.Attention._seen), not for n_ctx: a file without W_pos states n_ctx in its header
    # alone, and [heads, n_ctx, n_ctx] for max_len 10**6 asked for a terabyte.
    built: dict[torch.device, torch.Tensor] = {}

    def hook(scores: torch.Tensor, hook: Any = None) -> torch.Tensor:
        # with a KV cache (TransformerLens generation) the n_q queries are the last positions
        n_q, n_k = scores.shape[-2:]
        seen = built.get(scores.device)
        if seen is None or seen.shape[-1] < n_k:
            grown = seen_keys(masks, n_k)
            assert grown is not None  # some head is masked
            seen = built[scores.device] = grown.to(scores.device)
        where = seen[:, n_k - n_q : n_k, :n_k]
        return scores.masked_fill(~where, float("-inf"))

    return hook


def decode_logits(
    guide: Mapping[str, Any] | str | os.PathLike[str],
    logits: torch.Tensor,
    lengths: Sequence[int],
    *,
    undecided: Any = AUTO,
) -> list[list[Any]]:
    """The program's values from an exported model's logits `[batch, pos, d_vocab_out]` (a
    HookedTransformer's, fed `[bos_id, token ids..., pad_id...]`): positions 1..n of row b, n =
    `lengths[b]`, decoded as `guide`'s `output` says, exactly as `CompiledTransformer.decode` does
    (docs/format.md), tied categorical positions included (`undecided`).
    `guide` is `rasp_forge.json` (its path, or the dict `json.load` gives)."""
    where = "rasp_forge.json"
    if not isinstance(guide, Mapping | str | os.PathLike):
        raise TypeError(
            "decode_logits takes the export's guide rasp_forge.json as a path or the dict "
            f"json.load gives, got {type(guide).__name__}"
        )
    if not isinstance(guide, Mapping):
        where = str(guide)
        try:
            guide = json.loads(Path(guide).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ModelFormatError(where, f"cannot read the export's guide ({err})") from None
    check = Checker(where)
    if not isinstance(guide, Mapping):
        raise check.fail("not a JSON object")
    if "output" not in guide and "d_vocab_out" in guide:  # TransformerLens's config.json
        raise check.fail("this is the export's config.json; decode_logits reads rasp_forge.json")
    output = check.get(dict(guide), "output", "", dict)
    max_len = check.get(dict(guide), "max_len", "", int)
    if max_len < 1:
        raise check.fail(f"metadata 'max_len' must be at least 1, got {max_len}")
    # one column per listed value of a categorical output, one number for a numerical one
    categorical = output.get("encoding") == "categorical" and isinstance(output.get("values"), list)
    columns = len(output["values"]) if categorical else 1
    spec = parse_output(check, output, columns, FORMAT_VERSION, max_len)
    return _decode(spec, columns, logits, lengths, max_len, undecided)

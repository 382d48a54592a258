"""The shape of a compiled model, with TransformerLens's field names (`HookedTransformerConfig`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

AttentionDir = Literal["bidirectional", "causal"]


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and fixed choices of a compiled transformer.

    Attributes:
        n_layers: number of blocks (each one attention layer, then one MLP).
        d_model: width of the residual stream (one dimension per residual label).
        n_heads: attention heads per layer (a layer that needs fewer has all-zero heads).
        d_head: width of each head's query, key and value vectors.
        d_mlp: hidden width of every MLP (the widest the program needs).
        n_ctx: number of positions, `max_len + 1` (position 0 holds BOS).
        d_vocab: input token ids: the vocabulary's tokens, then BOS, then PAD.
        d_vocab_out: logit columns (categorical output values, or 1 for a numerical output).
        act_fn: MLP activation; always "relu".
        normalization_type: LayerNorm kind; always None (compiled models have no LayerNorm).
        attention_dir: "bidirectional", or "causal" to mask keys after the query.
    """

    n_layers: int
    d_model: int
    n_heads: int
    d_head: int
    d_mlp: int
    n_ctx: int
    d_vocab: int
    d_vocab_out: int
    act_fn: Literal["relu"] = "relu"
    normalization_type: None = None
    attention_dir: AttentionDir = "bidirectional"

    def __post_init__(self) -> None:
        # The model implements exactly this block; refuse a config it would silently ignore.
        if self.act_fn != "relu" or self.normalization_type is not None:
            raise ValueError("compiled models use act_fn='relu' and normalization_type=None")
        if self.attention_dir not in ("bidirectional", "causal"):
            raise ValueError(
                f"attention_dir must be 'bidirectional' or 'causal', not {self.attention_dir!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The config as the JSON object of the file's metadata."""
        return asdict(self)

"""The shape of a compiled model, with TransformerLens's field names (`HookedTransformerConfig`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

AttentionDir = Literal["bidirectional", "causal"]

# A head's mask says which keys it sees by comparing the key's position with the query's, as RASP's
# `select(indices, indices, op)` does (key j is seen by query i iff `j op i`); "" sees every key.
# BOS (position 0) is seen by every query whatever the mask, so a query that sees no real key still
# attends to BOS. Masked heads are format version 3.
HEAD_MASKS = ("", "<", "<=", "==", ">=", ">", "!=")


@dataclass(frozen=True)
class LayerShape:
    """One block's own sizes: a layer stores only the heads and hidden units it uses.

    `masks`: one entry of HEAD_MASKS per head, or empty when no head of the layer is masked."""

    n_heads: int
    d_head: int
    d_mlp: int
    masks: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.masks and len(self.masks) != self.n_heads:
            raise ValueError(f"masks lists {len(self.masks)} entries for {self.n_heads} heads")
        for mask in self.masks:
            if mask not in HEAD_MASKS:
                raise ValueError(f"a head mask must be one of {HEAD_MASKS}, not {mask!r}")

    def mask(self, head: int) -> str:
        """Head `head`'s mask ("" when it sees every key)."""
        return self.masks[head] if self.masks else ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"n_heads": self.n_heads, "d_head": self.d_head, "d_mlp": self.d_mlp}
        if any(self.masks):
            data["masks"] = list(self.masks)
        return data


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and fixed choices of a compiled transformer.

    Attributes:
        n_layers: number of blocks (each one attention layer, then one MLP).
        d_model: width of the residual stream (one dimension per residual label).
        n_heads: the most attention heads of any layer.
        d_head: the widest head's query, key and value vectors.
        d_mlp: the widest MLP's hidden width.
        n_ctx: number of positions, `max_len + 1` (position 0 holds BOS).
        d_vocab: input token ids: the vocabulary's tokens, then BOS, then PAD.
        d_vocab_out: logit columns (categorical output values, or 1 for a numerical output).
        act_fn: MLP activation; always "relu".
        normalization_type: LayerNorm kind; always None (compiled models have no LayerNorm).
        attention_dir: "bidirectional", or "causal" to mask keys after the query.
        layers: each layer's own `LayerShape` (format version 2, with head masks 3); empty:
            every layer has the maxima above (format version 1, and TransformerLens's uniform
            layout).
        positional: whether the model has a positional embedding `W_pos`. False (format
            version 3) where the program never reads a position: every position embeds to zero
            and the file stores no [n_ctx, d_model] block of zeros.
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
    layers: tuple[LayerShape, ...] = ()
    positional: bool = True

    def __post_init__(self) -> None:
        # The model implements exactly this block; refuse a config it would silently ignore.
        if self.act_fn != "relu" or self.normalization_type is not None:
            raise ValueError("compiled models use act_fn='relu' and normalization_type=None")
        if self.attention_dir not in ("bidirectional", "causal"):
            raise ValueError(
                f"attention_dir must be 'bidirectional' or 'causal', not {self.attention_dir!r}"
            )

        if self.layers and len(self.layers) != self.n_layers:
            raise ValueError(f"layers lists {len(self.layers)} shapes for {self.n_layers} layers")
        for shape in self.layers:
            if (
                shape.n_heads > self.n_heads
                or shape.d_head > self.d_head
                or shape.d_mlp > self.d_mlp
            ):
                raise ValueError(f"a layer's shape {shape} exceeds the config's maxima")

    def layer(self, index: int) -> LayerShape:
        """Block `index`'s sizes."""
        if self.layers:
            return self.layers[index]
        return LayerShape(self.n_heads, self.d_head, self.d_mlp)

    @property
    def has_masks(self) -> bool:
        """Whether some head sees only part of the keys (a per-head mask, format version 3)."""
        return any(any(shape.masks) for shape in self.layers)

    @property
    def padded(self) -> ModelConfig:
        """The same model with every layer at the maxima and a positional embedding (zero if the
        model has none): TransformerLens's layout, which has no per-head masks, so a masked
        model has no padded form."""
        if self.has_masks:
            raise ValueError("a model with per-head masks has no uniform (TransformerLens) layout")
        return ModelConfig(**{**asdict(self), "layers": (), "positional": True})

    def to_dict(self) -> dict[str, Any]:
        """The config as the JSON object of the file's metadata."""
        data = asdict(self)
        if self.layers:
            data["layers"] = [shape.to_dict() for shape in self.layers]
        else:
            del data["layers"]
        if self.positional:
            del data["positional"]  # the default; files before format version 3 have no field
        return data

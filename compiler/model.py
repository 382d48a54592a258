"""The compiled model: TransformerLens-shaped float32 arrays, the format's metadata, and a numpy forward.

`forward_numpy` computes exactly what the torch runtime computes (embed + pos_embed, then per block
bidirectional or causal softmax attention with scores q·k/sqrt(d_head) in float32, then a ReLU MLP;
no LayerNorm), so tests and `rasp verify` can run and inspect a model without torch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from compiler.blocks import Atom, value_key
from rasp.errors import RaspRuntimeError

FORMAT = "rasp-forge-model"
FORMAT_VERSION = 1
COMPILER_VERSION = "0.1.0"


@dataclass(frozen=True)
class ModelConfig:
    n_layers: int
    d_model: int
    n_heads: int
    d_head: int
    d_mlp: int
    n_ctx: int
    d_vocab: int
    d_vocab_out: int
    act_fn: str = "relu"
    normalization_type: str | None = None
    attention_dir: str = "bidirectional"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ForwardResult:
    """`residuals[s]`: [batch, pos, d_model] after stage s (0: embedding; then attn, mlp per layer)."""

    residuals: tuple[np.ndarray, ...]
    logits: np.ndarray  # [batch, pos, d_vocab_out]
    outputs: tuple[tuple[Atom, ...], ...]  # decoded, program positions only
    lengths: tuple[int, ...]


@dataclass(frozen=True)
class CompiledModel:
    config: ModelConfig
    weights: dict[str, np.ndarray]  # TransformerLens names, float32
    metadata: dict[str, Any]

    # -- file -------------------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        from safetensors.numpy import save_file

        tensors = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in self.weights.items()}
        save_file(tensors, str(path), metadata={"rasp_forge": json.dumps(self.metadata)})

    # -- sizes ------------------------------------------------------------------------------------

    def param_count(self) -> int:
        return int(sum(w.size for w in self.weights.values()))

    def nonzero_params(self) -> int:
        return int(sum(np.count_nonzero(w) for w in self.weights.values()))

    # -- running ----------------------------------------------------------------------------------

    def token_ids(self, batch: Sequence[Sequence[Atom]]) -> tuple[np.ndarray, tuple[int, ...]]:
        """[batch, 1 + longest] ids: BOS, the tokens, then PAD on the right."""
        vocab = self.metadata["vocab"]
        lookup = {value_key(t): i for i, t in enumerate(vocab["tokens"])}
        lengths = tuple(len(seq) for seq in batch)
        if not batch or min(lengths) < 1 or max(lengths) > self.metadata["max_len"]:
            raise RaspRuntimeError(
                f"every input needs a length between 1 and {self.metadata['max_len']}",
                hint="this model was compiled for that maximum length",
            )
        ids = np.full((len(batch), 1 + max(lengths)), vocab["pad_id"], dtype=np.int64)
        ids[:, 0] = vocab["bos_id"]
        for b, seq in enumerate(batch):
            for p, token in enumerate(seq):
                if value_key(token) not in lookup:
                    raise RaspRuntimeError(
                        f"token {token!r} is not in the model's vocabulary {vocab['tokens']}"
                    )
                ids[b, p + 1] = lookup[value_key(token)]
        return ids, lengths

    def forward_numpy(self, batch: Sequence[Sequence[Atom]]) -> ForwardResult:
        ids, lengths = self.token_ids(batch)
        residuals = run_residuals(self.weights, self.config, ids)
        w_u, b_u = self.weights["unembed.W_U"], self.weights["unembed.b_U"]
        logits = residuals[-1] @ w_u + b_u  # [batch, pos, d_vocab_out]
        decoder = Decoder(self.metadata["output"])
        outputs = tuple(
            tuple(decoder(logits[b, p]) for p in range(1, n + 1)) for b, n in enumerate(lengths)
        )
        return ForwardResult(tuple(residuals), logits, outputs, lengths)

    def run(self, batch: Sequence[Sequence[Atom]]) -> list[list[Atom]]:
        return [list(out) for out in self.forward_numpy(batch).outputs]


def run_residuals(
    weights: dict[str, np.ndarray],
    config: ModelConfig,
    ids: np.ndarray,
    n_layers: int | None = None,
) -> list[np.ndarray]:
    """Residual stream [batch, pos, d_model] after the embedding and after every sub-layer."""
    f32 = np.float32
    n_pos = ids.shape[1]
    resid = (weights["embed.W_E"][ids] + weights["pos_embed.W_pos"][:n_pos][None]).astype(f32)
    out = [resid]
    causal = config.attention_dir == "causal"
    for layer in range(config.n_layers if n_layers is None else n_layers):
        resid = resid + attention(weights, layer, resid, config.d_head, causal)
        out.append(resid)
        resid = resid + mlp(weights, layer, resid)
        out.append(resid)
    return out


def attention(
    weights: dict[str, np.ndarray],
    layer: int,
    resid: np.ndarray,
    d_head: int,
    causal: bool,
) -> np.ndarray:
    w = {
        k: weights[f"blocks.{layer}.attn.{k}"]
        for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
    }
    q = (
        np.einsum("bpd,hde->bhpe", resid, w["W_Q"]) + w["b_Q"][None, :, None, :]
    )  # [batch, head, pos, d_head]
    k = np.einsum("bpd,hde->bhpe", resid, w["W_K"]) + w["b_K"][None, :, None, :]
    v = np.einsum("bpd,hde->bhpe", resid, w["W_V"]) + w["b_V"][None, :, None, :]
    scores = np.einsum("bhqe,bhke->bhqk", q, k) / np.float32(np.sqrt(d_head))  # [batch, head, q, k]
    if causal:
        n = resid.shape[1]
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, np.float32(-np.inf))
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    pattern = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    z = np.einsum("bhqk,bhke->bhqe", pattern, v)  # [batch, head, pos, d_head]
    return (np.einsum("bhqe,hed->bqd", z, w["W_O"]) + w["b_O"]).astype(np.float32)


def mlp(weights: dict[str, np.ndarray], layer: int, resid: np.ndarray) -> np.ndarray:
    pre = (
        resid @ weights[f"blocks.{layer}.mlp.W_in"] + weights[f"blocks.{layer}.mlp.b_in"]
    )  # [batch, pos, d_mlp]
    post = np.maximum(pre, np.float32(0))
    return (
        post @ weights[f"blocks.{layer}.mlp.W_out"] + weights[f"blocks.{layer}.mlp.b_out"]
    ).astype(np.float32)


class Decoder:
    """One position's value from its logits, as docs/format.md describes."""

    def __init__(self, output: dict[str, Any]) -> None:
        self.output = output
        values = output.get("values") or []
        numerical = output["encoding"] == "numerical"
        self.sorted_values = sorted(values, key=float) if numerical else values
        self.points = np.array([float(v) for v in self.sorted_values] if numerical else [])

    def __call__(self, logits: np.ndarray) -> Atom:
        output = self.output
        if output["encoding"] == "categorical":
            return output["values"][int(np.argmax(logits))]
        x = float(logits[0])
        if len(self.points):
            k = int(np.searchsorted(self.points, x))
            near = [j for j in (k - 1, k) if 0 <= j < len(self.points)]
            return self.sorted_values[min(near, key=lambda j: abs(self.points[j] - x))]
        kind = output["type"]
        if kind == "ints":
            return round(x)
        if kind == "bools":
            return x > 0.5
        return x


def decode(output: dict[str, Any], logits: np.ndarray) -> Atom:
    """One position's value from its logits (see `Decoder`)."""
    return Decoder(output)(logits)

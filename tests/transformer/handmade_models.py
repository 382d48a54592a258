"""Tiny compiled models written by hand as numpy weights + metadata, and a numpy reference forward.

Residual layouts are built from labels, so each weight reads as "dimension X feeds dimension Y".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from transformer.fileformat import FORMAT_NAME, FORMAT_VERSION, save, tensor_shapes

# Exp of a score gap this large underflows to exactly 0 in float32 (exp(-104) is below the
# smallest subnormal), which is how compiled weights mask keys.
BIG = 200.0


@dataclass
class Handmade:
    """Weights and metadata of one model, before saving."""

    tensors: dict[str, np.ndarray]
    metadata: dict[str, Any]

    def save(self, path: Path) -> Path:
        save(path, self.tensors, self.metadata)
        return path


def _zeros(config: dict[str, Any]) -> dict[str, np.ndarray]:
    return {
        name: np.zeros(shape, dtype=np.float32) for name, shape in tensor_shapes(config).items()
    }


def _metadata(
    config: dict[str, Any],
    tokens: list[Any],
    output: dict[str, Any],
    residual: list[str],
    name: str,
) -> dict[str, Any]:
    source = f"# hand-written test model {name}\n"
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "compiler_version": "test",
        "config": config,
        "max_len": config["n_ctx"] - 1,
        "vocab": {"tokens": tokens, "bos_id": len(tokens), "pad_id": len(tokens) + 1},
        "output": output,
        "residual": residual,
        "layers": [
            {"attn": [{"head": 0, "name": name, "op": "hand-written"}], "mlp": []}
            for _ in range(config["n_layers"])
        ],
        "program": {
            "file": f"{name}.rasp",
            "source": source,
            "sha256": hashlib.sha256(source.encode()).hexdigest(),
        },
    }


def _config(n_layers: int, d_model: int, d_head: int, d_mlp: int, n_ctx: int, d_vocab: int,
            d_vocab_out: int, attention_dir: str = "bidirectional") -> dict[str, Any]:  # fmt: skip
    return {"n_layers": n_layers, "d_model": d_model, "n_heads": 1, "d_head": d_head,
            "d_mlp": d_mlp, "n_ctx": n_ctx, "d_vocab": d_vocab, "d_vocab_out": d_vocab_out,
            "act_fn": "relu",
            "normalization_type": None, "attention_dir": attention_dir}  # fmt: skip


def previous_token(max_len: int = 6) -> Handmade:
    """Output[i] = tokens[i-1] over {a, b, c}; position 0 reads BOS and outputs "-".

    One head: the query at model position p puts all its weight on key position p - 1.
    """
    tokens = ["a", "b", "c"]
    n_ctx = max_len + 1
    residual = (
        [f"tokens:{t}" for t in tokens] + ["bos", "pad"] + [f"indices:{p}" for p in range(n_ctx)]
    )
    residual += [f"prev:{t}" for t in tokens] + ["prev:BOS"]
    dim = {label: d for d, label in enumerate(residual)}
    config = _config(1, len(residual), n_ctx, 1, n_ctx, len(tokens) + 2, 4)
    w = _zeros(config)
    for t_id, t in enumerate(tokens):
        w["embed.W_E"][t_id, dim[f"tokens:{t}"]] = 1
    w["embed.W_E"][3, dim["bos"]] = 1
    w["embed.W_E"][4, dim["pad"]] = 1
    for p in range(n_ctx):
        w["pos_embed.W_pos"][p, dim[f"indices:{p}"]] = 1
        w["blocks.0.attn.W_Q"][0, dim[f"indices:{p}"], p] = 1
        if (
            p + 1 < n_ctx
        ):  # key p matches query p + 1; scaled so the score is BIG after / sqrt(d_head)
            w["blocks.0.attn.W_K"][0, dim[f"indices:{p}"], p + 1] = BIG * np.sqrt(n_ctx)
    for j, source in enumerate([*(f"tokens:{t}" for t in tokens), "bos"]):
        w["blocks.0.attn.W_V"][0, dim[source], j] = 1
        w["blocks.0.attn.W_O"][0, j, dim[residual[dim["prev:a"] + j]]] = 1
    for k in range(4):
        w["unembed.W_U"][dim["prev:a"] + k, k] = 1
    output = {
        "name": "prev",
        "encoding": "categorical",
        "type": "strings",
        "values": [*tokens, "-"],
    }
    return Handmade(w, _metadata(config, tokens, output, residual, "prev"))


def expected_previous_token(text: str) -> list[str]:
    return ["-", *text[:-1]]


def two_back(max_len: int = 6) -> Handmade:
    """Two blocks, each moving one position to the right: out[i] = tokens[i-2], "-" for i < 2.

    Block l's head at query position p attends to key p - 1 and copies `hop{l}:*` (hop0 = the
    token, plus BOS) into `hop{l+1}:*`. BOS attends to itself, so it carries `hop*:BOS` forward.
    """
    tokens = ["a", "b", "c"]
    n_ctx = max_len + 1
    values = [*tokens, "BOS"]
    residual = ["bos", "pad", *(f"indices:{p}" for p in range(n_ctx))]
    residual += [f"hop{hop}:{v}" for hop in range(3) for v in values]
    dim = {label: d for d, label in enumerate(residual)}
    config = _config(2, len(residual), n_ctx, 1, n_ctx, len(tokens) + 2, 4)
    w = _zeros(config)
    for t_id, value in enumerate(values):  # token ids 0..2, then BOS = 3
        w["embed.W_E"][t_id, dim[f"hop0:{value}"]] = 1
    w["embed.W_E"][3, dim["bos"]] = 1
    w["embed.W_E"][4, dim["pad"]] = 1
    for p in range(n_ctx):
        w["pos_embed.W_pos"][p, dim[f"indices:{p}"]] = 1
    key_scale = BIG * np.sqrt(n_ctx)  # the score is BIG after dividing by sqrt(d_head)
    for layer in range(2):
        attn = f"blocks.{layer}.attn"
        for p in range(n_ctx):
            w[f"{attn}.W_Q"][0, dim[f"indices:{p}"], p] = 1
            if p + 1 < n_ctx:
                w[f"{attn}.W_K"][0, dim[f"indices:{p}"], p + 1] = key_scale
        w[f"{attn}.W_K"][0, dim["bos"], 0] = key_scale  # BOS (query slot 0) matches itself
        for j, value in enumerate(values):
            w[f"{attn}.W_V"][0, dim[f"hop{layer}:{value}"], j] = 1
            w[f"{attn}.W_O"][0, j, dim[f"hop{layer + 1}:{value}"]] = 1
    for k, value in enumerate(values):
        w["unembed.W_U"][dim[f"hop2:{value}"], k] = 1
    output = {
        "name": "two_back",
        "encoding": "categorical",
        "type": "strings",
        "values": [*tokens, "-"],
    }
    return Handmade(w, _metadata(config, tokens, output, residual, "two_back"))


def expected_two_back(text: str) -> list[str]:
    return ["-", "-", *text[:-2]][: len(text)]


def mean_of_a(max_len: int = 6, *, causal: bool = False) -> Handmade:
    """A numerical output through attention and an MLP.

    Bidirectional: out[i] = 2 * count("a") / (n + 1) (BOS and every real token weigh the same,
    PAD keys score -BIG). Causal: out[i] = 2 * count("a" in tokens[0..i]) / (i + 2).
    """
    tokens = ["a", "b"]
    n_ctx = max_len + 1
    residual = ["one", "bos", "pad", "tokens:a", "tokens:b", "frac_a", "out"]
    dim = {label: d for d, label in enumerate(residual)}
    config = _config(
        1, len(residual), 1, 2, n_ctx, len(tokens) + 2, 1, "causal" if causal else "bidirectional"
    )
    w = _zeros(config)
    w["embed.W_E"][0, [dim["one"], dim["tokens:a"]]] = 1
    w["embed.W_E"][1, [dim["one"], dim["tokens:b"]]] = 1
    w["embed.W_E"][2, [dim["one"], dim["bos"]]] = 1
    w["embed.W_E"][3, dim["pad"]] = 1
    w["blocks.0.attn.W_Q"][0, dim["one"], 0] = 1  # every real query asks "is the key PAD?"
    w["blocks.0.attn.W_K"][0, dim["pad"], 0] = -BIG
    w["blocks.0.attn.W_V"][0, dim["tokens:a"], 0] = 1
    w["blocks.0.attn.W_O"][0, 0, dim["frac_a"]] = 1
    # MLP: out = 2 * relu(frac_a) - relu(-frac_a) * 0 (two units, the second one idle on purpose)
    w["blocks.0.mlp.W_in"][dim["frac_a"], 0] = 1
    w["blocks.0.mlp.W_in"][dim["frac_a"], 1] = -1
    w["blocks.0.mlp.W_out"][0, dim["out"]] = 2
    w["unembed.W_U"][dim["out"], 0] = 1
    output = {"name": "double_frac", "encoding": "numerical", "type": "floats"}
    return Handmade(w, _metadata(config, tokens, output, residual, "double_frac"))


def expected_mean_of_a(text: str, *, causal: bool = False) -> list[float]:
    if causal:
        return [2 * text[: i + 1].count("a") / (i + 2) for i in range(len(text))]
    return [2 * text.count("a") / (len(text) + 1)] * len(text)


# key position `op` query position, for a per-head mask (transformer.config.HEAD_MASKS)
_RELATION = {
    "<": np.less,
    "<=": np.less_equal,
    "==": np.equal,
    ">=": np.greater_equal,
    ">": np.greater,
    "!=": np.not_equal,
}


def masked_mean_of_a(mask: str, max_len: int = 5) -> Handmade:
    """One head with per-head mask `mask` (format version 3) that weighs every key it sees
    equally (BOS included, PAD keys at -BIG) and averages `tokens == a`: out[i] is the number
    of a's among the positions j with `j mask i` over that count + 1 (BOS)."""
    made = mean_of_a(max_len)
    config = made.metadata["config"]
    config["layers"] = [
        {"n_heads": 1, "d_head": config["d_head"], "d_mlp": config["d_mlp"], "masks": [mask]}
    ]
    made.metadata["format_version"] = 3
    # no MLP doubling: the residual's frac_a is the output
    made.tensors["blocks.0.mlp.W_out"][:] = 0
    dim = {label: d for d, label in enumerate(made.metadata["residual"])}
    made.tensors["unembed.W_U"][:] = 0
    made.tensors["unembed.W_U"][dim["frac_a"], 0] = 1
    made.metadata["output"]["name"] = "masked_frac"
    return made


def expected_masked_mean_of_a(text: str, mask: str) -> list[float]:
    n = len(text)
    out = []
    for i in range(n):
        seen = [j for j in range(n) if mask == "" or _RELATION[mask](j, i)]
        out.append(sum(text[j] == "a" for j in seen) / (len(seen) + 1))
    return out


def identity(tokens: list[Any], max_len: int = 4, *, out_type: str = "ints") -> Handmade:
    """No blocks at all: the embedding writes each token's one-hot straight into the output."""
    n_ctx = max_len + 1
    residual = [f"tokens:{t}" for t in tokens] + ["bos", "pad"]
    config = _config(0, len(residual), 1, 0, n_ctx, len(tokens) + 2, len(tokens))
    w = _zeros(config)
    w["embed.W_E"][:, :] = np.eye(len(residual), dtype=np.float32)
    w["unembed.W_U"][: len(tokens), :] = np.eye(len(tokens), dtype=np.float32)
    output = {"name": "same", "encoding": "categorical", "type": out_type, "values": list(tokens)}
    return Handmade(w, _metadata(config, tokens, output, residual, "same"))


def numpy_forward(
    tensors: dict[str, np.ndarray], config: dict[str, Any], ids: np.ndarray
) -> dict[str, np.ndarray]:
    """An independent float64 forward pass; returns residuals and patterns under the hook names."""
    w = {name: value.astype(np.float64) for name, value in tensors.items()}
    n_pos = ids.shape[1]
    resid = w["embed.W_E"][ids]  # [batch, pos, d_model]
    if "pos_embed.W_pos" in w:  # absent: a model without positions (config.positional false)
        resid = resid + w["pos_embed.W_pos"][:n_pos]
    out: dict[str, np.ndarray] = {}
    for layer in range(config["n_layers"]):
        p = f"blocks.{layer}."
        out[p + "hook_resid_pre"] = resid
        pattern_heads, attn = [], np.broadcast_to(w[p + "attn.b_O"], resid.shape).copy()
        for h in range(config["n_heads"]):
            q = resid @ w[p + "attn.W_Q"][h] + w[p + "attn.b_Q"][h]  # [batch, pos, d_head]
            k = resid @ w[p + "attn.W_K"][h] + w[p + "attn.b_K"][h]
            v = resid @ w[p + "attn.W_V"][h] + w[p + "attn.b_V"][h]
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(config["d_head"])  # [batch, q, k]
            if config["attention_dir"] == "causal":
                scores = np.where(np.triu(np.ones((n_pos, n_pos)), 1) > 0, -np.inf, scores)
            masks = (config.get("layers") or [{}] * config["n_layers"])[layer].get("masks")
            if masks and masks[h]:
                key, query = np.arange(n_pos)[None, :], np.arange(n_pos)[:, None]
                seen = _RELATION[masks[h]](key, query) | (key == 0)  # BOS is always seen
                scores = np.where(seen, scores, -np.inf)
            scores = scores - scores.max(axis=-1, keepdims=True)
            pattern = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
            pattern_heads.append(pattern)
            attn += pattern @ v @ w[p + "attn.W_O"][h]
        out[p + "attn.hook_pattern"] = np.stack(pattern_heads, axis=1)  # [batch, head, q, k]
        resid = resid + attn
        out[p + "hook_resid_mid"] = resid
        hidden = np.maximum(resid @ w[p + "mlp.W_in"] + w[p + "mlp.b_in"], 0)
        resid = resid + hidden @ w[p + "mlp.W_out"] + w[p + "mlp.b_out"]
        out[p + "hook_resid_post"] = resid
    out["logits"] = resid @ w["unembed.W_U"] + w["unembed.b_U"]
    return out

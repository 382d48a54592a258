"""The compiled model: TransformerLens-shaped float32 arrays and the format's metadata.

A compiled model is run by the torch runtime (`transformer`); the compiler keeps only an exact
(float64) evaluation, `run_residuals`, which assembly needs for the input-independent BOS and PAD
positions. The metadata's `certificate` (compiler.certify) bounds how far any float32 evaluation
order may drift from that exact model, and shows no decision can flip.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rasp.errors import CompileError

FORMAT = "rasp-forge-model"
FORMAT_VERSION = 10  # per-(position, length) output denominators (output.pair_denominators)
NONE_AT_FORMAT_VERSION = 9  # a number the output decodes as None (output.none_at)
ONE_HOT_TYPES_FORMAT_VERSION = 8  # a one-hot output's whole numbers typed per length and position
WHOLE_TYPES_FORMAT_VERSION = 7  # a whole number's type per length and position (output.whole_types)
INT_POSITIONS_FORMAT_VERSION = 6  # program positions decoded as ints on a length grid
LENGTH_GRID_FORMAT_VERSION = 5  # per-length or from-the-end output denominators
POSITION_GRID_FORMAT_VERSION = 4  # per-position output denominators (output.denominators)
MASK_FORMAT_VERSION = 3  # per-head masks (config.layers[].masks), no W_pos (config.positional)
MASKLESS_FORMAT_VERSION = 2  # per-layer shapes (config.layers): a model without masked heads
COMPILER_VERSION = "0.1.0"


def model_config(
    layers: list[dict[str, Any]],
    *,
    d_model: int,
    n_ctx: int,
    d_vocab: int,
    d_vocab_out: int,
    causal: bool,
) -> dict[str, Any]:
    """The file's `config` object (docs/format.md; `transformer.ModelConfig` is its one typed
    reader): each layer's own shape, and the maxima TransformerLens's uniform layout pads to."""
    return {
        "n_layers": len(layers),
        "d_model": d_model,
        "n_heads": max([layer["n_heads"] for layer in layers] + [1]),
        "d_head": max([layer["d_head"] for layer in layers] + [1]),
        "d_mlp": max([layer["d_mlp"] for layer in layers] + [1]),
        "n_ctx": n_ctx,
        "d_vocab": d_vocab,
        "d_vocab_out": d_vocab_out,
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": "causal" if causal else "bidirectional",
        "layers": layers,
    }


class OverParamLimit(CompileError):
    """The refusal of a model over `max_params` parameters, from its shape: the user's limit. The
    driver's alternative builds (compiler.alternatives) that may be far smaller are tried under
    it: copying many numbers of one key as one number (which the size prediction considers too),
    maps of maps after the last head fused over their sources, gated over the index, counted sums
    kept as means (compiler.program_forms), and below N = 16 the eagerly matched build; under
    only the cap a proved fraction form sets, the copies alone (and, for a build stopped while
    planned, compiler.plan_limit, the builds a refusal while planning gets)."""


def config_params(config: dict[str, Any]) -> int:
    """The parameters a model of this `config` stores: known before any weight is allocated."""
    d_model, out = config["d_model"], config["d_vocab_out"]
    positions = config["n_ctx"] if config.get("positional", True) else 0  # W_pos
    total = (config["d_vocab"] + positions) * d_model + (d_model + 1) * out
    for layer in config["layers"]:
        heads, d_head, hidden = layer["n_heads"], layer["d_head"], layer["d_mlp"]
        total += heads * (4 * d_model * d_head + 3 * d_head) + d_model
        total += 2 * d_model * hidden + hidden + d_model
    return total


# What one layer is worth in parameters, between two proved builds of a program: a build with a
# layer more is kept only where it has under 1/LAYER_WORTH of the other's parameters. Layers come
# first (they are the program's depth), but not at any price: the token after the first "c" at
# N = 256 takes 4 layers and 56,714 parameters instead of 3 layers and 1.8M.
LAYER_WORTH = 4


def build_cost(layers: int, params: int) -> tuple[int, int, int]:
    """What is minimised between builds of one program: parameters times LAYER_WORTH per layer
    (exact integers), then layers, then parameters."""
    return params * LAYER_WORTH**layers, layers, params


@dataclass(frozen=True)
class Sketch:
    """A model's shape once its build is planned, before any weight is allocated: what the
    driver compares between builds (compiler.alternatives) and the size prediction extrapolates
    (compiler.budget)."""

    config: dict[str, Any]  # the model's config (model_config), `positional` included
    residual: tuple[str, ...]  # the residual's labels, as the metadata's `residual`
    head_widths: tuple[int, ...]  # per layer: the columns its widest head uses (0: no head)
    # what each unnamed s-op's generated label (`_map_1`) computes, for a message that names a
    # part (compiler.budget): no part of the shape
    texts: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def layers(self) -> int:
        return int(self.config["n_layers"])

    @property
    def params(self) -> int:
        return config_params(self.config)

    @property
    def cost(self) -> tuple[int, int, int]:
        return build_cost(self.layers, self.params)


# safetensors refuses to write or read a header (its JSON) over 100 MB
MAX_HEADER_BYTES = 100_000_000


@dataclass(frozen=True)
class CompiledModel:
    config: dict[str, Any]  # the file's `config` object (model_config)
    weights: dict[str, np.ndarray]  # TransformerLens names, float32, each layer its own shape
    metadata: dict[str, Any]
    # the maps built as gated units (compiler.gates), for the driver's fallback; not in the file
    gated: frozenset[str] = field(default=frozenset(), compare=False)
    # the maps built as tables that pass their inputs' error on (compiler.mlp.table_mlp, not
    # clamped), for the driver's fallback; not in the file
    noisy_tables: frozenset[str] = field(default=frozenset(), compare=False)
    # the weights were let go (`without_weights`): a refused build kept for its refusal alone
    released: bool = field(default=False, compare=False)

    def without_weights(self) -> CompiledModel:
        """This model with each tensor a read-only zero-strided stand-in of its shape: sizes,
        costs, config and metadata as before, in no memory. For a build not proved whose refusal
        is all that is left to report while other builds are tried (compiler.default_builds:
        147M parameters held through three more builds); never saved or digested."""
        zero = np.zeros((), dtype=np.float32)
        stand_ins = {k: np.broadcast_to(zero, np.shape(v)) for k, v in self.weights.items()}
        return replace(self, weights=stand_ins, released=True)

    def _check_weights(self) -> None:
        if self.released:
            raise ValueError("this model's weights were released: it was refused, not compiled")

    def __repr__(self) -> str:
        """One line (the dataclass's would print every weight and the whole metadata: tens of
        thousands of characters in a notebook cell); the parts are attributes."""
        meta = self.metadata
        tokens = list(meta.get("vocab", {}).get("tokens", []))
        vocab = repr(tokens[:10])
        if len(tokens) > 10:
            vocab = f"{vocab[:-1]}, ... {len(tokens) - 10:,} more]"
        certificate = meta.get("certificate")
        heads = sum(layer["n_heads"] for layer in self.config.get("layers", []))
        return (
            f"CompiledModel(output={meta.get('output', {}).get('name')!r}, "
            f"n_layers={self.config['n_layers']}, heads={heads}, "
            f"d_model={self.config['d_model']}, parameters={self.param_count()}, "
            f"max_len={meta.get('max_len')}, vocab={vocab}, "
            f"certified={None if certificate is None else certificate.get('ok')})"
        )

    # -- file -------------------------------------------------------------------------------------

    def header_bytes(self) -> int:
        """The size of the file's safetensors header: the metadata, one JSON string (its quotes
        escaped) in the header's JSON, and an entry per tensor (an upper bound)."""
        text = json.dumps(self.metadata)
        return len(json.dumps(text)) + 160 * len(self.weights) + 64

    def save(self, path: str | Path) -> None:
        """Write the model as a safetensors file at `path` (the runtime's `transformer.load`
        reads it)."""
        from safetensors.numpy import save_file

        # safetensors writes a temporary file beside `path` first: its error for a missing
        # directory names that file (".tmpXYZ"), not the path asked for
        # a symlink is written through (safetensors renames its new file over the link)
        target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
        if not target.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(target.parent))
        self._check_weights()
        tensors = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in self.weights.items()}
        # strict JSON (no Infinity or NaN, which the runtime's reader refuses): raises here,
        # before a file that no tool can read is written (the value analysis refuses such values)
        text = json.dumps(self.metadata, allow_nan=False)
        save_file(tensors, str(target), metadata={"rasp_forge": text})

    def tensor_digests(self) -> dict[str, str]:
        """Name -> SHA-256 of the tensor's float32 bytes as `save` writes them (little-endian, C
        order): the file's `weights_sha256`, which readers compare with the tensors they read, so
        that weights edited after compiling do not present this model's certificate as theirs
        (`transformer.digests` computes the same)."""
        self._check_weights()
        return {
            # through the buffer, not a `tobytes` copy (3x slower at 100M parameters)
            name: hashlib.sha256(np.ascontiguousarray(v, dtype="<f4")).hexdigest()
            for name, v in sorted(self.weights.items())
        }

    def field_digests(self) -> dict[str, str]:
        """Field -> SHA-256 of the JSON (sorted keys) of each metadata field the runtime computes
        or decodes with: the file's `fields_sha256` (`transformer.digests.RUNTIME_FIELDS`)."""
        fields = ("config", "max_len", "vocab", "output")
        return {
            # through a JSON round trip: a tuple compares as the list a reader gets back
            name: hashlib.sha256(
                json.dumps(json.loads(json.dumps(self.metadata[name])), sort_keys=True).encode()
            ).hexdigest()
            for name in fields
            if name in self.metadata
        }

    # -- sizes ------------------------------------------------------------------------------------

    def param_count(self) -> int:
        return int(sum(w.size for w in self.weights.values()))

    @property
    def cost(self) -> tuple[int, int, int]:
        """What the driver minimises between proved builds (`build_cost`)."""
        return build_cost(len(self.metadata["layers"]), self.param_count())

    def nonzero_params(self) -> int:
        return int(sum(np.count_nonzero(w) for w in self.weights.values()))


def run_residuals(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    ids: np.ndarray,
    n_layers: int | None = None,
) -> list[np.ndarray]:
    """The exact residual stream [batch, pos, d_model] (float64 arithmetic on the given weights)
    after the embedding and after every sub-layer.

    Kept for one reason: assembly needs the exact BOS and PAD residuals (they never depend on the
    input) to cancel their contributions. Running a model is the torch runtime's job
    (`transformer`); how far float32 may drift from these exact values is `compiler.certify`'s.
    """
    w = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    resid = embed_residual(w, ids)
    out = [resid]
    causal = config["attention_dir"] == "causal"
    shapes = config.get("layers") or []
    for layer in range(config["n_layers"] if n_layers is None else n_layers):
        masks = shapes[layer].get("masks") if shapes else None
        resid = resid + attention_residual(w, layer, resid, causal, masks)
        out.append(resid)
        resid = resid + mlp_residual(w, layer, resid)
        out.append(resid)
    return out


# One step of `run_residuals` each (float64 weights), for callers that add layers one at a time.


def embed_residual(weights: dict[str, np.ndarray], ids: np.ndarray) -> np.ndarray:
    embed = weights["embed.W_E"][ids]  # [batch, pos, d_model]
    if "pos_embed.W_pos" not in weights:  # a model without positions (config.positional false)
        return embed
    return embed + weights["pos_embed.W_pos"][: ids.shape[1]][None]


def attention_residual(
    weights: dict[str, np.ndarray],
    layer: int,
    resid: np.ndarray,
    causal: bool,
    masks: Sequence[str] | None = None,
) -> np.ndarray:
    return _attention(weights, layer, resid, causal, masks or ())


def mlp_residual(weights: dict[str, np.ndarray], layer: int, resid: np.ndarray) -> np.ndarray:
    return _mlp(weights, layer, resid)


# Which keys a head's mask lets a query see: the key's position compared with the query's
# (transformer.config.HEAD_MASKS; "" every key). BOS, key 0, is always seen.
_SEEN = {
    "": lambda k, q: np.ones(np.broadcast(k, q).shape, dtype=bool),
    "<": np.less,
    "<=": np.less_equal,
    "==": np.equal,
    ">=": np.greater_equal,
    ">": np.greater,
    "!=": np.not_equal,
}


def seen_keys(masks: Sequence[str], n_heads: int, n: int, causal: bool) -> np.ndarray:
    """[heads, query, key] bool: which keys each head's query sees (positions 0..n-1)."""
    key, query = np.arange(n)[None, :], np.arange(n)[:, None]
    per_head = list(masks) or [""] * max(n_heads, 1)
    seen = np.stack([_SEEN[m](key, query) for m in per_head])
    if causal:
        seen = seen & (key <= query)
    return seen | (key == 0)


def _attention(
    weights: dict[str, np.ndarray],
    layer: int,
    resid: np.ndarray,
    causal: bool,
    masks: Sequence[str],
) -> np.ndarray:
    w = {
        k: weights[f"blocks.{layer}.attn.{k}"]
        for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
    }
    q = np.einsum("bpd,hde->bhpe", resid, w["W_Q"]) + w["b_Q"][None, :, None, :]
    k = np.einsum("bpd,hde->bhpe", resid, w["W_K"]) + w["b_K"][None, :, None, :]
    v = np.einsum("bpd,hde->bhpe", resid, w["W_V"]) + w["b_V"][None, :, None, :]
    d_head = w["W_Q"].shape[2]  # this layer's own
    scores = np.einsum("bhqe,bhke->bhqk", q, k) / np.sqrt(max(d_head, 1))  # [batch, head, q, k]
    if causal or any(masks):
        seen = seen_keys(masks, w["W_Q"].shape[0], resid.shape[1], causal)  # [head, q, k]
        scores = np.where(seen[None], scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(scores)
    pattern = e / e.sum(axis=-1, keepdims=True)
    z = np.einsum("bhqk,bhke->bhqe", pattern, v)  # [batch, head, pos, d_head]
    return np.einsum("bhqe,hed->bqd", z, w["W_O"]) + w["b_O"]


def _mlp(weights: dict[str, np.ndarray], layer: int, resid: np.ndarray) -> np.ndarray:
    pre = resid @ weights[f"blocks.{layer}.mlp.W_in"] + weights[f"blocks.{layer}.mlp.b_in"]
    return (
        np.maximum(pre, 0.0) @ weights[f"blocks.{layer}.mlp.W_out"]
        + weights[f"blocks.{layer}.mlp.b_out"]
    )

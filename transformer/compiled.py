"""`CompiledTransformer`: a loaded model with its vocabulary and output decoder.

model = transformer.load("reverse.safetensors")
model.run(["abc", "ba"])            # [["c", "b", "a"], ["a", "b"]]
ids, lengths = model.encode(["abc"])
logits, cache = model.run_with_cache(ids)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from transformer.config import ModelConfig
from transformer.decoding import OutputEncoding
from transformer.errors import ModelInputError, ModelOutputError
from transformer.metadata import ModelMetadata
from transformer.model import Cache, Transformer
from transformer.vocab import Atom, Vocab


class CompiledTransformer:
    """A compiled RASP program as a torch model: encode -> forward -> decode."""

    def __init__(self, model: Transformer, meta: ModelMetadata) -> None:
        self.model = model
        self.meta = meta

    @property
    def config(self) -> ModelConfig:
        return self.meta.config

    @property
    def vocab(self) -> Vocab:
        return self.meta.vocab

    @property
    def max_len(self) -> int:
        return self.meta.max_len

    @property
    def device(self) -> torch.device:
        return self.model.embed.W_E.device

    @property
    def dtype(self) -> torch.dtype:
        return self.model.embed.W_E.dtype

    @property
    def residual_labels(self) -> tuple[str, ...]:
        return self.meta.residual

    def to(
        self, device: str | torch.device | None = None, dtype: torch.dtype | None = None
    ) -> CompiledTransformer:
        """A copy on `device` and/or in floating `dtype` (ids and decoding unchanged); `self` stays
        as it is. `to(dtype=torch.float64)` runs the same weights in float64, e.g. to see how far
        float32 rounding moves the logits."""
        if dtype is not None and not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point dtype, got {dtype}")
        model = copy.deepcopy(self.model)
        return CompiledTransformer(model.to(device=device, dtype=dtype).eval(), self.meta)

    def __repr__(self) -> str:
        cfg = self.config
        return (
            f"CompiledTransformer(output={self.meta.output.name!r}, n_layers={cfg.n_layers}, "
            f"n_heads={cfg.n_heads}, d_model={cfg.d_model}, d_mlp={cfg.d_mlp}, "
            f"max_len={self.max_len}, device={str(self.device)!r})"
        )

    def encode(self, inputs: Sequence[str | Sequence[Atom]]) -> tuple[Tensor, list[int]]:
        """Ids `[batch, 1 + longest]` on the model's device (BOS, tokens, PAD) and the lengths."""
        ids, lengths = self.vocab.encode(inputs)
        return torch.from_numpy(ids).to(self.device), lengths

    def forward(self, ids: Tensor) -> Tensor:
        """Logits `[batch, pos, d_vocab_out]`."""
        with torch.inference_mode():
            return self.model(self._checked(ids))

    __call__ = forward

    def run_with_cache(self, ids: Tensor) -> tuple[Tensor, Cache]:
        """Logits and activations keyed by TransformerLens hook names (see docs/runtime.md)."""
        with torch.inference_mode():
            return self.model.run_with_cache(self._checked(ids))

    def _checked(self, ids: Tensor) -> Tensor:
        # Indexing W_E with a negative id would silently read another row (and on CUDA an id past
        # the end is a device-side assert), so hand-made ids are checked like encoded ones.
        cfg = self.config
        if ids.ndim != 2 or ids.shape[1] > cfg.n_ctx or ids.dtype.is_floating_point:
            raise ModelInputError(
                f"ids must be an integer tensor [batch, pos] with pos <= n_ctx = {cfg.n_ctx}, "
                f"got {ids.dtype} {list(ids.shape)}"
            )
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= cfg.d_vocab):
            raise ModelInputError(f"ids must lie in 0..{cfg.d_vocab - 1} (d_vocab = {cfg.d_vocab})")
        return ids.to(self.device)

    def decode(self, logits: Tensor, lengths: Sequence[int]) -> list[list[Any]]:
        """Program values at model positions 1..n of each input (plain Python values).

        The reduction runs where the logits are (argmax, or the numerical column in float64, which
        holds float32 logits exactly); only `[batch, n]` numbers travel to the CPU.
        """
        output = self.meta.output
        at_tokens = logits.detach()[:, 1 : 1 + max(lengths, default=0)]  # [batch, n, d_vocab_out]
        if output.encoding is OutputEncoding.CATEGORICAL:
            if not bool(torch.isfinite(at_tokens).all()):  # argmax would silently pick a NaN
                raise ModelOutputError(
                    f"the model computed NaN or infinite logits for '{output.name}'"
                )
            return output.from_columns(at_tokens.argmax(dim=-1).cpu().numpy(), lengths)
        return output.from_numbers(at_tokens[..., 0].double().cpu().numpy(), lengths)

    def run(self, inputs: Sequence[str | Sequence[Atom]], batch_size: int = 256) -> list[list[Any]]:
        """Encode, run and decode inputs of any lengths, `batch_size` at a time, in input order.

        Inputs are grouped by length so that batches carry little padding; padding never changes a
        real position's output, so grouping changes speed only.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        # One encode checks every input before any work, so a bad one fails first.
        all_ids, lengths = self.vocab.encode(inputs)  # [batch, 1 + longest]
        order = np.argsort(np.asarray(lengths), kind="stable")
        outputs: list[list[Any]] = [[] for _ in inputs]
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            chunk_lengths = [lengths[i] for i in chunk]
            ids = torch.from_numpy(all_ids[chunk, : 1 + max(chunk_lengths)]).to(self.device)
            decoded = self.decode(self.forward(ids), chunk_lengths)
            for i, output in zip(chunk.tolist(), decoded, strict=True):
                outputs[i] = output
        return outputs

"""`CompiledTransformer`: a loaded model with its vocabulary and output decoder.

model = transformer.load("reverse.safetensors")
model.run(["abc", "ba"])            # [["c", "b", "a"], ["a", "b"]]
ids, lengths = model.encode(["abc"])
logits, cache = model.run_with_cache(ids)
codes = model.run_ids(ids)          # tensors in, tensors out (on the model's device)
model.to_values(codes, lengths)     # [["c", "b", "a"]]
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from transformer.config import ModelConfig
from transformer.decoding import DeviceCodes
from transformer.errors import ModelInputError
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

        The reduction runs where the logits are (argmax, or snapping the numerical column in
        float64, which holds float32 logits exactly); only `[batch, n]` codes travel to the CPU.
        """
        output = self.meta.output
        width = max(lengths, default=0)
        at_tokens = logits.detach()[:, 1 : 1 + width]  # [batch, n, d_vocab_out]
        real = torch.from_numpy(np.arange(width) < np.asarray(lengths)[:, None])  # [batch, n]
        reduced = output.reduce(at_tokens, real.to(at_tokens.device))
        output.check(reduced)
        return output.values_of(reduced.codes.cpu().numpy(), lengths)

    def run(self, inputs: Sequence[str | Sequence[Atom]], batch_size: int = 256) -> list[list[Any]]:
        """Encode, run and decode inputs of any lengths, `batch_size` at a time, in input order.

        Inputs are grouped by length so that batches carry little padding; padding never changes a
        real position's output, so grouping changes speed only.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        # One encode checks every input before any work, so a bad one fails first.
        all_ids, lengths = self.vocab.encode(inputs)  # [batch, 1 + longest]
        by_length = np.asarray(lengths)
        order = np.argsort(by_length, kind="stable")
        in_order = bool((np.diff(by_length) >= 0).all())  # already sorted: no reordering
        if not in_order:
            all_ids, by_length = all_ids[order], by_length[order]
        ids = self._to_device(all_ids)  # one host-to-device copy for the whole run
        ends = list(range(batch_size, len(lengths), batch_size)) + [len(lengths)]
        starts = [0, *ends[:-1]]
        with torch.inference_mode():
            # Queue every batch before reading any result: on a GPU, the host never waits
            # between batches.
            parts = [
                self._reduce(ids[start:end, : 1 + int(by_length[end - 1])])
                for start, end in zip(starts, ends, strict=True)
            ]
        output = self.meta.output
        rows: list[list[Any]] = []
        for part, start, end in zip(parts, starts, ends, strict=True):
            # Checked in batch order, so the first bad batch is the one reported; converting a
            # batch to Python values overlaps with the GPU computing the later ones.
            output.check(part)
            rows += output.values_of(part.codes.cpu().numpy(), by_length[start:end].tolist())
        if in_order:
            return rows
        outputs: list[list[Any]] = [[] for _ in rows]
        for i, row in zip(order.tolist(), rows, strict=True):
            outputs[i] = row
        return outputs

    def run_ids(self, ids: Tensor, batch_size: int = 256) -> Tensor:
        """Output codes `[batch, pos - 1]` on the model's device for ids `[batch, pos]` (as from
        `encode`), `batch_size` rows at a time; column i is program position i. See
        docs/runtime.md for what a code means; `to_values(codes, lengths)` gives the values.
        Codes past an input's length (at PAD) mean nothing.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        ids = self._checked(ids)
        with torch.inference_mode():
            parts = [
                self._reduce(ids[start : start + batch_size])
                for start in range(0, len(ids), batch_size)
            ]
        for part in parts:
            self.meta.output.check(part)
        if not parts:
            return torch.empty((0, max(ids.shape[1] - 1, 0)), device=self.device)
        return torch.cat([part.codes for part in parts])

    def to_values(self, codes: Tensor | np.ndarray, lengths: Sequence[int]) -> list[list[Any]]:
        """Plain Python values from `run_ids`'s codes `[batch, n]`, row b cut to `lengths[b]`."""
        if isinstance(codes, Tensor):
            codes = codes.detach().cpu().numpy()
        return self.meta.output.values_of(np.asarray(codes), lengths)

    def _reduce(self, ids: Tensor) -> DeviceCodes:
        """Forward and reduce valid ids (no checks, no host synchronisation)."""
        logits = self.model(ids)  # [batch, pos, d_vocab_out]
        # [batch, n]: encode puts PAD only past each input's end
        if ids.device.type == "cpu":
            real = torch.from_numpy(ids.numpy()[:, 1:] != self.vocab.pad_id)  # see reduce
        else:
            real = ids[:, 1:] != self.vocab.pad_id
        return self.meta.output.reduce(logits[:, 1:], real)

    def _to_device(self, ids: np.ndarray) -> Tensor:
        # Not pinned: pinning a fresh [1024, 257] array cost more (2.7 ms) than the plain copy
        # (0.7 ms) on an H100.
        return torch.from_numpy(ids).to(self.device)

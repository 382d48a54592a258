"""`CompiledTransformer`: a loaded model with its vocabulary and output decoder.

model = transformer.load("reverse.safetensors")
model.run(["abc", "ba"])            # [["c", "b", "a"], ["a", "b"]]
ids, lengths = model.encode(["abc"])
logits, cache = model.run_with_cache(ids)
codes = model.run_ids(ids)          # tensors in, tensors out (on the model's device)
model.to_values(codes, lengths)     # [["c", "b", "a"]]
model.run_array(np.array([list("abc"), list("bca")]))   # arrays in and out: [["c" "b" "a"] ...]
model.run_hooked(["abc"], [model.sop_hook("tokens", "c", position=0)])   # [["c", "b", "c"]]
logits = model.run_with_hooks(ids, fwd_hooks=[("blocks.0.hook_resid_post", fn)])  # fn(value, hook)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import torch
from torch import Tensor

from transformer import hooked_runs
from transformer.activations import ActivationCache, NamesFilter
from transformer.arguments import (
    Lengths,
    check_batch_size,
    check_rows,
    checked_ids,
    checked_lengths,
)
from transformer.arrays import ArrayCodec
from transformer.batching import CPU_POSITIONS, length_batches
from transformer.config import ModelConfig
from transformer.decoding import DeviceCodes
from transformer.errors import ModelFormatError, ModelInputError, ModelOutputError
from transformer.hooks import Cache, FwdHooks
from transformer.logit_values import decode_logits
from transformer.metadata import ModelMetadata
from transformer.model import Transformer
from transformer.patching import SopPatch, sop_hook
from transformer.ragged import run_ragged
from transformer.residual_dims import ResidualDim, read_in_heads, residual_dim, residual_dims
from transformer.ties import ARGMAX, AUTO, RAISE, mark
from transformer.vocab import Atom, Vocab

# Rows per batch when a GPU runs while the host encodes and decodes: small enough that the first
# encode and the last decode (the host work that nothing overlaps) are short, large enough that
# per-batch costs stay small. On an H200 with 1024 inputs of 256 tokens, 512 was the fastest of
# 128, 256, 512 and 1024 for every library program (bench/README.md).
PIPELINE_ROWS = 512


class CompiledTransformer:
    """A compiled RASP program as a torch model: encode -> forward -> decode."""

    def __init__(
        self,
        model: Transformer,
        meta: ModelMetadata,
        edited: tuple[str, ...] | None = None,
        fields: tuple[str, ...] | None = None,
    ) -> None:
        self.model = model
        self.meta = meta
        # the tensors that differ from the file's `weights_sha256`, the runtime fields that differ
        # from its `fields_sha256` (None: it records none): its certificate is not for them
        self.edited_tensors = edited
        self.edited_fields = fields

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
        if dtype is not None and not isinstance(dtype, torch.dtype):
            raise ValueError(
                f"dtype must be a torch dtype (torch.float32 or torch.float64), got {dtype!r}"
            )
        if dtype is not None and not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point dtype, got {dtype}")
        if dtype is not None and torch.finfo(dtype).bits < 32:
            # e.g. bfloat16 decoded 348 of reverse's 363 inputs at N = 5 wrongly, without an error
            raise ValueError(
                f"dtype {dtype} is narrower than float32, whose rounding the model's certificate "
                "bounds: its outputs would be wrong without an error (float32 or float64 only)"
            )
        moved = place(copy.deepcopy(self.model), "<in-memory model>", device, dtype)
        return CompiledTransformer(moved.eval(), self.meta, self.edited_tensors, self.edited_fields)

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

    def run_with_cache(
        self,
        ids: Tensor,
        fwd_hooks: FwdHooks = (),
        *,
        names_filter: NamesFilter = None,
        remove_batch_dim: bool = False,
    ) -> tuple[Tensor, ActivationCache]:
        """Logits and activations keyed by TransformerLens hook names (see docs/runtime.md),
        after the `fwd_hooks` of `run_with_hooks` where any are given; `names_filter` (a name,
        names or a predicate, as TransformerLens's) keeps only those; `remove_batch_dim` drops
        the batch dimension of a one-row batch."""
        return hooked_runs.run_with_cache(
            self.model, ids, fwd_hooks, names_filter, remove_batch_dim
        )

    def run_with_hooks(
        self, ids: Tensor, fwd_hooks: FwdHooks = (), *, cache: Cache | None = None
    ) -> Tensor:
        """Logits with `fwd_hooks`, `(name or predicate, fn(value, hook))` pairs, applied for this
        call only (transformer/hooks.py); each activation recorded in `cache` where given."""
        return hooked_runs.run_with_hooks(self.model, ids, fwd_hooks, cache)

    def run_hooked(
        self,
        inputs: Sequence[str | Sequence[Atom]],
        fwd_hooks: FwdHooks,
        *,
        undecided: Any = RAISE,
    ) -> list[list[Any]]:
        """The values `run` gives, from one batch of `inputs` (row b is input b) run with hooks;
        `undecided` as `decode` takes it, but RAISE by default: a hook that ties an output's
        logits (an ablation) is named, never read as the first listed value."""
        ids, lengths = self.encode(inputs)
        return self.decode(self.run_with_hooks(ids, fwd_hooks), lengths, undecided=undecided)

    def sop_hook(
        self, sop: str, value: Any, *, position: int | None = None, at: int | str | None = None
    ) -> tuple[str, SopPatch]:
        """A hook setting residual group `sop` to `value` at program `position` (None: all),
        after its last writer or at `at` (a block, or a resid hook name): docs/runtime.md."""
        reach = self.meta.raw.get("reach")
        return sop_hook(
            self.model,
            self.residual_labels,
            reach,
            sop,
            value,
            position,
            at,
            self.meta.residual_values,
        )

    def residual_dim(self, key: str | int) -> ResidualDim:
        """Residual label `key` (or dimension `key`) read back: its program variable, its typed
        value, the sublayers that write it (transformer/residual_dims.py)."""
        try:
            return residual_dim(self.model, self.residual_labels, self.meta.residual_values, key)
        except ModelInputError as exc:
            raise self._read_in_heads(exc, key) from None

    def residual_dims(self, name: str) -> tuple[ResidualDim, ...]:
        """Every dimension of residual group `name` (`sorted`: its one-hot columns), or, where no
        group has that name, of program variable `name` (sort's `target_position`: its parts)."""
        try:
            return residual_dims(self.model, self.residual_labels, self.meta.residual_values, name)
        except ModelInputError as exc:
            raise self._read_in_heads(exc, name) from None

    def _read_in_heads(self, exc: ModelInputError, name: Any) -> ModelInputError:
        """`exc`, or, for a name only heads read (a selector), the error saying which heads."""
        inside = read_in_heads(name, self.meta.layers) if isinstance(name, str) else ""
        return ModelInputError(exc.reason, inside) if inside else exc

    def _checked(self, ids: Tensor) -> Tensor:
        return checked_ids(ids, self.config, self.device)

    def decode(self, logits: Tensor, lengths: Lengths, *, undecided: Any = AUTO) -> list[list[Any]]:
        """Program values at model positions 1..n of each input (plain Python values).

        The reduction runs where the logits are (argmax, or snapping the numerical column in
        float64, which holds float32 logits exactly); only `[batch, n]` codes travel to the CPU.
        An undecided position (a categorical one whose largest logit is shared, a numerical one
        off every value: after a hook or an edit, or on an input the program has no value for;
        transformer/ties.py) decodes as argmax's first value or the snapped one (ARGMAX), an
        `UndecidedOutputError` naming it (RAISE), or `undecided` (None, say). The default, AUTO,
        is RAISE for the logits of a hooked run (`run_with_hooks`, `run_with_cache` given
        hooks: `HookedLogits`), as `run_hooked` decodes them, and ARGMAX otherwise.
        """
        return decode_logits(
            self.meta.output, self.config.d_vocab_out, logits, lengths, self.max_len, undecided
        )

    def run(
        self,
        inputs: Sequence[str | Sequence[Atom]],
        batch_size: int = 256,
        *,
        undecided: Any = ARGMAX,
    ) -> list[list[Any]]:
        """Encode, run and decode inputs of any lengths, `batch_size` at a time, in input order;
        `undecided` as `decode` takes it.

        Inputs are grouped by length so that batches carry little padding; padding never changes a
        real position's output, so grouping changes speed only. On the CPU every input is checked
        before any batch runs. On a GPU the host encodes and decodes batches of at most
        `PIPELINE_ROWS` while the device computes the neighbouring ones; a bad input is still
        reported before any output, the first one in input order as on the CPU.
        """
        check_batch_size(batch_size)
        if self.device.type == "cpu":
            return self._run(inputs, batch_size, encode_ahead=True, undecided=undecided)
        rows = min(batch_size, PIPELINE_ROWS)
        return self._run(inputs, rows, encode_ahead=False, undecided=undecided)

    def _run(
        self,
        inputs: Sequence[str | Sequence[Atom]],
        batch_size: int,
        *,
        encode_ahead: bool,
        undecided: Any = ARGMAX,
    ) -> list[list[Any]]:
        """`run` with every input encoded first (`encode_ahead`), or each batch just before it
        is queued, so that encoding overlaps with the device computing the previous batch."""
        all_ids: np.ndarray | None = None
        if encode_ahead:
            all_ids, lengths = self.vocab.encode(inputs)  # [batch, 1 + longest]; checks all
        else:
            lengths = self._lengths(inputs)
        output = self.meta.output
        outputs: list[list[Any]] = [[] for _ in lengths]
        failure: ModelOutputError | None = None

        def encoded(rows: np.ndarray) -> np.ndarray:  # [len(rows), 1 + longest of them]
            if all_ids is not None:
                return all_ids[rows, : 1 + lengths[rows[-1]]]  # rows are sorted by length
            try:
                return self.vocab.encode([inputs[i] for i in rows.tolist()])[0]
            except ModelInputError:
                self.vocab.encode(inputs)  # names the first bad input of all, in input order
                raise

        def collect(part: DeviceCodes, rows: np.ndarray) -> None:
            # Waits for this batch only; on a GPU the next one is already queued behind it.
            nonlocal failure
            order = rows.tolist()
            try:
                output.check(part, order, ties=undecided is not RAISE)
            except ModelOutputError as err:  # raised once every input is known to be good
                failure = err
                return
            values = output.values_of(part.codes.cpu().numpy(), [lengths[i] for i in order])
            if undecided not in (RAISE, ARGMAX) and part.undecided is not None:
                values = mark(values, part.undecided.cpu().numpy(), undecided)
            for i, row in zip(order, values, strict=True):
                outputs[i] = row

        pending: tuple[DeviceCodes, np.ndarray] | None = None
        with torch.inference_mode():
            on_cpu = self.device.type == "cpu"  # see transformer/batching.py
            for rows in length_batches(lengths, batch_size, cpu=on_cpu):
                ids = encoded(rows)
                if failure is not None:
                    continue  # no more batches run; the remaining inputs are only checked
                part = self._reduce(self._to_device(ids), undecided is not ARGMAX)  # queued
                if pending is not None:
                    collect(*pending)
                pending = (part, rows)
            if pending is not None and failure is None:
                collect(*pending)
        if failure is not None:
            raise failure  # the first bad batch in batch order
        return outputs

    def _lengths(self, inputs: Sequence[str | Sequence[Atom]]) -> list[int]:
        """Each input's length, without encoding; `encode`'s error where an input has none."""
        if (
            isinstance(inputs, str | bytes)
            or not isinstance(inputs, Sequence | np.ndarray)
            or (isinstance(inputs, np.ndarray) and inputs.ndim == 0)  # has no len
            or len(inputs) == 0
        ):
            self.vocab.encode(inputs)  # raises: a bare string, not a list, or no inputs
        try:
            return [len(item) for item in inputs]
        except TypeError:
            self.vocab.encode(inputs)  # raises, naming the input of the wrong type
            raise

    def run_ids(self, ids: Tensor, batch_size: int = 256) -> Tensor:
        """Output codes `[batch, pos - 1]` on the model's device for ids `[batch, pos]` (as from
        `encode`: BOS first, PAD only after the tokens; other ids are a `ModelInputError`),
        `batch_size` rows at a time; column i is program position i. See
        docs/runtime.md for what a code means; `to_values(codes, lengths)` gives the values.
        Codes past an input's length (at PAD) mean nothing.
        """
        check_batch_size(batch_size)
        ids = self._checked(ids)
        check_rows(ids, self.vocab)
        return self._codes(ids, batch_size)

    def _codes(self, ids: Tensor, batch_size: int) -> Tensor:
        """`run_ids` for valid ids on the model's device."""
        if ids.device.type == "cpu":  # a batch of at most CPU_POSITIONS positions: batching.py
            batch_size = min(batch_size, max(1, CPU_POSITIONS // max(1, ids.shape[1])))
        with torch.inference_mode():
            starts = range(0, len(ids), batch_size)
            parts = [self._reduce(ids[start : start + batch_size], False) for start in starts]
        for start, part in zip(starts, parts, strict=True):
            self.meta.output.check(part, range(start, start + len(part.codes)), ties=True)
        if not parts:  # no rows: the codes' dtype all the same (docs/runtime.md)
            dtype = torch.int64 if self.meta.output.codes_are_indices else torch.float64
            return torch.empty((0, max(ids.shape[1] - 1, 0)), dtype=dtype, device=self.device)
        return torch.cat([part.codes for part in parts])

    def run_array(
        self,
        tokens: np.ndarray,
        batch_size: int = 256,
        *,
        lengths: Lengths | None = None,
        fill: Any = None,
    ) -> np.ndarray:
        """The outputs `[batch, n]` of inputs of one length, `tokens [batch, n]`, as a numpy array
        whose dtype the output decides (`transformer.arrays.output_dtype`): `tolist()` of it gives
        the values `run` gives on `tokens.tolist()`, as that dtype holds them (2.0 for 2 in a
        float64 array). The vocabulary lookup and the decoding run on the model's device, so on a
        GPU only the tokens' code points and the finished values cross to and from the host.

        With `lengths` (one per row), row b is the input `tokens[b, :lengths[b]]`, the tokens past
        it are never read, and the output holds `fill` there (None: `""`, 0, NaN, False or None,
        as the dtype has it): inputs of several lengths in one array (transformer/ragged.py)."""
        check_batch_size(batch_size)
        if lengths is not None:
            return run_ragged(
                self._arrays,
                tokens,
                lengths,
                batch_size,
                fill,
                self.device,
                lambda ids: self._reduce(ids, False),
            )
        if fill is not None:
            raise ModelInputError(
                "fill is for the positions past each input's length: give lengths= with it"
            )
        tokens = self._arrays.check(tokens)
        if tokens.shape[0] == 0:
            return np.empty(tokens.shape, dtype=self._arrays.dtype)
        ids = self._arrays.encode(tokens, self.device)  # [batch, 1 + n], valid by construction
        return self._arrays.values(self._codes(ids, batch_size))

    @cached_property
    def _arrays(self) -> ArrayCodec:
        return ArrayCodec(self.vocab, self.meta.output)

    def to_values(self, codes: Tensor | np.ndarray, lengths: Lengths) -> list[list[Any]]:
        """Plain Python values from `run_ids`'s codes `[batch, n]`, row b cut to `lengths[b]`."""
        if isinstance(codes, Tensor):
            codes = codes.detach().cpu().numpy()
        codes = np.asarray(codes)
        if codes.ndim != 2:  # one row without its batch dimension would read as one row per code
            raise ModelInputError(
                f"codes must be [batch, n] (as run_ids gives them), got shape {list(codes.shape)}"
            )
        lengths = checked_lengths(lengths, codes.shape[0], codes.shape[1], "codes", self.max_len)
        output = self.meta.output
        if output.codes_are_indices:
            # a negative code would silently pick a value from the end, a large one raise
            # IndexError; codes past an input's length mean nothing (cut, whatever they hold)
            inside = np.arange(codes.shape[1]) < np.asarray(lengths)[:, None]  # [batch, n]
            real, count = codes[inside], len(output.values or ())
            if codes.dtype.kind not in "iu" or (
                real.size and (real.min() < 0 or real.max() >= count)
            ):
                shown = f" from {real.min()} to {real.max()}" if real.size else ""
                raise ModelInputError(
                    f"codes must be integers in 0..{count - 1} (indices into "
                    f"meta.output.values, as run_ids gives them), got {codes.dtype}{shown}"
                )
            codes = np.where(inside, codes, 0)
        return output.values_of(codes, lengths)

    def _reduce(self, ids: Tensor, find_undecided: bool) -> DeviceCodes:
        """Forward and reduce valid ids (no checks, no host synchronisation); `find_undecided` as
        `OutputSpec.reduce` takes it."""
        logits = self.model(ids)  # [batch, pos, d_vocab_out]
        # [batch, n]: encode puts PAD only past each input's end
        if ids.device.type == "cpu":
            real = torch.from_numpy(ids.numpy()[:, 1:] != self.vocab.pad_id)  # see reduce
        else:
            real = ids[:, 1:] != self.vocab.pad_id
        return self.meta.output.reduce(logits[:, 1:], real, find_undecided)

    def _to_device(self, ids: np.ndarray) -> Tensor:
        # Not pinned: pinning a fresh [1024, 257] array cost more (2.7 ms) than the plain copy
        # (0.7 ms) on an H100.
        return torch.from_numpy(ids).to(self.device)


def place(
    model: Transformer,
    path: str,
    device: str | torch.device | None,
    dtype: torch.dtype | None = None,
) -> Transformer:
    """`model` moved to `device` (and `dtype`), or the `ModelFormatError` naming `path`."""
    try:
        moved = model.to(device=device, dtype=dtype)
    # e.g. CUDA asked for but not available; a device whose torch module is missing ("hpu")
    except (RuntimeError, AssertionError, ImportError) as err:
        raise ModelFormatError(
            path, f"cannot place the model on device '{device}': {err}"
        ) from None
    if moved.embed.W_E.is_meta:  # it would load, then fail at the first run with torch's error
        raise ModelFormatError(
            path, f"cannot place the model on device '{device}': a meta tensor holds no weights"
        )
    return moved

"""Logits -> program values for any runtime's logits (a `CompiledTransformer`'s, a
HookedTransformer's running an export): checked against the output's shape and the inputs'
lengths, reduced where they are (`OutputSpec.reduce`), and undecided positions raised, decoded
as argmax's, or marked (transformer/ties.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from transformer import hooked_runs
from transformer.arguments import Lengths, checked_lengths
from transformer.decoding import OutputSpec
from transformer.errors import ModelInputError
from transformer.ties import ARGMAX, AUTO, RAISE, mark


def decode_logits(
    output: OutputSpec,
    columns: int,
    logits: Tensor,
    lengths: Lengths,
    max_len: int,
    undecided: Any = AUTO,
) -> list[list[Any]]:
    """`output`'s values at positions 1..n of each row of `logits [batch, pos, columns]` (any
    runtime's: this one's, a HookedTransformer's), row b cut to `lengths[b]` <= `max_len` (the
    output's grids and types are given for lengths up to the model's max_len only); `undecided`
    at an undecided position (argmax's first value or the snapped one where it is `ARGMAX`, an
    error where it is `RAISE`; `AUTO`: RAISE for a hooked run's `HookedLogits`, else ARGMAX)."""
    if not isinstance(logits, Tensor) or logits.ndim != 3 or logits.shape[2] != columns:
        # another model's logits (or a cut column) would decode to values without a word
        shape = list(logits.shape) if isinstance(logits, Tensor) else type(logits).__name__
        raise ModelInputError(
            f"logits must be a tensor [batch, pos, d_vocab_out = {columns}], got {shape}"
        )
    if undecided is AUTO:
        undecided = RAISE if isinstance(logits, hooked_runs.HookedLogits) else ARGMAX
    logits = logits.as_subclass(Tensor)  # the marker has done its work: plain, faster ops below
    lengths = checked_lengths(lengths, logits.shape[0], logits.shape[1] - 1, "logits", max_len)
    width = max(lengths, default=0)
    at_tokens = logits.detach()[:, 1 : 1 + width]  # [batch, n, d_vocab_out]
    real = torch.from_numpy(np.arange(width) < np.asarray(lengths)[:, None])  # [batch, n]
    reduced = output.reduce(at_tokens, real.to(at_tokens.device), undecided is not ARGMAX)
    marking = undecided is not RAISE and undecided is not ARGMAX
    output.check(reduced, ties=undecided is not RAISE)
    values = output.values_of(reduced.codes.cpu().numpy(), lengths)
    if marking and reduced.undecided is not None:
        values = mark(values, reduced.undecided.cpu().numpy(), undecided)
    return values

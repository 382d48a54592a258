"""`run_array(tokens, lengths=...)`: a ragged batch, inputs of several lengths in one array.

Row b holds input b in its first `lengths[b]` entries; whatever lies past them (`""`, `"<pad>"`,
0, None, masked entries) is never read: those positions are PAD to the model, and the output holds
`fill` there. Inputs run in batches of near lengths (transformer/batching.py), each cut to its
longest input, so a short input costs what it costs alone, not the array's width; the vocabulary
lookup and the decoding run on the model's device as for one length (transformer/arrays.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from transformer.arguments import Lengths, checked_lengths
from transformer.arrays import ArrayCodec
from transformer.batching import length_batches
from transformer.errors import ModelInputError

if TYPE_CHECKING:  # torch is imported where a model runs (see decoding.py)
    import torch
    from torch import Tensor

    from transformer.decoding import DeviceCodes

# What positions past an input's length hold where no `fill` is given, by the output's dtype kind
# (`object`: None): a value of the dtype, as an array needs one; NaN where the dtype has one.
_FILLS: dict[str, Any] = {"U": "", "b": False, "i": 0, "f": np.nan}


def checked_fill(fill: Any, dtype: np.dtype) -> Any:
    """`fill`, or the dtype's default for None; an error where `dtype` cannot hold it exactly
    (1.5 in an int64 array would be 1, -1 in a bool one True)."""
    if fill is None:
        return _FILLS.get(dtype.kind)
    given = np.asarray(fill).dtype
    if dtype.kind != "O" and (given.kind == "O" or not np.can_cast(given, dtype, "safe")):
        raise ModelInputError(
            f"fill {fill!r} is no value of the output's dtype {dtype} (the array run_array "
            "returns), which holds it in the positions past each input's length"
        )
    return fill


def ragged_lengths(lengths: Lengths, rows: int, width: int, max_len: int) -> np.ndarray:
    """One length per row, each 1..`width` (the array's) and at most `max_len`, as int64."""
    sizes = checked_lengths(lengths, rows, width, "tokens", max_len)
    empty = next((b for b, n in enumerate(sizes) if n == 0), None)
    if empty is not None:
        raise ModelInputError(
            f"lengths[{empty}] is 0; an input holds at least one token (run refuses an empty "
            "input too)"
        )
    return np.asarray(sizes, dtype=np.int64)


def run_ragged(
    codec: ArrayCodec,
    tokens: Any,
    lengths: Lengths,
    batch_size: int,
    fill: Any,
    device: torch.device,
    reduce: Callable[[Tensor], DeviceCodes],
) -> np.ndarray:
    """The outputs `[batch, n]` of the inputs `tokens[b, :lengths[b]]`, `fill` past them;
    `reduce(ids)` forwards valid ids and reduces the logits (CompiledTransformer._reduce)."""
    import torch

    if not isinstance(tokens, np.ndarray) or tokens.ndim != 2:
        codec.check(tokens)  # raises: not an array, or not [batch, n]
    fill = checked_fill(fill, codec.dtype)
    rows, n = tokens.shape
    sizes = ragged_lengths(lengths, rows, n, codec.vocab.max_len)
    out = np.full((rows, n), fill, dtype=codec.dtype)
    if rows == 0:
        return out
    # the columns past the longest input are never read (the array may be wider than max_len)
    tokens = codec.check(tokens[:, : int(sizes.max())], sizes.tolist())
    ids = codec.encode(tokens, device, sizes)  # [batch, 1 + longest], PAD past each length
    batches = length_batches(sizes, batch_size, cpu=device.type == "cpu")
    with torch.inference_mode():
        # every batch queued before the first is read (on a GPU the device runs ahead)
        parts = [
            reduce(ids[torch.from_numpy(batch).to(device), : 1 + sizes[batch[-1]]])
            for batch in batches  # sorted by length: its last input is its longest
        ]
    for batch, part in zip(batches, parts, strict=True):
        codec.output.check(part, batch.tolist(), ties=True)
        within = sizes[batch]
        for size in np.unique(within).tolist():  # values are decoded per length (grids, types)
            at = np.flatnonzero(within == size)
            codes = part.codes[torch.from_numpy(at).to(part.codes.device), :size]
            out[batch[at], :size] = codec.values(codes)
    return out

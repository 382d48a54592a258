"""Checks of what a caller hands `CompiledTransformer`: ids, their rows, lengths, batch sizes.

Each check refuses, with a `ModelInputError` (a `ValueError` for a batch size), what would
otherwise read another row of `W_E`, cut or invent values, or decode garbage without a word.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from transformer.config import ModelConfig
from transformer.errors import ModelInputError
from transformer.vocab import Vocab

# One input length per row (`encode` gives a list; a 1-D integer tensor or array is taken too).
Lengths = Sequence[int] | Tensor | np.ndarray


def checked_ids(ids: Tensor, cfg: ModelConfig, device: torch.device) -> Tensor:
    """`ids` as an int32/int64 tensor on `device`, or the `ModelInputError` saying why not."""
    # Indexing W_E with a negative id would silently read another row (and on CUDA an id past
    # the end is a device-side assert), so hand-made ids are checked like encoded ones.
    if not isinstance(ids, Tensor):
        raise ModelInputError(
            f"ids must be an integer tensor [batch, pos] with pos <= n_ctx = {cfg.n_ctx}, "
            f"got {type(ids).__name__} (encode gives one)"
        )
    # W_E[ids] takes a bool or uint8 tensor as a mask and refuses int8/int16: bool is refused,
    # the narrow integer types are widened (torch's uint16..uint64 lack min/max: refused)
    integer = ids.dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
    if ids.ndim != 2 or ids.shape[1] > cfg.n_ctx or not integer:
        raise ModelInputError(
            f"ids must be an integer tensor [batch, pos] with pos <= n_ctx = {cfg.n_ctx}, "
            f"got {ids.dtype} {list(ids.shape)}"
        )
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= cfg.d_vocab):
        raise ModelInputError(f"ids must lie in 0..{cfg.d_vocab - 1} (d_vocab = {cfg.d_vocab})")
    if ids.dtype not in (torch.int32, torch.int64):
        ids = ids.long()
    return ids.to(device)


def check_rows(ids: Tensor, vocab: Vocab) -> None:
    """Each row as `encode` gives one: BOS at position 0 only, PAD only after the tokens.
    Decoded codes of other ids would be wrong without a word (the first token read as BOS, an
    input cut at a PAD inside it); the raw forward pass takes any ids, for experiments."""
    if ids.numel() == 0:
        return
    bos, pad = vocab.bos_id, vocab.pad_id
    tail = ids[:, 1:]
    is_pad = tail == pad
    wrong = torch.stack(
        [
            (ids[:, 0] != bos).any(),
            (tail == bos).any(),
            (is_pad[:, :-1] & ~is_pad[:, 1:]).any(),
        ]
    ).tolist()  # one host synchronisation
    if not any(wrong):
        return
    problem = ""
    for row, line in enumerate(ids.cpu().tolist()):  # the first bad row, named
        end = line.index(pad, 1) if pad in line[1:] else len(line)
        if line[0] != bos:
            problem = f"position 0 of row {row} holds id {line[0]}, not BOS ({bos})"
        elif bos in line[1:]:
            problem = f"row {row} holds BOS ({bos}) at position {line.index(bos, 1)}"
        elif any(token != pad for token in line[end:]):
            problem = f"row {row} holds PAD ({pad}) before a token"
        if problem:
            break
    raise ModelInputError(
        f"ids must be as encode gives them: BOS at position 0, then the tokens, then PAD "
        f"only; {problem}"
    )


def check_batch_size(batch_size: int) -> None:
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, int | np.integer)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")


def checked_lengths(
    lengths: Lengths, rows: int, width: int, what: str, max_len: int | None = None
) -> list[int]:
    """One length per row, each a whole number of the row's positions (a wrong one would cut
    or invent values silently) and at most `max_len` (the output's grids and types end there), as
    a list; a tensor or array of them is taken as its list."""
    if isinstance(lengths, Tensor | np.ndarray):
        lengths = lengths.tolist()
    if isinstance(lengths, str | bytes) or not isinstance(lengths, Sequence):
        raise ModelInputError(
            f"lengths must be a list of ints, one per row of {what} (as encode gives them), "
            f"got {type(lengths).__name__}"
        )
    if len(lengths) != rows:
        raise ModelInputError(
            f"{len(lengths)} lengths for {rows} {'row' if rows == 1 else 'rows'} of {what}"
        )
    for row, n in enumerate(lengths):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= width:
            raise ModelInputError(
                f"lengths[{row}] is {n!r}; a row of {what} holds 0..{width} positions"
            )
        if max_len is not None and n > max_len:
            raise ModelInputError(
                f"lengths[{row}] is {n}; the model reads at most {max_len} tokens (max_len)"
            )
    return list(lengths)

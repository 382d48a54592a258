"""Positions where a categorical output's largest logit is shared: nothing decides the value.

A compiled model never ties on an input the program has a value for (its certificate proves a
margin between the top logit and every other one); a hook or an edited weight can, an ablation
that zeroes a head's output often does (every logit 0), and so may an input the program has no
value for (the interpreter raises: averaging two strings gives two halves). argmax would then
give the first listed value, which reads like a real one, so decoding refuses such a position
with an `UndecidedOutputError` naming it (`run_hooked` by default; `run`, `decode` and
`interop.decode_logits` with `undecided=RAISE`), or puts a marker there (`undecided=None`), or,
by default outside `run_hooked`, keeps argmax's first value, as unhooked runs always gave
(docs/runtime.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from transformer.errors import UndecidedOutputError

if TYPE_CHECKING:  # torch is imported where a model runs: reading a file's metadata needs none
    from torch import Tensor


class _Raise:
    """`undecided`'s default: refuse a tie (any other value marks it)."""

    def __repr__(self) -> str:
        return "RAISE"


RAISE: Any = _Raise()


class _Argmax:
    """`undecided`'s default outside `run_hooked`: the first tied column, as argmax gives it
    (results of unhooked runs unchanged: an input the program has no value for may tie)."""

    def __repr__(self) -> str:
        return "ARGMAX"


ARGMAX: Any = _Argmax()


def tied_torch(at_tokens: Tensor, real: Tensor) -> Tensor:
    """`[batch, n]` bool: real positions of `at_tokens [batch, n, columns]` whose largest logit
    is in two or more columns (no host synchronisation)."""
    top = at_tokens.amax(dim=-1, keepdim=True)
    return ((at_tokens == top).sum(dim=-1) > 1) & real


def tied_numpy(at_tokens: np.ndarray, real: np.ndarray) -> np.ndarray:
    """`tied_torch` in numpy."""
    if at_tokens.shape[-1] < 2 or at_tokens.size == 0:  # one column never ties
        return np.zeros(at_tokens.shape[:-1], dtype=bool)
    top = at_tokens.max(axis=-1, keepdims=True)
    return ((at_tokens == top).sum(axis=-1) > 1) & real


def tie_error(
    name: str,
    values: Sequence[Any],
    tied: np.ndarray,
    at_tokens: Tensor,
    inputs: Sequence[int] | None = None,
) -> UndecidedOutputError:
    """The error naming the first tied position (row-major) of `tied [batch, n]`: its input
    (`inputs[row]`, the row itself where None), program position and the values that tie."""
    rows, positions = np.nonzero(tied)
    row, position = int(rows[0]), int(positions[0])
    logits = at_tokens[row, position].detach().cpu().double().numpy()  # [columns]
    top = logits.max()
    shared = [repr(values[k]) for k in np.flatnonzero(logits == top).tolist()]
    shown = ", ".join(shared[:6]) + (f" and {len(shared) - 6} more" if len(shared) > 6 else "")
    where = row if inputs is None else inputs[row]
    also = f" (and {len(rows) - 1} more positions)" if len(rows) > 1 else ""
    return UndecidedOutputError(
        f"output '{name}' is undecided at position {position} of input {where}{also}: its "
        f"largest logit, {top:g}, is shared by {shown}",
        "a compiled model ties only after a hook or an edit, or on an input the program has no "
        "value for; pass undecided=None to run, decode or run_hooked to mark such positions "
        "instead",
        where,
        position,
    )


def mark(rows: list[list[Any]], tied: np.ndarray, marker: Any) -> list[list[Any]]:
    """`rows` with `marker` at each tied position (`tied [batch, n]` marks real positions only)."""
    for row, position in zip(*np.nonzero(tied), strict=True):
        rows[int(row)][int(position)] = marker
    return rows

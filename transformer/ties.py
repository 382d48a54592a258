"""Undecided output positions: nothing in the logits decides the value.

A categorical position is undecided where its largest logit is shared; a numerical one where its
logit lies farther from every value the output can take than the certificate's float32 error
bound (`OutputSpec.error_bound`). A compiled model gives neither on an input the program has a
value for (its certificate proves a margin between the top logit and every other one, and bounds
the numerical logit's distance from the program's value); a hook or an edited weight can, an
ablation that zeroes a head's output often does (every logit 0), and so may an input the program
has no value for (the interpreter raises: averaging two strings gives two halves). argmax, or
snapping, would then give a value that reads like a real one, so decoding refuses such a
position with an `UndecidedOutputError` naming it (`undecided=RAISE`: `run_hooked`'s default and
`decode`'s for a hooked run's logits), or puts a marker there (`undecided=None`), or, by default
for unhooked runs, keeps argmax's first value or the snapped one, as they always gave
(docs/runtime.md, "Undecided positions").
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


class _Auto:
    """`decode`'s default: RAISE for the logits of a hooked run (`HookedLogits`), else ARGMAX."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Any = _Auto()


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
    detail = f"its largest logit, {top:g}, is shared by {shown}"
    return UndecidedOutputError(
        f"output '{name}' is undecided at position {position} of input {where}{also}: {detail}",
        "a compiled model ties only after a hook or an edit, or on an input the program has no "
        "value for; pass undecided=None to run, decode or run_hooked to mark such positions "
        "instead",
        where,
        position,
        detail,
    )


def off_value_error(
    name: str,
    undecided: np.ndarray,
    numbers: Tensor,
    nearest: Tensor,
    bound: float,
    inputs: Sequence[int] | None = None,
) -> UndecidedOutputError:
    """The error naming the first position (row-major) of `undecided [batch, n]` where a
    numerical output's logit (`numbers [batch, n]`) lies farther from the nearest value it can
    take (`nearest [batch, n]`) than the certificate's error `bound`."""
    rows, positions = np.nonzero(undecided)
    row, position = int(rows[0]), int(positions[0])
    number = float(numbers[row, position])
    near = float(nearest[row, position])
    where = row if inputs is None else inputs[row]
    also = f" (and {len(rows) - 1} more positions)" if len(rows) > 1 else ""
    detail = (
        f"its logit, {number:.9g}, is {abs(number - near):.3g} from the nearest value it can "
        f"take, {near:.9g}, beyond the certified float32 error bound {bound:.3g}"
    )
    return UndecidedOutputError(
        f"output '{name}' is undecided at position {position} of input {where}{also}: {detail}",
        "a compiled model lands on a value only where the program has one; a hook or an edit, "
        "or an input the program has no value for, can leave it between values; pass "
        "undecided=None to run, decode or run_hooked to mark such positions instead",
        where,
        position,
        detail,
    )


def mark(rows: list[list[Any]], undecided: np.ndarray, marker: Any) -> list[list[Any]]:
    """`rows` with `marker` at each undecided position (`undecided [batch, n]` marks real
    positions only)."""
    for row, position in zip(*np.nonzero(undecided), strict=True):
        rows[int(row)][int(position)] = marker
    return rows

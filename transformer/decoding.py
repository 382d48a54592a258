"""Logits -> program values, as the file's `output` entry says (docs/format.md).

`categorical`: `values[k]` is the value of logit column k; each position decodes by argmax.
`numerical`: one logit column holds the value; it snaps to the nearest listed value when the file
lists them; with per-position `denominators` d_i it is round(x * d_i) / d_i at program position i,
with per-length `length_denominators` e_n round(x * e_n) / e_n in an input of length n, with
`end_denominators` f_k round(x * f_k) / f_k at the k-th position from the end (k = n - 1 - i),
with `pair_denominators` one per (i, n) (transformer.pair_grid) (an int where the denominator is
1 or the position is among `int_positions`, else a float); otherwise `ints` round (half to even,
like RASP's `round`), `bools` are `logit > 0.5`, and `floats` are the logit itself. Where the
file gives `whole_types` (per input length, a flag per position), a whole number decodes as an int
at a position flagged "i" and as a float at one flagged "f". Values are always plain Python ints,
floats, strs or bools, and None where a numerical output's `none_at` (format version 9) names the
listed number it decodes to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from transformer.decoded_rows import (
    char_rows,
    grid_rows_of,
    listed_kinds,
    retyped,
    rows,
    type_flags,
)
from transformer.errors import ModelOutputError
from transformer.pair_grid import pair_table, pair_width
from transformer.snapping import SnapTable
from transformer.ties import off_value_error, tie_error, tied_numpy, tied_torch
from transformer.vocab import Atom

if TYPE_CHECKING:  # torch is imported where a model runs: reading a file's metadata needs none
    import torch
    from torch import Tensor


class OutputEncoding(Enum):
    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


class OutputType(Enum):
    """The interpreter's label for the output sequence."""

    INTS = "ints"
    FLOATS = "floats"
    STRINGS = "strings"
    BOOLS = "bools"


@dataclass(frozen=True)
class OutputSpec:
    """How to read the program's output off the logits."""

    name: str
    encoding: OutputEncoding
    type: OutputType
    values: tuple[Atom, ...] | None  # required for categorical; optional for numerical
    denominators: tuple[int, ...] | None = None  # numerical: one grid per program position
    length_denominators: tuple[int, ...] | None = None  # numerical: one per length 1..max_len
    end_denominators: tuple[int, ...] | None = None  # numerical: one per n - 1 - i, 0..max_len-1
    # program positions a per-length or from-the-end grid decodes as ints (format version 6)
    int_positions: tuple[int, ...] = ()
    # per input length n, n flags: "i" a whole number decodes as an int at that position, "f" as
    # a float, "." as the values or grid say (format version 7)
    whole_types: tuple[str, ...] = ()
    # a tracr program's output: its strings that start with "\x00" are boxed tuples or lists,
    # which the tools unbox (rasp.tracr.boxes); without it every string is the program's own
    tuples: bool = False
    # numerical: the certificate's largest float32 error of the logit at any state the program
    # reaches (its decoder check's max_bound); a logit farther than this from every value the
    # output can take is undecided. None: the file certifies none (then none is found undecided)
    error_bound: float | None = None
    # numerical, listed values: the listed number that decodes as None, a number standing in for
    # tracr's None in the model (format version 9); None: every listed number is itself
    none_at: float | None = None
    # numerical: one grid per (program position i, input length n), at n (n - 1) / 2 + i
    # (format version 10)
    pair_denominators: tuple[int, ...] | None = None

    def decode(self, logits: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Decode `logits [batch, pos, d_vocab_out]` at model positions 1..n of each input."""
        at_tokens = np.asarray(logits)[
            :, 1 : 1 + max(lengths, default=0)
        ]  # [batch, n, d_vocab_out]
        if self.encoding is OutputEncoding.CATEGORICAL:
            real = np.arange(at_tokens.shape[1]) < np.asarray(lengths)[:, None]  # [batch, n]
            # argmax would silently pick a NaN column; padding positions mean nothing
            if (~np.isfinite(at_tokens).all(axis=-1) & real).any():
                raise self._non_finite(None)
            return self.from_columns(at_tokens.argmax(axis=-1), lengths)
        return self.from_numbers(at_tokens[..., 0].astype(np.float64), lengths)

    def from_columns(self, columns: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Categorical: `columns [batch, n]` (the argmax logit column at program positions)."""
        return self.values_of(columns, lengths)

    def from_numbers(self, numbers: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Numerical: `numbers [batch, n]` (float64 logit column 0 at program positions)."""
        real = np.arange(numbers.shape[1]) < np.asarray(lengths)[:, None]  # [batch, n]
        bad = ~np.isfinite(numbers) & real
        if bad.any():
            raise self._non_finite(float(numbers[bad][0]))  # row-major: the first bad one
        return self.values_of(self._numpy_codes(numbers, np.asarray(lengths)), lengths)

    def _numpy_codes(self, numbers: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """`reduce`'s numerical codes, in numpy; `lengths [batch]` pick per-length grids."""
        if self.values is not None:
            return self._nearest(numbers)
        if self.has_grid:
            return np.rint(numbers * self.grid_rows(lengths, numbers.shape[1]))  # k of k / d
        if self.type is OutputType.INTS:
            return np.rint(numbers)  # half to even, like round()
        if self.type is OutputType.BOOLS:
            return (numbers > 0.5).astype(np.float64)
        return numbers

    # -- codes: the decoded output as numbers, computed where the logits are --------------------

    @property
    def codes_are_indices(self) -> bool:
        """Whether codes index `values` (categorical, or numerical snapping to listed values);
        otherwise they are the numbers themselves (float64)."""
        return self.values is not None

    def reduce(self, at_tokens: Tensor, real: Tensor, find_undecided: bool = True) -> DeviceCodes:
        """`at_tokens [batch, n, d_vocab_out]` -> codes `[batch, n]` on the same device, with no
        host synchronisation (so batches queue up on a GPU); `real [batch, n]` marks the positions
        whose outputs must be finite (padding's may be anything). Check the result with `check`
        before using it.

        Codes: categorical, the argmax column k (int64; the value is `values[k]`); numerical with
        listed values, the index of the nearest one (int64); otherwise float64: with a grid, the
        whole k of k / d (d of the position, of the input's length or of the distance from its end;
        the length is the count of real positions); `ints` rounded half to even, `bools` 1.0 where
        `logit > 0.5` else 0.0, `floats` the logit. `find_undecided`: mark the undecided
        positions (`DeviceCodes.undecided`: tied categorical ones, numerical ones off every value
        by more than `error_bound`; transformer/ties.py), a pass over the logits that the default
        decoding of unhooked runs never reads.
        """
        import torch

        if at_tokens.device.type == "cpu" and at_tokens.dtype in (torch.float32, torch.float64):
            # numpy on the CPU: single-threaded, where torch's small elementwise kernels can stall
            # for their thread pool on a busy machine (100x slower measured on 2 loaded cores)
            return self._reduce_numpy(at_tokens, real.numpy(), find_undecided)
        return self._reduce_torch(at_tokens, real, find_undecided)

    def _reduce_torch(
        self, at_tokens: Tensor, real: Tensor, find_undecided: bool = True
    ) -> DeviceCodes:
        import torch

        if self.encoding is OutputEncoding.CATEGORICAL:
            # argmax would silently pick a NaN column; padding positions mean nothing (a batch
            # mixing lengths decodes as its inputs one by one)
            bad = (~torch.isfinite(at_tokens).all(dim=-1) & real).any()
            tied = tied_torch(at_tokens, real) if find_undecided else None
            return DeviceCodes(at_tokens.argmax(dim=-1), bad, None, tied, at_tokens)
        numbers = at_tokens[..., 0].double()  # [batch, n]; float64 holds float32 logits exactly
        bad_at = ~torch.isfinite(numbers) & real  # [batch, n]
        # argmax returns the first maximum: the first bad number in row-major order
        first = torch.take(numbers, bad_at.flatten().to(torch.int32).argmax())  # no host sync
        d = None
        if self.values is not None:
            codes = self._nearest_on(numbers)
        elif self.has_grid:
            positions = torch.arange(numbers.shape[1], device=numbers.device)
            at = self.grid_index(real.sum(dim=1), positions)  # lengths: the real positions
            d = self.grid_on(numbers.device)[at]
            codes = torch.round(numbers * d)
        elif self.type is OutputType.INTS:
            codes = torch.round(numbers)  # half to even, like np.rint and round()
        elif self.type is OutputType.BOOLS:
            codes = (numbers > 0.5).double()
        else:
            codes = numbers
        if not (find_undecided and self._checks_values):
            return DeviceCodes(codes, bad_at.any(), first)
        if self.values is not None:
            nearest = self._snap.on(numbers.device)[3][codes]
        else:
            nearest = codes if d is None else codes / d
        tolerance = self._tolerance(nearest.abs(), torch.clamp_min)
        off = ((numbers - nearest).abs() > tolerance) & real
        return DeviceCodes(codes, bad_at.any(), first, off, numbers, nearest)

    def _reduce_numpy(
        self, logits: Tensor, real: np.ndarray, find_undecided: bool = True
    ) -> DeviceCodes:
        import torch

        at_tokens = logits.numpy()  # [batch, n, d_vocab_out], a view
        if self.encoding is OutputEncoding.CATEGORICAL:
            bad = bool((~np.isfinite(at_tokens).all(axis=-1) & real).any())  # as _reduce_torch
            tied = torch.from_numpy(tied_numpy(at_tokens, real)) if find_undecided else None
            codes = torch.from_numpy(at_tokens.argmax(axis=-1))
            return DeviceCodes(codes, torch.tensor(bad), None, tied, logits)
        numbers = at_tokens[..., 0].astype(np.float64)  # [batch, n]
        bad_at = ~np.isfinite(numbers) & real  # [batch, n]
        first = numbers[bad_at][0] if bad_at.any() else 0.0  # row-major: the first bad one
        lengths = real.sum(axis=1)
        codes = self._numpy_codes(numbers, lengths)
        bad, first_bad = torch.tensor(bool(bad_at.any())), torch.tensor(first, dtype=torch.float64)
        if not (find_undecided and self._checks_values):
            return DeviceCodes(torch.from_numpy(codes), bad, first_bad)
        if self.values is not None:
            nearest = self._snap.numbers[codes]
        elif self.has_grid:
            nearest = codes / self.grid_rows(lengths, numbers.shape[1])
        else:
            nearest = codes
        tolerance = self._tolerance(np.abs(nearest), np.maximum)
        with np.errstate(invalid="ignore"):  # a padding position's inf - inf
            off = (np.abs(numbers - nearest) > tolerance) & real
        return DeviceCodes(
            torch.from_numpy(codes),
            bad,
            first_bad,
            torch.from_numpy(off),
            torch.from_numpy(numbers),
            torch.from_numpy(np.asarray(nearest, dtype=np.float64)),
        )

    @property
    def _checks_values(self) -> bool:
        """Whether a numerical logit can be told off every value: the file certifies an error
        bound and the output takes listed values, a grid's, whole numbers or bools (not any
        float)."""
        return self.error_bound is not None and (
            self.values is not None or self.has_grid or self.type is not OutputType.FLOATS
        )

    def _tolerance(self, size: Any, at_least: Any) -> Any:
        """How far a logit may lie from a value of magnitude `size` on an input the program has
        a value for: the certified bound, plus float64 noise in computing the value (the
        certifier's SNAP_NOISE, 1e-9 relative)."""
        return (self.error_bound or 0.0) + 1e-9 * at_least(size, 1.0)

    def check(
        self, reduced: DeviceCodes, inputs: Sequence[int] | None = None, ties: bool = False
    ) -> None:
        """Raise `ModelOutputError` if `reduce` read a non-finite logit, or (unless `ties`) an
        undecided position: row r is input `inputs[r]` (r where None) in its message (one host
        sync)."""
        import torch

        if reduced.undecided is None or ties:
            bad, undecided = bool(reduced.bad), False
        else:
            bad, undecided = torch.stack([reduced.bad, reduced.undecided.any()]).tolist()
        if bad:
            first = None if reduced.first_bad is None else float(reduced.first_bad)
            raise self._non_finite(first)
        if not undecided or reduced.undecided is None or reduced.logits is None:
            return
        mask = reduced.undecided.cpu().numpy()
        if reduced.nearest is None:
            raise tie_error(self.name, self.values or (), mask, reduced.logits, inputs)
        numbers, nearest = reduced.logits.cpu(), reduced.nearest.cpu()
        bound = self.error_bound or 0.0
        raise off_value_error(self.name, mask, numbers, nearest, bound, inputs)

    def values_of(self, codes: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Codes `[batch, n]` (see `reduce`) -> plain Python values, row b cut to `lengths[b]`."""
        if self.values is not None:
            if self._latin1_bytes is not None:  # one-character values: a str of one byte each
                return char_rows(self._latin1_bytes[codes], lengths)
            return rows(self.objects_of(codes, lengths), lengths)
        if self.has_grid:
            return self._on_grid(codes, lengths)
        if self.type is OutputType.INTS:
            if -(2.0**53) < codes.min(initial=0.0) and codes.max(initial=0.0) < 2.0**53:
                return rows(codes.astype(np.int64), lengths)
            return [[int(x) for x in row[:n]] for row, n in zip(codes, lengths, strict=True)]
        if self.type is OutputType.BOOLS:
            return rows(codes != 0, lengths)
        return rows(codes.astype(np.float64, copy=False), lengths)

    def objects_of(self, codes: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
        """Index codes `[batch, n]` -> an object array of the listed values (indexing and
        `.tolist()` only copy references), each whole number typed as `whole_types` says."""
        chosen = self._value_object_array[codes]  # [batch, n]
        if self.whole_types:
            chosen = self._retyped(chosen, self._listed_kinds[codes], lengths)
        return chosen

    def _non_finite(self, number: float | None) -> ModelOutputError:
        if number is None:
            return ModelOutputError(f"the model computed NaN or infinite logits for '{self.name}'")
        return ModelOutputError(f"the model computed {number} for output '{self.name}'")

    # -- output grids: denominators per position, per length or from the end ------------------------

    @property
    def has_grid(self) -> bool:
        return any(
            grid is not None
            for grid in (
                self.denominators,
                self.length_denominators,
                self.end_denominators,
                self.pair_denominators,
            )
        )

    @cached_property
    def _grid(self) -> np.ndarray:
        """float64 denominators: `[max_len]` by position; `[max_len + 1]` by length or from the
        end, whose entry 0 (an empty input, a padding position) is 1 and entry j + 1 the file's j;
        per (position, length) `[(max_len + 1) * max_len]`, row n holding length n's positions (1
        past them, and in row 0)."""
        if self.pair_denominators is not None:
            return pair_table(self.pair_denominators)
        for shifted in (self.length_denominators, self.end_denominators):
            if shifted is not None:
                return np.array((1, *shifted), dtype=np.float64)
        return np.array(self.denominators or (), dtype=np.float64)

    def grid_rows(self, lengths: np.ndarray, n: int) -> np.ndarray:
        """The denominators of `[batch, n]` program positions (broadcast against the codes)."""
        return self._grid[self.grid_index(np.asarray(lengths, dtype=np.int64), np.arange(n))]

    def grid_index(self, lengths: Any, positions: Any) -> Any:
        """Where `[batch, n]` positions read `_grid`, for the inputs' `lengths [batch]` and the
        program `positions [n]` (numpy arrays or torch tensors alike): `[1, n]` by position,
        `[batch, 1]` by length, `[batch, n]` from the end (n - i, 0 for padding past the end) or
        per (position, length)."""
        if self.pair_denominators is not None:
            return lengths[:, None] * pair_width(self.pair_denominators) + positions[None, :]
        if self.length_denominators is not None:
            return lengths[:, None]
        if self.end_denominators is not None:
            k = lengths[:, None] - positions[None, :]
            return k * (k > 0)
        return positions[None, :]

    def grid_on(self, device: torch.device) -> Tensor:
        import torch

        tables = self._device_grids
        if device not in tables:  # copied once per device, not per batch
            tables[device] = torch.from_numpy(self._grid).to(device)
        return tables[device]

    @cached_property
    def _device_grids(self) -> dict[torch.device, Tensor]:
        return {}

    def _on_grid(self, codes: np.ndarray, lengths: Sequence[int]) -> list[list[Atom]]:
        """Codes k `[batch, n]` -> rows of k / d (`decoded_rows.grid_rows_of`)."""
        d = self.grid_rows(np.asarray(lengths), codes.shape[1])  # broadcasts to [batch, n]
        flags = self._flags_at(lengths, codes.shape[1]) if self.whole_types else None
        return grid_rows_of(codes, d, lengths, self.int_positions, flags)

    # -- snapping to the listed values -------------------------------------------------------------

    @cached_property
    def _snap(self) -> SnapTable:
        return SnapTable.of(self.values or ())

    def _nearest(self, numbers: np.ndarray) -> np.ndarray:
        """Index into `values` of the nearest listed value to each number (transformer/snapping.py
        says which where two are as near)."""
        return self._snap.nearest(numbers)

    def _nearest_on(self, numbers: Tensor) -> Tensor:
        """`_nearest` in torch, on the numbers' device."""
        return self._snap.nearest_on(numbers)

    @cached_property
    def _latin1_bytes(self) -> np.ndarray | None:
        """`[len(values)]` uint8: each value's character, where every value is a one-character
        str of code point < 256 (then a row decodes as one str); else None."""
        values = self.values or ()
        if not values or not all(type(v) is str and len(v) == 1 and ord(v) < 256 for v in values):
            return None
        return np.array([ord(v) for v in values], dtype=np.uint8)  # type: ignore[arg-type]

    # -- a whole number's type per length and position (`whole_types`) ----------------------------

    @cached_property
    def _type_flags(self) -> np.ndarray:
        return type_flags(self.whole_types)

    def _flags_at(self, lengths: Sequence[int], n: int) -> np.ndarray:
        """The flags of `[batch, n]` program positions, for the inputs' lengths."""
        return self._type_flags[np.asarray(lengths, dtype=np.int64)][:, :n]

    @cached_property
    def _listed_kinds(self) -> np.ndarray:
        return listed_kinds(self._value_object_array)

    def _retyped(self, chosen: np.ndarray, kinds: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
        return retyped(chosen, kinds, self._flags_at(lengths, chosen.shape[1]))

    @cached_property
    def _value_object_array(self) -> np.ndarray:
        array = np.empty(len(self.values or ()), dtype=object)
        at = self.none_at
        array[:] = [
            None if at is not None and type(v) is not bool and v == at else v
            for v in self.values or ()
        ]
        return array


@dataclass(frozen=True)
class DeviceCodes:
    """`OutputSpec.reduce`'s result, still on the logits' device."""

    codes: Tensor  # [batch, n]
    bad: Tensor  # 0-dim bool: a non-finite logit was read
    first_bad: Tensor | None  # 0-dim float64, numerical only: the first non-finite number
    # where asked for: [batch, n] bool, the undecided real positions (transformer/ties.py), and
    # the logits that name them: categorical [batch, n, d_vocab_out] (a reference), numerical
    # the numbers [batch, n] (float64) beside the nearest value each can take (`nearest`)
    undecided: Tensor | None = None
    logits: Tensor | None = None
    nearest: Tensor | None = None

"""Arrays in, arrays out: the encoding and decoding of `CompiledTransformer.run_array`.

Inputs of one length arrive as a numpy array `[batch, n]` of tokens and leave as a numpy array
`[batch, n]` of the output's values. Both lookups run where the model is: the host only views the
tokens as integer keys (one-character strs as their code points, without a copy) and reads back
the finished values, so on a GPU `run_array` costs little more than `run_ids` (docs/runtime.md).

The output array's dtype follows from the file's output entry alone, never from the values a batch
happens to hold, so one model always returns one dtype (`output_dtype`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from transformer.decoding import OutputSpec, OutputType
from transformer.errors import ModelInputError, ModelOutputError
from transformer.vocab import Atom, Vocab, row_atoms, show_token, token_key

if TYPE_CHECKING:  # torch is imported where a model runs (see decoding.py)
    import torch
    from torch import Tensor

_EXACT_IN_FLOAT64 = 2**53  # ints up to this size are floats without rounding
_INT64 = 2**63
# integer dtypes whose arrays torch takes as they are (its other unsigned ints have few kernels)
_TORCH_INTS = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8))


def output_dtype(output: OutputSpec) -> np.dtype:
    """The dtype `run_array` returns for `output`.

    Listed values: `str` (as wide as the longest value) when all are strs, `bool` when all are
    bools, `int64` when all are ints (and no `whole_types` makes one a float), `float64` when all
    are numbers that float64 holds exactly;
    `object` (the values `run` gives, as they are) otherwise. Without listed values: `float64` on a
    grid (k / d) and for `floats`, `int64` for `ints`, `bool` for `bools`.
    """
    values = output.values
    if output.none_at is not None:
        return np.dtype(object)  # None beside numbers
    if values is not None:
        kinds = {type(v) for v in values}
        if kinds == {str} and not any(str(v).endswith("\x00") for v in values):
            # (numpy strs drop trailing NULs: "a\x00" would come back as "a")
            return np.dtype(f"U{max([1, *(len(str(v)) for v in values)])}")
        if kinds == {bool}:
            return np.dtype(bool)
        # `whole_types` can make a listed int a float at some positions: then float64
        if kinds == {int} and not output.whole_types and _in_int64(values):
            return np.dtype(np.int64)
        if kinds <= {int, float} and all(
            type(v) is float or abs(v) <= _EXACT_IN_FLOAT64  # type: ignore[arg-type]
            for v in values
        ):
            return np.dtype(np.float64)
        return np.dtype(object)
    if output.has_grid or output.type is OutputType.FLOATS:
        return np.dtype(np.float64)
    if output.type is OutputType.INTS:
        return np.dtype(np.int64)
    if output.type is OutputType.BOOLS:
        return np.dtype(bool)
    return np.dtype(object)


def _one_length_hint(n: int, row: int, length: int, padding: str) -> str:
    """The hint for an array whose row `row` holds an input of `length` tokens, then
    `padding` to the array's width `n`."""
    tokens = "token" if length == 1 else "tokens"
    return (
        f"run_array runs inputs of one length, {n} tokens each here, and input {row} reads as "
        f"{length} {tokens} {padding}: give each input's length (run_array(tokens, "
        "lengths=...), which ignores the tokens past it), or inputs of several lengths to run"
    )


def _in_int64(values: tuple[Atom, ...]) -> bool:
    return all(-_INT64 <= v < _INT64 for v in values)  # type: ignore[operator]


@dataclass(frozen=True)
class ArrayCodec:
    """Token arrays -> ids and output codes -> value arrays for one model."""

    vocab: Vocab
    output: OutputSpec

    @cached_property
    def dtype(self) -> np.dtype:
        return output_dtype(self.output)

    # -- tokens -> ids ----------------------------------------------------------------------------

    def check(self, tokens: object, lengths: list[int] | None = None) -> np.ndarray:
        """`tokens` if it is a `[batch, n]` array with 1 <= n <= max_len, else the error; with
        `lengths` (checked), masked entries past a row's length are taken (their data is never
        read)."""
        if not isinstance(tokens, np.ndarray):
            raise ModelInputError(
                f"run_array takes a numpy array [batch, n] of tokens, got {type(tokens).__name__}"
                " (run takes lists of inputs)"
            )
        if isinstance(tokens, np.ma.MaskedArray):
            # `.data` holds whatever lies under a masked entry: `run(tokens.tolist())` sees None
            mask = np.ma.getmaskarray(tokens)
            if lengths is not None and tokens.ndim == 2 and len(lengths) == len(tokens):
                mask = mask & (np.arange(tokens.shape[1]) < np.asarray(lengths)[:, None])
            masked = np.argwhere(mask)
            if len(masked) and tokens.ndim == 2:
                b, i = masked[0].tolist()
                tail = lengths is None and bool(mask[b, i:].all())
                hint = (
                    _one_length_hint(tokens.shape[1], b, i, "then masked entries") if tail else ""
                )
                raise ModelInputError(
                    f"the token at position {i} of input {b} is masked; run_array takes no masked "
                    "tokens (tokens.filled(...) gives them a value)",
                    hint,
                )
            tokens = np.ma.getdata(tokens)
        if tokens.ndim != 2:
            raise ModelInputError(
                f"run_array takes a numpy array [batch, n] of tokens, one input per row, got shape "
                f'{list(tokens.shape)} (one input "abc" is np.array([list("abc")]))'
            )
        n, max_len = tokens.shape[1], self.vocab.max_len
        if not 1 <= n <= max_len:
            raise ModelInputError(
                f"the inputs hold {n} tokens each; this model runs on 1 to {max_len} tokens"
            )
        return tokens

    def encode(
        self, tokens: np.ndarray, device: torch.device, lengths: np.ndarray | None = None
    ) -> Tensor:
        """Ids `[batch, 1 + n]` on `device` (BOS, then the tokens) for checked `tokens`; with
        `lengths` (checked, each 1..n), PAD past each row's length, whatever the tokens there."""
        import torch

        keyed = self._keys(tokens)
        if keyed is not None:
            keys, which = keyed
            past = None
            if lengths is not None:  # padding may be any token: looked up as a known one
                past = np.arange(tokens.shape[1]) >= lengths[:, None]  # [batch, n]
                if past.any() and len(self._tables[which][0]):
                    keys = np.where(past, self._tables[which][0][0], keys)  # int64
            ids = self._lookup(keys, which, device)
            if ids is not None:
                if past is not None:
                    ids[:, 1:][torch.from_numpy(past).to(device)] = self.vocab.pad_id
                return ids
        # Every other dtype (object, float, bool, wider strs) and every unknown token go through
        # the per-token path, which names the first bad token exactly as `run` does.
        if lengths is not None:  # each row cut to its length: PAD past it
            ids_array, _ = self.vocab.encode(
                [row[:n] for row, n in zip(tokens, lengths.tolist(), strict=True)]
            )
            return torch.from_numpy(ids_array).to(device)
        try:
            ids_array, _ = self.vocab.encode(list(tokens))
        except ModelInputError as err:
            padded = None if err.hint else self._padded(tokens)
            if padded is None:
                raise
            raise ModelInputError(err.reason, _one_length_hint(tokens.shape[1], *padded)) from None
        return torch.from_numpy(ids_array).to(device)

    def _padded(self, tokens: np.ndarray) -> tuple[int, int, str] | None:
        """(row, length, how it is padded) where the first row holding a token outside the
        vocabulary reads as a shorter input padded to the array's width: vocabulary tokens, then
        one token outside it repeated to the row's end, beside an input as wide as the array;
        else None."""
        rows = [row_atoms(tokens[b]) for b in range(tokens.shape[0])]
        known = [[self.vocab.id_of(token) is not None for token in row] for row in rows]
        if not any(all(row) for row in known):  # no input fills the width: a typo, not padding
            return None
        b = next(b for b, row in enumerate(known) if not all(row))
        length = known[b].index(False)
        if length == 0 or any(known[b][length:]):
            return None
        if len({token_key(token) for token in rows[b][length:]}) != 1:
            return None
        return b, length, f"padded with {show_token(rows[b][length])}"

    def _keys(self, tokens: np.ndarray) -> tuple[np.ndarray, str] | None:
        """Integer keys `[batch, n]` of the tokens and which table they look up, or None."""
        kind = tokens.dtype.kind
        if kind == "U" and tokens.dtype.itemsize == 4:  # one character (or none) per token
            # native-order one-character strs are their code points as int32: a view, no copy
            codes = np.ascontiguousarray(tokens, dtype=np.dtype("U1")).view(np.int32)
            return codes, "chars"
        if kind == "i" or (kind == "u" and (tokens.size == 0 or int(tokens.max()) < _INT64)):
            # torch.from_numpy takes neither negative strides nor a non-native byte order, and
            # searchsorted copies a non-contiguous input: C order, native, and int64 unless
            # torch's own int types (a copy only for such arrays)
            native = tokens.dtype.newbyteorder("=")
            if native not in _TORCH_INTS:
                native = np.dtype(np.int64)
            return np.ascontiguousarray(tokens, dtype=native), "ints"
        return None

    @cached_property
    def _tables(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Sorted int64 keys and their ids: one-character strs by code point, and ints."""
        tables = self.vocab.tables
        # code point 0 is how numpy stores "" (and a NUL it cannot tell from ""): never matched
        # here, so such a token takes the per-token path and its message
        chars = tables.char_codes != 0
        return {
            "chars": (tables.char_codes[chars], tables.char_ids[chars]),
            "ints": (tables.int_values, tables.int_ids),
        }

    @cached_property
    def _device_tables(self) -> dict[tuple[str, torch.device], tuple[Tensor, Tensor]]:
        return {}

    def _lookup(self, keys: np.ndarray, which: str, device: torch.device) -> Tensor | None:
        """Ids `[batch, 1 + n]` on `device`, or None when a key is no vocabulary entry."""
        import torch

        sorted_keys, ids = self._tables[which]
        if len(sorted_keys) == 0:
            return None
        bos = self.vocab.bos_id
        if device.type == "cpu":  # numpy: see OutputSpec.reduce on torch's CPU kernels
            found = self.vocab.tables.lookup(keys.astype(np.int64, copy=False), sorted_keys, ids)
            if found is None:
                return None
            out = np.empty((keys.shape[0], 1 + keys.shape[1]), dtype=np.int64)  # [batch, pos]
            out[:, 0], out[:, 1:] = bos, found
            return torch.from_numpy(out)
        return self._lookup_torch(keys, which, device)

    def _lookup_torch(self, keys: np.ndarray, which: str, device: torch.device) -> Tensor | None:
        """`_lookup` in torch on `device` (a GPU's; tests run it on the CPU too)."""
        import torch

        sorted_keys, ids = self._tables[which]
        bos = self.vocab.bos_id
        tables = self._device_tables
        if (which, device) not in tables:  # copied once per device, not per call
            tables[which, device] = (
                torch.from_numpy(sorted_keys).to(device),
                torch.from_numpy(ids).to(device),
            )
        on_device, ids_on_device = tables[which, device]
        key_tensor = torch.from_numpy(keys).to(device).long()  # [batch, n]
        at = torch.searchsorted(on_device, key_tensor).clamp_(max=len(sorted_keys) - 1)
        if not bool((on_device[at] == key_tensor).all()):  # one host synchronisation
            return None
        first = torch.full((keys.shape[0], 1), bos, dtype=torch.int64, device=device)
        return torch.cat([first, ids_on_device[at]], dim=1)

    # -- codes -> values --------------------------------------------------------------------------

    def values(self, codes: Tensor) -> np.ndarray:
        """The values `[batch, n]` (of `dtype`) of `run_ids`'s checked codes for full rows."""
        import torch

        output, dtype = self.output, self.dtype
        rows, n = codes.shape
        if output.values is not None:  # codes index the listed values
            if dtype.kind in "biuf" or dtype == np.dtype("U1"):
                return self._listed_on(codes.device)[codes].cpu().numpy().view(dtype)
            at = codes.cpu().numpy()
            if dtype.kind == "U":
                return self._listed[at]
            return output.objects_of(at, [n] * rows)
        if output.has_grid:  # codes are k of k / d
            lengths = torch.full((rows,), n, dtype=torch.int64, device=codes.device)
            positions = torch.arange(n, device=codes.device)
            grid = output.grid_on(codes.device)[output.grid_index(lengths, positions)]
            quotients = codes / grid
            # (not where `whole_types` says "f" at this length: run gives the float there)
            floats = output.whole_types[n - 1] if output.whole_types else ""
            flagged = [i for i in output.int_positions if i < n and floats[i : i + 1] != "f"]
            if flagged:  # run gives the int nearest k / d there (whole in a certified model)
                quotients[:, flagged] = torch.round(quotients[:, flagged])
            return quotients.cpu().numpy()
        if output.type is OutputType.INTS:
            # (-2**63 is an int64: not the absolute value)
            if codes.numel() and bool(((codes >= _INT64) | (codes < -_INT64)).any()):
                raise ModelOutputError(
                    f"output '{output.name}' holds a whole number beyond int64; run gives it as a "
                    "Python int"
                )
            return codes.to(torch.int64).cpu().numpy()
        if output.type is OutputType.BOOLS:
            return (codes != 0).cpu().numpy()
        return codes.cpu().numpy()

    @cached_property
    def _listed(self) -> np.ndarray:
        """The listed values as an array of `dtype`; one-character strs as int32 code points
        (`values` views the looked-up codes as `U1`)."""
        values: tuple[Atom, ...] = self.output.values or ()
        if self.dtype == np.dtype("U1"):
            return np.array([ord(v) if v else 0 for v in values], dtype=np.int32)  # type: ignore[arg-type]
        return np.array(values, dtype=self.dtype)

    @cached_property
    def _device_listed(self) -> dict[torch.device, Tensor]:
        return {}

    def _listed_on(self, device: torch.device) -> Tensor:
        import torch

        tables = self._device_listed
        if device not in tables:
            tables[device] = torch.from_numpy(self._listed).to(device)
        return tables[device]

"""Input tokens -> model ids: BOS at position 0, the tokens at 1..n, PAD on the right.

Tokens are JSON atoms and match a vocabulary entry by JSON type and value, so `1`, `1.0`, `True`
and `"1"` are four different tokens (Python's own `1 == True == 1.0` would merge them).
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from transformer.errors import ModelInputError

Atom = str | int | float | bool | None
TokenKey = tuple[str, Atom]


def token_key(value: object) -> TokenKey | None:
    """A hashable key, equal only for tokens of the same JSON type and value (None: not an atom)."""
    if value is None:
        return ("null", None)
    if isinstance(value, bool | np.bool_):
        return ("bool", bool(value))
    if isinstance(value, numbers.Integral):
        return ("int", int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if number == 0.0 and math.copysign(1.0, number) < 0:
            # -0.0 == 0.0, but `tokens_str` reads "-0.0" and "0.0": a model of the vocabulary
            # [0.0, 1.0] took -0.0 as 0.0 and gave "0.0" where the interpreter gives "-0.0"
            return ("-0.0", number)
        return ("float", number)
    if isinstance(value, str):
        return ("str", value)
    return None


def show_token(value: object) -> str:
    """A token as the user would write it in a JSON input list."""
    key = token_key(value)
    return repr(value) if key is None else json.dumps(key[1], ensure_ascii=False)


_MAX_CODE_POINT = 0x10FFFF


@dataclass(frozen=True)
class BadCodePoints:
    """An entry of a numpy str array that no Python str can hold: numpy stores any 32-bit value as
    a character, and making a str of one past U+10FFFF is CPython's SystemError. It is a token
    like any other that is not in the vocabulary, shown by its code points."""

    codes: tuple[int, ...]

    def __repr__(self) -> str:
        shown = " ".join(f"U+{code:04X}" for code in self.codes)
        return f"<{shown}: not a Unicode string>"


def row_atoms(row: np.ndarray) -> list[object]:
    """The tokens of a 1-D array as Python atoms (`tolist()`), an entry holding an invalid code
    point as a `BadCodePoints` (unknown to every vocabulary) instead of CPython's SystemError."""
    if row.dtype.kind != "U" or row.dtype.itemsize == 0:
        return row.tolist()
    # [n, characters]: the code points, in the array's byte order; a negative int32 is a huge one
    order = row.dtype.byteorder if row.dtype.byteorder in "<>" else "="
    codes = np.frombuffer(row.tobytes(), dtype=np.dtype(np.uint32).newbyteorder(order))
    codes = codes.reshape(len(row), row.dtype.itemsize // 4)
    bad = (codes > _MAX_CODE_POINT).any(axis=1)
    if not bad.any():
        return row.tolist()
    atoms: list[object] = []
    for i, is_bad in enumerate(bad.tolist()):
        if is_bad:  # numpy drops trailing NULs, as tolist() would
            kept = np.trim_zeros(codes[i], "b").tolist()
            atoms.append(BadCodePoints(tuple(kept)))
        else:
            atoms.append(row[i : i + 1].tolist()[0])
    return atoms


@dataclass(frozen=True)
class Vocab:
    """The inputs a model accepts: `tokens[i]` has id `i`, BOS and PAD follow them, and an input
    holds 1 to `max_len` tokens."""

    tokens: tuple[Atom, ...]
    bos_id: int
    pad_id: int
    max_len: int
    _ids: dict[TokenKey, int] = field(init=False, repr=False, compare=False)
    # (Python type, value) -> id for the vocabulary's own atoms: one dict lookup per token on the
    # common path; anything else (numpy scalars, unknown tokens) goes through `token_key`.
    _fast: dict[tuple[type, Atom], int] = field(init=False, repr=False, compare=False)
    # numpy lookup tables for `_encode_vectorised`
    _tables: TokenTables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ids = {token_key(token): i for i, token in enumerate(self.tokens)}
        object.__setattr__(self, "_ids", ids)
        # (float zeros go through `token_key`: (float, -0.0) == (float, 0.0) as a dict key)
        fast = {
            (type(token), token): i
            for i, token in enumerate(self.tokens)
            if not (type(token) is float and token == 0.0)
        }
        object.__setattr__(self, "_fast", fast)
        object.__setattr__(self, "_tables", TokenTables.of(self.tokens))

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def tables(self) -> TokenTables:
        """The sorted lookup arrays of the vectorised encodes (`run` and `run_array`)."""
        return self._tables

    def id_of(self, token: object) -> int | None:
        key = token_key(token)
        return None if key is None else self._ids.get(key)

    def describe(self) -> str:
        return "[" + ", ".join(show_token(token) for token in self.tokens) + "]"

    def encode(self, inputs: Sequence[str | Sequence[Atom]]) -> tuple[np.ndarray, list[int]]:
        """Ids `[batch, 1 + longest]` (int64) and each input's length.

        A str input is split into one-character tokens; a list or tuple gives its elements.
        Raises `ModelInputError` for a bare string batch, an empty or too long input, or a token
        outside the vocabulary (naming the token, its position and the vocabulary).
        """
        if isinstance(inputs, str | bytes):
            raise ModelInputError(
                "expected a list of inputs, got one string; wrap it in a list: [input]"
            )
        if not isinstance(inputs, Sequence | np.ndarray):
            # a generator was used up before the loop below ("an empty batch"), a set has no order
            raise ModelInputError(
                f"expected a list of inputs, got {type(inputs).__name__}; pass list(...) of them"
            )
        if isinstance(inputs, np.ndarray) and inputs.ndim == 0:  # one value: no len, no rows
            raise ModelInputError(
                "expected a list of inputs, got a 0-d numpy array; wrap it in a list: "
                "[array.item()]"
            )
        fast = self._encode_vectorised(inputs)
        if fast is not None:
            return fast
        # The per-token path: anything the vectorised one does not cover, and every error (so each
        # message names the first bad token, its position and input exactly as always).
        rows: list[list[int]] = []
        for number, item in enumerate(inputs):
            rows.append(self._encode_one(item, number, len(inputs)))
        if not rows:
            raise ModelInputError("no inputs given (an empty batch)")
        lengths = [len(row) for row in rows]
        ids = np.full((len(rows), 1 + max(lengths)), self.pad_id, dtype=np.int64)  # [batch, pos]
        ids[:, 0] = self.bos_id
        for b, row in enumerate(rows):
            ids[b, 1 : 1 + len(row)] = row
        return ids, lengths

    def _encode_vectorised(
        self, inputs: Sequence[str | Sequence[Atom]]
    ) -> tuple[np.ndarray, list[int]] | None:
        """`encode` in a few numpy passes over the whole batch, or None where it would not give
        exactly the per-token path's ids (an unusual token type, a token outside the vocabulary, a
        bad input): the caller then takes that path, which also produces the error.

        Covered: str inputs, and lists, tuples or 1-D arrays whose tokens are all str (one-character
        vocabulary entries) or all plain ints. Matching keeps the JSON-type rule: a batch of str
        tokens can only match str entries, a batch of exact `int`s only int entries.
        """
        if not isinstance(inputs, list | tuple) or not inputs:
            return None
        tables = self._tables
        flat_ids: np.ndarray | None
        if all(type(item) is str for item in inputs):
            lengths = list(map(len, inputs))
            if not self._lengths_ok(lengths):
                return None
            flat_ids = tables.chars("".join(inputs))  # [total]
        else:
            rows: list[Sequence[object]] = []
            for item in inputs:
                if isinstance(item, str | list | tuple):
                    rows.append(item)
                elif isinstance(item, np.ndarray) and item.ndim == 1:
                    rows.append(row_atoms(item))  # numpy scalars -> Python atoms, as below
                else:
                    return None
            lengths = list(map(len, rows))
            if not self._lengths_ok(lengths):
                return None
            flat_ids = tables.tokens(rows)
        if flat_ids is None:
            return None
        width = max(lengths)
        ids = np.full((len(lengths), 1 + width), self.pad_id, dtype=np.int64)  # [batch, pos]
        ids[:, 0] = self.bos_id
        if min(lengths) == width:
            ids[:, 1:] = flat_ids.reshape(len(lengths), width)
        else:  # ragged: a boolean mask fills the real positions in row-major order
            real = np.arange(width) < np.asarray(lengths)[:, None]  # [batch, n]
            ids[:, 1:][real] = flat_ids
        return ids, lengths

    def _lengths_ok(self, lengths: list[int]) -> bool:
        return min(lengths) >= 1 and max(lengths) <= self.max_len

    def _encode_one(self, item: object, number: int, batch: int) -> list[int]:
        where = f"input {number}" if batch > 1 else "the input"
        if isinstance(item, str):
            tokens: list[object] = list(item)
        elif isinstance(item, list | tuple):
            tokens = list(item)
        elif isinstance(item, np.ndarray) and item.ndim == 1:
            tokens = row_atoms(item)  # numpy scalars -> Python atoms
        else:
            raise ModelInputError(
                f"{where} is of type {type(item).__name__}; give a string or a list of tokens"
            )
        if not tokens:
            raise ModelInputError(f"{where} is empty; a model runs on 1 to {self.max_len} tokens")
        if len(tokens) > self.max_len:
            raise ModelInputError(
                f"{where} has {len(tokens)} tokens; "
                f"this model was compiled for at most {self.max_len}"
            )
        fast = self._fast
        try:
            ids = [fast.get((type(token), token), -1) for token in tokens]
        except TypeError:  # an unhashable token (a list, a dict): no entry, named below
            ids = [-1] * len(tokens)
        if -1 not in ids:
            return ids
        for position, token in enumerate(tokens):
            token_id = self.id_of(token)
            ids[position] = -1 if token_id is None else token_id
            if token_id is None:
                raise ModelInputError(
                    f"token {show_token(token)} at position {position} of {where} is not in the "
                    f"model's vocabulary {self.describe()}",
                    self._other_type_hint(token, tokens),
                )
        return ids

    def _other_type_hint(self, token: object, tokens: list[object]) -> str:
        """Where the unknown `token` is a vocabulary entry written as another JSON kind (3 for
        "3", "3" for 3) and so is every other unknown token of the input: how to write it. None
        where some token is neither (`"314"` for [1, 2, 3]): the fix would be a guess."""
        entry = self._as_other_kind(token)
        if entry is None:
            return ""
        written: list[object] = []
        for t in tokens:
            other = None if self.id_of(t) is not None else self._as_other_kind(t)
            if self.id_of(t) is None and other is None:
                return ""
            written.append(t if other is None else other[0])
        listed = "[" + ", ".join(show_token(t) for t in written) + "]"
        kind = _kind(entry[0])
        return (
            f"the vocabulary holds the {kind} {show_token(entry[0])}, not the {_kind(token)} "
            f"{show_token(token)}: write the tokens as {kind}s, e.g. {listed}"
        )

    def _as_other_kind(self, token: object) -> tuple[object] | None:
        """The vocabulary entry that `token` names as another JSON kind, in a 1-tuple (an entry
        may be falsy): the string "3" for 3 (as JSON writes it), the number 3 for the string "3"."""
        key = token_key(token)
        if key is None or key[0] == "null":
            return None
        if key[0] == "str":
            try:
                value = json.loads(str(key[1]))
            except ValueError:
                return None
            if isinstance(value, str | list | dict) or value is None:
                return None
            return (value,) if self.id_of(value) is not None else None
        text = json.dumps(key[1])
        return (text,) if self.id_of(text) is not None else None


def _kind(token: object) -> str:
    """A token's JSON kind in a hint's words."""
    key = token_key(token)
    if key is None:
        return "token"
    return {"str": "string", "bool": "boolean", "null": "null"}.get(key[0], "number")


@dataclass(frozen=True)
class TokenTables:
    """Lookup arrays for the vectorised encode: one-character str entries by code point, and int
    entries sorted (bools are not ints here: they are their own JSON kind)."""

    char_codes: np.ndarray  # [k] sorted code points of the one-character str entries
    char_ids: np.ndarray  # [k] their ids
    # [max code + 1] int32 id per code point, -1 where none (small alphabets)
    dense: np.ndarray | None
    separator: str  # one character that is no entry: it separates tokens in `tokens`' check
    int_values: np.ndarray  # [m] sorted int entries that fit int64
    int_ids: np.ndarray  # [m]

    @staticmethod
    def of(tokens: Sequence[Atom]) -> TokenTables:
        chars = sorted((ord(t), i) for i, t in enumerate(tokens) if type(t) is str and len(t) == 1)
        codes = np.array([c for c, _ in chars], dtype=np.int64)
        char_ids = np.array([i for _, i in chars], dtype=np.int64)
        dense = None
        if chars and chars[-1][0] < 1 << 16:
            # int32: indexing it makes a [total] array half as large as int64 ids would, and
            # fresh pages are most of the cost of a pass over a large batch
            dense = np.full(chars[-1][0] + 1, -1, dtype=np.int32)
            dense[codes] = char_ids
        ints = sorted(
            (t, i) for i, t in enumerate(tokens) if type(t) is int and -(2**63) <= t < 2**63
        )
        return TokenTables(
            char_codes=codes,
            char_ids=char_ids,
            dense=dense,
            separator=chr(min(set(range(len(chars) + 1)) - {c for c, _ in chars})),
            int_values=np.array([t for t, _ in ints], dtype=np.int64),
            int_ids=np.array([i for _, i in ints], dtype=np.int64),
        )

    def chars(self, text: str) -> np.ndarray | None:
        """Ids of the characters of `text` `[len(text)]`, or None if one is not an entry."""
        if text.isascii():  # a flag of the str, not a pass over it; then one byte per character
            codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        else:
            # UTF-32 gives one code point per 4 bytes; surrogatepass keeps lone surrogates (which a
            # Python str may hold) as their own code points instead of failing.
            codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        dense = self.dense
        if dense is not None and codes.max(initial=0) < len(dense):
            found = dense[codes]  # code points are unsigned: no lower bound to check
            return None if (found < 0).any() else found
        return self.lookup(codes.astype(np.int64), self.char_codes, self.char_ids)

    def tokens(self, rows: list[Sequence[object]]) -> np.ndarray | None:
        """Ids of the rows' tokens, concatenated, or None (an uncovered type or unknown token)."""
        sep = self.separator
        try:
            text = sep.join(map(sep.join, rows))  # TypeError: not all str (a str row: its chars)
        except TypeError:
            text = None
        if text is not None:
            # With T tokens, `text` holds T - 1 joins. If it has 2T - 1 characters and none of
            # the T at even positions is a separator (no entry, so `chars` refuses one), the
            # joins are all its separators: no token holds one, the joins sit at the odd
            # positions, and each token is the one character between two of them. ("" and "ab"
            # could pair up to the right total length without separators.)
            if len(text) != 2 * sum(map(len, rows)) - 1:
                return None
            return self.chars(text[0::2])
        flat = list(itertools.chain.from_iterable(rows))
        if set(map(type, flat)) == {int}:  # exact ints: bools and numpy scalars are not here
            try:
                values = np.array(flat, dtype=np.int64)
            except OverflowError:
                return None
            return self.lookup(values, self.int_values, self.int_ids)
        return None

    @staticmethod
    def lookup(keys: np.ndarray, sorted_keys: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
        if len(sorted_keys) == 0:
            return None
        at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
        if not (sorted_keys[at] == keys).all():
            return None
        return ids[at]

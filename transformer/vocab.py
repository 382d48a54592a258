"""Input tokens -> model ids: BOS at position 0, the tokens at 1..n, PAD on the right.

Tokens are JSON atoms and match a vocabulary entry by JSON type and value, so `1`, `1.0`, `True`
and `"1"` are four different tokens (Python's own `1 == True == 1.0` would merge them).
"""

from __future__ import annotations

import json
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
        return ("float", float(value))
    if isinstance(value, str):
        return ("str", value)
    return None


def show_token(value: object) -> str:
    """A token as the user would write it in a JSON input list."""
    key = token_key(value)
    return repr(value) if key is None else json.dumps(key[1], ensure_ascii=False)


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

    def __post_init__(self) -> None:
        ids = {token_key(token): i for i, token in enumerate(self.tokens)}
        object.__setattr__(self, "_ids", ids)
        fast = {(type(token), token): i for i, token in enumerate(self.tokens)}
        object.__setattr__(self, "_fast", fast)

    def __len__(self) -> int:
        return len(self.tokens)

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

    def _encode_one(self, item: object, number: int, batch: int) -> list[int]:
        where = f"input {number}" if batch > 1 else "the input"
        if isinstance(item, str):
            tokens: list[object] = list(item)
        elif isinstance(item, list | tuple):
            tokens = list(item)
        elif isinstance(item, np.ndarray) and item.ndim == 1:
            tokens = item.tolist()  # numpy scalars -> Python atoms
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
        ids = [fast.get((type(token), token), -1) for token in tokens]
        if -1 not in ids:
            return ids
        for position, token in enumerate(tokens):
            token_id = self.id_of(token)
            ids[position] = -1 if token_id is None else token_id
            if token_id is None:
                raise ModelInputError(
                    f"token {show_token(token)} at position {position} of {where} is not in the "
                    f"model's vocabulary {self.describe()}"
                )
        return ids

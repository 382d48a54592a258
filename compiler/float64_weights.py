"""The certifier's float64 reading of a model's float32 weights, one layer at a time.

The walk reads the layers in order, and a float64 copy of a float32 number is exact: converting
on access gives the very values a copy of the whole model would, without holding every layer in
float64 at once (a model of 5,000 residual dims and a 4,096-wide head is 0.7 GB a layer in
float64). The arrays of the block last read are kept, since a layer's checks read them several
times; reading another block drops them. A layer's attention tensors and its MLP's W_in and W_out
are read as `stored` (float32) arrays instead: the certifier converts each head's own columns alone
(`compiler.head_slices`) and each MLP part's own units (`compiler.certify_mlp`: the widest fuzz
models' W_in and W_out, 5,192 x 5,121 and more, are 0.2 to 0.4 GB each in float64).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np


class Float64Weights(Mapping[str, np.ndarray]):
    """`weights` (a model's tensors by name) read as float64 arrays, converted when read."""

    def __init__(self, weights: Mapping[str, np.ndarray]) -> None:
        self._weights = weights
        self._block = ""  # the block ("blocks.3.", "embed.") whose converted arrays are kept
        self._kept: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        found = self._kept.get(key)
        if found is not None:
            return found
        value = np.asarray(self._weights[key], dtype=np.float64)
        block = _block(key)
        if block != self._block:
            self._block, self._kept = block, {}
        self._kept[key] = value
        return value

    def stored(self, key: str) -> np.ndarray:
        """The tensor as the model holds it (float32), unconverted and not kept."""
        return self._weights[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._weights)

    def __len__(self) -> int:
        return len(self._weights)

    def __contains__(self, key: object) -> bool:
        return key in self._weights


def stored(weights: Mapping[str, np.ndarray], key: str) -> np.ndarray:
    """A tensor as the model holds it (`Float64Weights.stored`: float32, not converted)."""
    read = getattr(weights, "stored", None)
    return read(key) if read is not None else weights[key]


def _block(key: str) -> str:
    """`blocks.3.` for `blocks.3.attn.W_Q`; the first part of any other name (`embed.`)."""
    parts = key.split(".")
    return ".".join(parts[:2]) + "." if parts[0] == "blocks" else parts[0] + "."

"""Which sublayers write and read each residual group of a model file, read off its weights.

A group's writers are the blocks whose output weights have a non-zero entry in its dimensions:
the embedding (`W_E`, `W_pos`), a head (its `W_O` columns; the layer's shared `b_O` as `layer L
attn` where no head of the layer writes the group), an MLP (`W_out`, `b_out`). Its readers are
the heads whose `W_Q`, `W_K` or `W_V` rows are non-zero there (with the roles, `q`, `k`, `v`),
the MLPs whose `W_in` rows are, and the unembedding (`W_U`). The layer map names the variable a
head computes, not its helper dimensions: `n_before.frac`, 1/(n_before + 1), is written by the
head listed as `n_before`, and a researcher looking for the head behind a dimension finds it
here. `rasp show` prints the writers beside the residual stream and `--json` lists both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

_TENSOR = re.compile(r"blocks\.(\d+)\.(attn|mlp)\.(W_Q|W_K|W_V|W_O|b_O|W_in|W_out|b_out)")


@dataclass(frozen=True)
class Traffic:
    """One residual group's writers and readers, in the order the model runs them."""

    written_by: tuple[str, ...]  # "embedding", "layer 0 head 1", "layer 0 attn", "layer 2 mlp"
    read_by: tuple[str, ...]  # "layer 1 head 0 (q, k)", "layer 1 mlp", "unembed"


class TrafficCounter:
    """Collects, tensor by tensor (a file's tensors are read one at a time), which residual
    dimensions each block writes and reads; `traffic` then answers per group of dimensions."""

    def __init__(self, d_model: int) -> None:
        self.d_model = d_model
        # (order, block, role) -> dims it touches; order sorts blocks as the model runs them
        self._writes: dict[tuple[tuple[int, int, int], str], np.ndarray] = {}
        self._reads: dict[tuple[tuple[int, int, int], str], dict[str, np.ndarray]] = {}

    def add(self, name: str, tensor: np.ndarray) -> None:
        if name in ("embed.W_E", "pos_embed.W_pos"):
            self._write((-1, 0, 0), "embedding", _touched(tensor, -1))
        elif name == "unembed.W_U":
            self._read((1 << 30, 0, 0), "unembed", "", _touched(tensor, 0))
        elif (found := _TENSOR.fullmatch(name)) is not None:
            layer, part, kind = int(found[1]), found[2], found[3]
            if kind in ("W_Q", "W_K", "W_V"):  # [n_heads, d_model, d_head]
                for head in range(tensor.shape[0]):
                    block = f"layer {layer} head {head}"
                    self._read((layer, 0, head), block, kind[-1].lower(), _touched(tensor[head], 0))
            elif kind == "W_O":  # [n_heads, d_head, d_model]
                for head in range(tensor.shape[0]):
                    self._write(
                        (layer, 0, head), f"layer {layer} head {head}", _touched(tensor[head], -1)
                    )
            elif kind == "b_O":
                self._write((layer, 0, 1 << 20), f"layer {layer} attn", _touched(tensor, -1))
            elif kind == "W_in":  # [d_model, d_mlp]
                self._read((layer, 1, 0), f"layer {layer} {part}", "", _touched(tensor, 0))
            else:  # W_out [d_mlp, d_model], b_out [d_model]
                self._write((layer, 1, 0), f"layer {layer} {part}", _touched(tensor, -1))

    def traffic(self, start: int, stop: int) -> Traffic:
        """The writers and readers of dimensions start..stop-1."""
        writers = [
            (order, block)
            for (order, block), dims in sorted(self._writes.items())
            if dims[start:stop].any()
        ]
        heads = {order[0] for order, block in writers if " head " in block}
        # a layer's shared bias is that layer's heads' where one of them writes the group
        writers = [
            (order, block)
            for order, block in writers
            if not (block.endswith(" attn") and order[0] in heads)
        ]
        readers = []
        for (_, block), roles in sorted(self._reads.items()):
            used = [role for role, dims in roles.items() if dims[start:stop].any()]
            if used:
                named = sorted((role for role in used if role), key="qkv".index)
                readers.append(f"{block} ({', '.join(named)})" if named else block)
        return Traffic(tuple(dict.fromkeys(b for _, b in writers)), tuple(readers))

    def _write(self, order: tuple[int, int, int], block: str, dims: np.ndarray) -> None:
        key = (order, block)
        self._writes[key] = self._writes.get(key, np.zeros(self.d_model, bool)) | dims

    def _read(self, order: tuple[int, int, int], block: str, role: str, dims: np.ndarray) -> None:
        roles = self._reads.setdefault((order, block), {})
        roles[role] = roles.get(role, np.zeros(self.d_model, bool)) | dims


def _touched(tensor: np.ndarray, axis: int) -> np.ndarray:
    """Per residual dimension (along `axis`), whether any entry there is non-zero."""
    moved = np.moveaxis(np.asarray(tensor), axis, -1)
    return (moved != 0).reshape(-1, moved.shape[-1]).any(axis=0)


def traffic_of(
    tensors: Mapping[str, np.ndarray], d_model: int, groups: list[tuple[int, int]]
) -> list[Traffic]:
    """`Traffic` of each (start, stop) group, from a mapping of the file's tensors."""
    counter = TrafficCounter(d_model)
    for name, tensor in tensors.items():
        counter.add(name, tensor)
    return [counter.traffic(start, stop) for start, stop in groups]

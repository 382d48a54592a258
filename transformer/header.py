"""A model file's checked metadata, from its header alone: no tensor is read and torch is not
imported (`transformer.read_metadata`; `rasp show` and the tools' early checks use it).

Reading goes: header bytes -> checked safetensors framing (`fileformat.read_raw`) -> checked
metadata (`metadata.parse_metadata`) -> tensor names, dtypes and shapes against the config. Every
failure is a `ModelFormatError` whose message is one line: `<path>: <what is wrong>`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from transformer.errors import ModelFormatError
from transformer.fileformat import TENSOR_DTYPE, TensorInfo, read_raw, tensor_shapes
from transformer.metadata import ModelMetadata, parse_metadata

__all__ = ["check_tensor_table", "read_metadata"]


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The file's checked `rasp_forge` metadata as a JSON object (tensor values are not read)."""
    raw = read_raw(path)
    meta = parse_metadata(raw.path, raw.metadata_text)
    check_tensor_table(raw.path, raw.tensors, meta)
    return meta.raw


def check_tensor_table(path: str, tensors: Mapping[str, TensorInfo], meta: ModelMetadata) -> None:
    """The tensors a file (or an in-memory model) holds, against what its config needs."""
    expected = tensor_shapes(meta.config.to_dict())
    missing = [name for name in expected if name not in tensors]
    if missing:
        raise ModelFormatError(
            path, f"missing tensor(s) {_names(missing)} (config: {_brief(meta)})"
        )
    unexpected = sorted(set(tensors) - set(expected))
    if unexpected:
        raise ModelFormatError(
            path, f"unexpected tensor(s) {_names(unexpected)} (config: {_brief(meta)})"
        )
    for name, shape in expected.items():
        info = tensors[name]
        if info.shape != shape:
            raise ModelFormatError(
                path,
                f"tensor '{name}' has shape {list(info.shape)}, but the config needs {list(shape)}",
            )
        if info.dtype != TENSOR_DTYPE:
            raise ModelFormatError(
                path, f"tensor '{name}' has dtype {info.dtype}; the format stores F32"
            )


def _names(names: list[str]) -> str:
    shown = ", ".join(f"'{name}'" for name in names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _brief(meta: ModelMetadata) -> str:
    cfg = meta.config
    return f"n_layers={cfg.n_layers}, n_heads={cfg.n_heads}, d_model={cfg.d_model}"

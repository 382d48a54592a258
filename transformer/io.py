"""Load a compiled-model file into a `CompiledTransformer` (its metadata alone: `header`).

Reading goes: header bytes -> checked safetensors framing (`fileformat.read_raw`) -> checked
metadata (`metadata.parse_metadata`) -> tensor names, dtypes and shapes against the config (these
three steps are `header.read_metadata`, which needs no torch) -> `safetensors` reads the values (never pickle) -> finite-value check -> `Transformer` parameters.
Every failure is a `ModelFormatError` whose message is one line: `<path>: <what is wrong>`.

`from_tensors` takes what a file holds, already in memory (the tensors and the `rasp_forge`
metadata object), through the same checks from the metadata on, so a model built in memory runs
exactly as its saved file would, and is refused exactly when the file would be.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from transformer.compiled import CompiledTransformer, place
from transformer.digests import (
    DIGESTS_KEY,
    EditedWeightsWarning,
    edited_fields,
    edited_tensors,
    edited_text,
)
from transformer.errors import ModelFormatError
from transformer.fileformat import TensorInfo, read_raw, save
from transformer.header import check_tensor_table, read_metadata
from transformer.metadata import ModelMetadata, parse_metadata
from transformer.model import Transformer

__all__ = ["ModelFormatError", "from_tensors", "load", "read_metadata", "save"]

IN_MEMORY = "<in-memory model>"  # what error messages name instead of a path

# The safetensors dtype names of the numpy/torch dtypes a caller may hand over.
_DTYPE_NAMES = {
    "float16": "F16", "bfloat16": "BF16", "float32": "F32", "float64": "F64", "int8": "I8",
    "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8", "bool": "BOOL",
}  # fmt: skip


def load(path: str | os.PathLike[str], device: str | torch.device = "cpu") -> CompiledTransformer:
    """Load a compiled model onto `device` ("cpu", "cuda", "cuda:1", ...)."""
    raw = read_raw(path)
    meta = parse_metadata(raw.path, raw.metadata_text)
    check_tensor_table(raw.path, raw.tensors, meta)
    tensors = _read_tensors(raw.path, raw.tensors)
    _check_finite(raw.path, tensors)
    return _build(raw.path, meta, tensors, device)


def from_tensors(
    tensors: Mapping[str, np.ndarray | torch.Tensor],
    metadata: Mapping[str, Any],
    device: str | torch.device = "cpu",
) -> CompiledTransformer:
    """A model from what a file holds, in memory: `{name: float32 array}` and the JSON object
    stored under the safetensors metadata key `rasp_forge` (as `read_metadata` returns it).

    Checked as `load` checks a file (metadata fields, tensor names, shapes, dtype F32, finite
    values); errors are `ModelFormatError`s naming `<in-memory model>`. The tensors are copied,
    so changing the caller's arrays later does not change the model.
    """
    try:
        # Through JSON text, as the file stores it: the checks see exactly what `load` would see
        # (a tuple becomes a list, a NaN or a non-JSON value is refused here).
        text = json.dumps(metadata, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as err:
        raise ModelFormatError(IN_MEMORY, f"the metadata is not a JSON object ({err})") from None
    meta = parse_metadata(IN_MEMORY, text)
    if not isinstance(tensors, Mapping):
        raise ModelFormatError(
            IN_MEMORY, f"the tensors must map names to arrays, got {type(tensors).__name__}"
        )
    infos = {name: _info(name, value) for name, value in tensors.items()}
    check_tensor_table(IN_MEMORY, infos, meta)
    copied = {name: _as_torch(value) for name, value in tensors.items()}
    _check_finite(IN_MEMORY, copied)
    return _build(IN_MEMORY, meta, copied, device)


def _info(name: str, value: Any) -> TensorInfo:
    if not isinstance(value, np.ndarray | torch.Tensor):
        kind = type(value).__name__
        article = "an" if kind[:1] in "aeiou" else "a"  # the runtime does not import rasp
        raise ModelFormatError(
            IN_MEMORY, f"tensor '{name}' is {article} {kind}, not a numpy array or tensor"
        )
    if isinstance(value, torch.Tensor) and (value.layout != torch.strided or value.is_meta):
        # a sparse tensor has no dense copy to take, a meta tensor no values
        kind = "a meta tensor" if value.is_meta else f"a {value.layout} tensor"
        raise ModelFormatError(IN_MEMORY, f"tensor '{name}' is {kind}, not one that holds values")
    dtype = str(value.dtype).removeprefix("torch.")
    return TensorInfo(_DTYPE_NAMES.get(dtype, dtype), tuple(value.shape), 0, 0)


def _as_torch(value: np.ndarray | torch.Tensor) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True).contiguous()
    return torch.from_numpy(np.array(value, dtype=np.float32, order="C", copy=True))


def _build(
    path: str, meta: ModelMetadata, tensors: dict[str, torch.Tensor], device: str | torch.device
) -> CompiledTransformer:
    edited = edited_tensors(
        meta.raw.get(DIGESTS_KEY), ((name, t.numpy()) for name, t in tensors.items())
    )
    fields = edited_fields(meta.raw)
    if edited or fields:  # it runs, but its certificate is not for what it holds (docs/format.md)
        warnings.warn(EditedWeightsWarning(edited_text(path, edited, fields)), stacklevel=3)
    with torch.device("meta"):  # no placeholder weights: the file's tensors become the parameters
        model = Transformer(meta.config)
    model.load_state_dict(tensors, strict=True, assign=True)
    return CompiledTransformer(place(model, path, device).eval(), meta, edited, fields)


def _read_tensors(path: str, infos: Mapping[str, TensorInfo]) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        # `load_file` maps the file into memory; clone into our own memory, or a later rewrite of
        # the file (recompiling to the same path) would change or crash (SIGBUS) a loaded model.
        tensors = {name: tensor.clone() for name, tensor in load_file(path, device="cpu").items()}
    except (SafetensorError, OSError) as err:  # framing already checked: a last line of defence
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ModelFormatError(path, f"not a valid safetensors file ({reason})") from None
    found = {name: tuple(tensor.shape) for name, tensor in tensors.items()}
    if found != {name: info.shape for name, info in infos.items()}:
        raise ModelFormatError(path, "the file changed while it was being loaded")
    return tensors


def _check_finite(path: str, tensors: Mapping[str, torch.Tensor]) -> None:
    for name, tensor in tensors.items():
        # One pass without a mask tensor; NaN propagates into both extremes.
        low, high = torch.aminmax(tensor) if tensor.numel() else (torch.tensor(0.0),) * 2
        if not bool(torch.isfinite(low) & torch.isfinite(high)):
            raise ModelFormatError(path, f"tensor '{name}' contains NaN or infinite values")

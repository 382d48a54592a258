"""Load a compiled-model file into a `CompiledTransformer` (and read its metadata alone).

Reading goes: header bytes -> checked safetensors framing (`fileformat.read_raw`) -> checked
metadata (`metadata.parse_metadata`) -> tensor names, dtypes and shapes against the config ->
`safetensors` reads the values (never pickle) -> finite-value check -> `Transformer` parameters.
Every failure is a `ModelFormatError` whose message is one line: `<path>: <what is wrong>`.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from transformer.compiled import CompiledTransformer
from transformer.errors import ModelFormatError
from transformer.fileformat import TENSOR_DTYPE, RawModelFile, read_raw, save, tensor_shapes
from transformer.metadata import ModelMetadata, parse_metadata
from transformer.model import Transformer

__all__ = ["ModelFormatError", "load", "read_metadata", "save"]


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The file's checked `rasp_forge` metadata as a JSON object (tensor values are not read)."""
    raw = read_raw(path)
    meta = parse_metadata(raw.path, raw.metadata_text)
    _check_tensor_table(raw, meta)
    return meta.raw


def load(path: str | os.PathLike[str], device: str | torch.device = "cpu") -> CompiledTransformer:
    """Load a compiled model onto `device` ("cpu", "cuda", "cuda:1", ...)."""
    raw = read_raw(path)
    meta = parse_metadata(raw.path, raw.metadata_text)
    _check_tensor_table(raw, meta)
    tensors = _read_tensors(raw)
    with torch.device("meta"):  # no placeholder weights: the file's tensors become the parameters
        model = Transformer(meta.config)
    model.load_state_dict(tensors, strict=True, assign=True)
    try:
        model = model.to(device)
    except (RuntimeError, AssertionError) as err:  # e.g. CUDA requested but unavailable
        raise ModelFormatError(
            raw.path, f"cannot place the model on device '{device}': {err}"
        ) from None
    return CompiledTransformer(model.eval(), meta)


def _check_tensor_table(raw: RawModelFile, meta: ModelMetadata) -> None:
    expected = tensor_shapes(meta.config.to_dict())
    missing = [name for name in expected if name not in raw.tensors]
    if missing:
        raise ModelFormatError(
            raw.path, f"missing tensor(s) {_names(missing)} (config: {_brief(meta)})"
        )
    unexpected = sorted(set(raw.tensors) - set(expected))
    if unexpected:
        raise ModelFormatError(
            raw.path, f"unexpected tensor(s) {_names(unexpected)} (config: {_brief(meta)})"
        )
    for name, shape in expected.items():
        info = raw.tensors[name]
        if info.shape != shape:
            raise ModelFormatError(
                raw.path,
                f"tensor '{name}' has shape {list(info.shape)}, but the config needs {list(shape)}",
            )
        if info.dtype != TENSOR_DTYPE:
            raise ModelFormatError(
                raw.path, f"tensor '{name}' has dtype {info.dtype}; the format stores F32"
            )


def _read_tensors(raw: RawModelFile) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        # `load_file` maps the file into memory; clone into our own memory, or a later rewrite of
        # the file (recompiling to the same path) would change or crash (SIGBUS) a loaded model.
        tensors = {
            name: tensor.clone() for name, tensor in load_file(raw.path, device="cpu").items()
        }
    except (SafetensorError, OSError) as err:  # framing already checked: a last line of defence
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ModelFormatError(raw.path, f"not a valid safetensors file ({reason})") from None
    found = {name: tuple(tensor.shape) for name, tensor in tensors.items()}
    if found != {name: info.shape for name, info in raw.tensors.items()}:
        raise ModelFormatError(raw.path, "the file changed while it was being loaded")
    for name, tensor in tensors.items():
        # One pass without a mask tensor; NaN propagates into both extremes.
        low, high = torch.aminmax(tensor) if tensor.numel() else (torch.tensor(0.0),) * 2
        if not bool(torch.isfinite(low) & torch.isfinite(high)):
            raise ModelFormatError(raw.path, f"tensor '{name}' contains NaN or infinite values")
    return tensors


def _names(names: list[str]) -> str:
    shown = ", ".join(f"'{name}'" for name in names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _brief(meta: ModelMetadata) -> str:
    cfg = meta.config
    return f"n_layers={cfg.n_layers}, n_heads={cfg.n_heads}, d_model={cfg.d_model}"

"""The compiled-model file at byte level (docs/format.md), without torch.

A safetensors file is an 8-byte little-endian header length N, N bytes of JSON header (tensor
name -> dtype, shape, data offsets, plus `__metadata__`), then the tensor bytes. We read and check
the header ourselves before handing the bytes to `safetensors`, so every way a file can be broken
(not safetensors, truncated, inconsistent offsets) gets one precise message, not a library error.

This module needs only numpy and `safetensors.numpy`; the compiler may copy its constants.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from transformer.errors import ModelFormatError

METADATA_KEY = "rasp_forge"
FORMAT_NAME = "rasp-forge-model"
# 2: per-layer shapes (`config.layers`); 3: per-head masks (`config.layers[].masks`) and no W_pos
# (`config.positional`); 4: per-position output grids (`output.denominators`); 5: per-length ones
# (`output.length_denominators`); 6: positions such a grid decodes as ints (`output.int_positions`);
# 7: a whole number's type per length and position (`output.whole_types`); 8: the same for a
# categorical (one-hot) output; 9: a listed number a numerical output decodes as None
# (`output.none_at`); 10: per-(position, length) output grids (`output.pair_denominators`).
# Older files still load; the compiler writes the oldest version that holds what the model uses.
FORMAT_VERSION = 10
TENSOR_DTYPE = "F32"

# safetensors refuses headers above 100 MB; a larger length field means "not a safetensors file".
_MAX_HEADER_BYTES = 100_000_000
_DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2,
    "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry in the safetensors header."""

    dtype: str
    shape: tuple[int, ...]
    begin: int  # byte offsets into the data section
    end: int


@dataclass(frozen=True)
class RawModelFile:
    """A file whose safetensors framing has been checked; tensor values are not read yet."""

    path: str
    tensors: dict[str, TensorInfo]
    metadata_text: str  # the `rasp_forge` JSON, unparsed


def tensor_shapes(config: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor of a model with this `config` (format.md field names).

    With `config["layers"]` (format version 2) each block has its own head count, head width and
    MLP width; without it every block has the config's `n_heads`, `d_head` and `d_mlp`. With
    `config["positional"]` false (format version 3) there is no `pos_embed.W_pos`.
    """
    d_model = config["d_model"]
    per_layer = (
        config.get("layers")
        or [{key: config[key] for key in ("n_heads", "d_head", "d_mlp")}] * config["n_layers"]
    )
    shapes: dict[str, tuple[int, ...]] = {"embed.W_E": (config["d_vocab"], d_model)}
    if config.get("positional", True):
        shapes["pos_embed.W_pos"] = (config["n_ctx"], d_model)
    for layer in range(config["n_layers"]):
        n_heads, d_head, d_mlp = (per_layer[layer][k] for k in ("n_heads", "d_head", "d_mlp"))
        attn, mlp = f"blocks.{layer}.attn", f"blocks.{layer}.mlp"
        for name in ("W_Q", "W_K", "W_V"):
            shapes[f"{attn}.{name}"] = (n_heads, d_model, d_head)
        for name in ("b_Q", "b_K", "b_V"):
            shapes[f"{attn}.{name}"] = (n_heads, d_head)
        shapes[f"{attn}.W_O"] = (n_heads, d_head, d_model)
        shapes[f"{attn}.b_O"] = (d_model,)
        shapes[f"{mlp}.W_in"] = (d_model, d_mlp)
        shapes[f"{mlp}.b_in"] = (d_mlp,)
        shapes[f"{mlp}.W_out"] = (d_mlp, d_model)
        shapes[f"{mlp}.b_out"] = (d_model,)
    shapes["unembed.W_U"] = (d_model, config["d_vocab_out"])
    shapes["unembed.b_U"] = (config["d_vocab_out"],)
    return shapes


def uniform_d_head(config: Mapping[str, Any]) -> int:
    """The one head width TransformerLens gives every layer of a model whose layers store their
    own (format version 2): the widest layer's where each other width is it over a power of 4 (its
    W_Q's scaling, `uniform_tensors`, is then a power of 2: exact), else the least power of 4 that
    holds them all. The compiler gives a layer whose scores must be exact a power-of-4 width
    (compiler.assemble), so that one still scales exactly; only the others' W_Q round (3, 4 and 5:
    16, where 5 would scale the width-4 layers by sqrt(5/4))."""
    widest = int(config["d_head"])
    widths = [layer["d_head"] for layer in config.get("layers") or [] if layer["d_head"]]
    if all(is_power_of_4(widest / width) for width in widths):
        return widest
    power = 1
    while power < widest:
        power *= 4
    return power


def uniform_d_mlp(config: Mapping[str, Any]) -> int:
    """The MLP width TransformerLens gives every layer: the widest layer's, but at least 1 (the
    format allows 0 where no layer has hidden units, and TransformerLens's MLP cannot multiply by
    a [d_model, 0] matrix: its forward fails). A zero unit adds relu(0) * 0 = 0: exact."""
    return max(int(config["d_mlp"]), 1)


def is_power_of_4(ratio: float) -> bool:
    """Whether `ratio` is 1, 4, 16, ...: sqrt of it is a power of 2, and scaling by it is exact."""
    whole = int(ratio)
    return whole == ratio and whole > 0 and whole & (whole - 1) == 0 and whole.bit_length() % 2 == 1


def uniform_tensors(
    tensors: Mapping[str, np.ndarray], config: Mapping[str, Any]
) -> dict[str, np.ndarray]:
    """The tensors with every layer padded to the config's maxima (heads of `uniform_d_head`), and
    a zero `W_pos` where the model has none: TransformerLens's layout.

    A layer that stores fewer heads, narrower heads or fewer hidden units (format version 2) gets
    zero heads, head columns and units. Its query (W_Q and b_Q) is scaled by sqrt(d_head / own
    d_head), so that the larger divisor sqrt(d_head) gives the same scores. That factor is a power
    of 2, and exact, when the ratio is a power of 4; otherwise the query rounds once (`rasp export`
    then re-certifies).
    """
    out = dict(tensors)
    if "pos_embed.W_pos" not in out:  # a model without positions embeds every position to zero
        out["pos_embed.W_pos"] = np.zeros((config["n_ctx"], config["d_model"]), dtype=np.float32)
    width, hidden = uniform_d_head(config), uniform_d_mlp(config)
    heads = config["n_heads"]
    # every layer, format version 1's too (no `layers`: each has the maxima, d_mlp maybe 0)
    per_layer = config.get("layers") or [{"d_head": width}] * config["n_layers"]
    for layer, own in enumerate(per_layer):
        attn, mlp = f"blocks.{layer}.attn.", f"blocks.{layer}.mlp."
        if own["d_head"] and own["d_head"] != width:
            # the whole query, bias too: q = x W_Q + b_Q scales as one
            factor = math.sqrt(width / own["d_head"])
            for name in ("W_Q", "b_Q"):
                scaled = np.asarray(out[attn + name], dtype=np.float64) * factor
                out[attn + name] = scaled.astype(np.float32)
        for name in ("W_Q", "W_K", "W_V"):  # [heads, d_model, d_head]
            out[attn + name] = _padded(out[attn + name], (heads, None, width))
        for name in ("b_Q", "b_K", "b_V"):  # [heads, d_head]
            out[attn + name] = _padded(out[attn + name], (heads, width))
        out[attn + "W_O"] = _padded(out[attn + "W_O"], (heads, width, None))
        out[mlp + "W_in"] = _padded(out[mlp + "W_in"], (None, hidden))
        out[mlp + "b_in"] = _padded(out[mlp + "b_in"], (hidden,))
        out[mlp + "W_out"] = _padded(out[mlp + "W_out"], (hidden, None))
    return out


def _padded(array: np.ndarray, shape: tuple[int | None, ...]) -> np.ndarray:
    """`array` in the leading corner of zeros of `shape` (None: keep that dimension)."""
    full = tuple(size if size is not None else array.shape[i] for i, size in enumerate(shape))
    if tuple(array.shape) == full:
        return array
    out = np.zeros(full, dtype=np.float32)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def save(
    path: str | os.PathLike[str], tensors: Mapping[str, np.ndarray], metadata: Mapping[str, Any]
) -> None:
    """Write `tensors` (as float32) and the `rasp_forge` JSON `metadata` as one safetensors file."""
    from safetensors.numpy import save_file

    arrays = {
        name: np.ascontiguousarray(value, dtype=np.float32) for name, value in tensors.items()
    }
    text = json.dumps(metadata, allow_nan=False, ensure_ascii=False)
    # a symlink is written through (safetensors renames its new file over the link)
    target = os.path.realpath(path) if os.path.islink(path) else os.fspath(path)
    save_file(arrays, target, metadata={METADATA_KEY: text})


def read_raw(path: str | os.PathLike[str]) -> RawModelFile:
    """Read a file's header and check its safetensors framing against the file size.

    Only the header is read (tensor bytes stay on disk); raises `ModelFormatError` with one line.
    """
    shown = str(path)
    try:
        with Path(path).open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            start = file.read(8)
            length = _header_length(start)
            # Read no more than the file holds: a corrupt length field must not allocate gigabytes.
            data = start + file.read(min(length, size))
    except FileNotFoundError:
        raise ModelFormatError(shown, "no such file") from None
    except IsADirectoryError:
        raise ModelFormatError(shown, "is a directory, not a model file") from None
    except OSError as err:
        raise ModelFormatError(shown, f"cannot read the file ({err.strerror or err})") from None
    header = _parse_header(shown, data)
    metadata = header.pop("__metadata__", None)
    tensors = {name: _tensor_info(shown, name, entry) for name, entry in header.items()}
    _check_offsets(shown, tensors, data_bytes=size - 8 - length)
    if not isinstance(metadata, dict) or METADATA_KEY not in metadata:
        raise ModelFormatError(
            shown,
            f"safetensors file without the '{METADATA_KEY}' metadata entry: not a rasp-forge model",
        )
    text = metadata[METADATA_KEY]
    if not isinstance(text, str):
        raise ModelFormatError(shown, f"the '{METADATA_KEY}' metadata entry is not a string")
    return RawModelFile(shown, tensors, text)


def _header_length(data: bytes) -> int:
    return int.from_bytes(data[:8], "little")


def _parse_header(path: str, data: bytes) -> dict[str, Any]:
    not_safetensors = "not a safetensors file"
    if len(data) < 8:
        raise ModelFormatError(
            path, f"{not_safetensors} ({len(data)} bytes, too short for a header)"
        )
    length = _header_length(data)
    if length > _MAX_HEADER_BYTES or length < 2:
        raise ModelFormatError(path, f"{not_safetensors} (implausible header length {length})")
    if 8 + length > len(data):  # `data` holds at most the 8 + length header bytes
        # A real header is followed by data; a length beyond the end is a cut file or random bytes.
        looks_like_json = data[8:9] == b"{"
        reason = (
            "truncated file (ends inside the safetensors header)"
            if looks_like_json
            else not_safetensors
        )
        raise ModelFormatError(path, reason)
    try:
        header = json.loads(data[8 : 8 + length].decode("utf-8"))
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, or absurd nesting
        raise ModelFormatError(path, f"{not_safetensors} (its header is not valid JSON)") from None
    if not isinstance(header, dict):
        raise ModelFormatError(path, f"{not_safetensors} (its header is not a JSON object)")
    return header


def _tensor_info(path: str, name: str, entry: Any) -> TensorInfo:
    bad = ModelFormatError(
        path, f"not a safetensors file (malformed header entry for tensor '{name}')"
    )
    if not isinstance(entry, dict):
        raise bad
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if (
        not isinstance(dtype, str)  # a list or an object would not hash
        or dtype not in _DTYPE_BYTES
        or not _is_int_list(shape)
        or not _is_int_list(offsets)
        or len(offsets) != 2
    ):
        raise bad
    begin, end = offsets
    if begin > end or end - begin != math.prod(shape) * _DTYPE_BYTES[dtype]:
        raise bad
    return TensorInfo(dtype, tuple(shape), begin, end)


def _is_int_list(value: Any) -> bool:
    return isinstance(value, list) and all(type(x) is int and x >= 0 for x in value)


def _check_offsets(path: str, tensors: dict[str, TensorInfo], data_bytes: int) -> None:
    needed = max((info.end for info in tensors.values()), default=0)
    if needed > data_bytes:
        raise ModelFormatError(
            path,
            f"truncated file (the header promises {needed} bytes of tensor data, "
            f"{data_bytes} are present)",
        )

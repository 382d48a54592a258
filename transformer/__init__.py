"""A small PyTorch transformer that runs compiled RASP models from their safetensors files.

    import transformer
    model = transformer.load("reverse.safetensors", device="cpu")
    model.run(["abc"])  # [["c", "b", "a"]]
    model = transformer.from_tensors(tensors, metadata)  # the same, from a file's contents in memory

Imports neither `rasp` nor `compiler`: it reads only the file (docs/format.md, docs/runtime.md).
Importing the package does not import torch, nor does `read_metadata` (a file's checked metadata,
from its header): the names that run a model (`load`, `from_tensors`, `CompiledTransformer`) load
it on first use, so a tool can read a file and refuse a request in milliseconds, before torch's
seconds (`rasp show` and `rasp export` never import it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from transformer.config import ModelConfig
from transformer.errors import (
    ModelFormatError,
    ModelInputError,
    ModelOutputError,
    UndecidedOutputError,
)

if TYPE_CHECKING:
    from transformer.compiled import CompiledTransformer
    from transformer.header import read_metadata
    from transformer.io import from_tensors, load

__all__ = [
    "CompiledTransformer",
    "ModelConfig",
    "ModelFormatError",
    "ModelInputError",
    "ModelOutputError",
    "UndecidedOutputError",
    "from_tensors",
    "load",
    "read_metadata",
]

# The names imported on first use, by module (all but `header` import torch).
_LAZY = {
    "CompiledTransformer": "transformer.compiled",
    "from_tensors": "transformer.io",
    "load": "transformer.io",
    "read_metadata": "transformer.header",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'transformer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value

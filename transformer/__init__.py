"""A small PyTorch transformer that runs compiled RASP models from their safetensors files.

    import transformer
    model = transformer.load("reverse.safetensors", device="cpu")
    model.run(["abc"])  # [["c", "b", "a"]]
    model = transformer.from_tensors(tensors, metadata)  # the same, from a file's contents in memory

Imports neither `rasp` nor `compiler`: it reads only the file (docs/format.md, docs/runtime.md).
Importing the package does not import torch: the names that need it (`load`, `from_tensors`,
`read_metadata`, `CompiledTransformer`) load it on first use, so a tool can read a file's header
(`transformer.fileformat.read_raw`) and refuse a request in milliseconds, before torch's seconds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from transformer.config import ModelConfig
from transformer.errors import ModelFormatError, ModelInputError, ModelOutputError

if TYPE_CHECKING:
    from transformer.compiled import CompiledTransformer
    from transformer.io import from_tensors, load, read_metadata

__all__ = [
    "CompiledTransformer",
    "ModelConfig",
    "ModelFormatError",
    "ModelInputError",
    "ModelOutputError",
    "from_tensors",
    "load",
    "read_metadata",
]

# The names whose modules import torch, by module.
_LAZY = {
    "CompiledTransformer": "transformer.compiled",
    "from_tensors": "transformer.io",
    "load": "transformer.io",
    "read_metadata": "transformer.io",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'transformer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found directly from now on
    return value

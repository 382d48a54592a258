"""A small PyTorch transformer that runs compiled RASP models from their safetensors files.

    import transformer
    model = transformer.load("reverse.safetensors", device="cpu")
    model.run(["abc"])  # [["c", "b", "a"]]
    model = transformer.from_tensors(tensors, metadata)  # the same, from a file's contents in memory

Imports neither `rasp` nor `compiler`: it reads only the file (docs/format.md, docs/runtime.md).
"""

from __future__ import annotations

from transformer.compiled import CompiledTransformer
from transformer.config import ModelConfig
from transformer.errors import ModelFormatError, ModelInputError, ModelOutputError
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

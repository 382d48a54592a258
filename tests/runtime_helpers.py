"""Running a freshly compiled model in tests: always through the torch runtime (`transformer`), the
one forward pass a compiled model has, built in memory with `transformer.from_tensors`.

    runtime = as_runtime(compile_sop(sop, vocab, max_len))
    run_compiled(compiled, [list("abc"), list("ab")])   # one padded batch, as given
    residuals(compiled, inputs)                          # every stage of the residual stream
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

import transformer


def as_runtime(model: Any, device: str = "cpu") -> transformer.CompiledTransformer:
    """The torch model of a `compiler.CompiledModel` (its weights and metadata, as saved)."""
    if isinstance(model, transformer.CompiledTransformer):
        return model
    return transformer.from_tensors(model.weights, model.metadata, device)


def run_compiled(model: Any, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Decoded outputs of `inputs` run as ONE batch in the given order (mixed lengths padded on the
    right), unlike `CompiledTransformer.run`, which groups inputs by length."""
    runtime = as_runtime(model)
    ids, lengths = runtime.encode(inputs)
    return runtime.decode(runtime.forward(ids), lengths)


def residuals(model: Any, inputs: Sequence[Sequence[Any]]) -> list[np.ndarray]:
    """The residual stream `[batch, pos, d_model]` after the embedding and after every attention and
    MLP sublayer (1 + 2 * n_layers arrays), for `inputs` run as one padded batch."""
    runtime = as_runtime(model)
    ids, _ = runtime.encode(inputs)
    _, cache = runtime.run_with_cache(ids)
    stages = [(cache["hook_embed"] + cache["hook_pos_embed"]).numpy()]
    for layer in range(runtime.config.n_layers):
        stages.append(cache[f"blocks.{layer}.hook_resid_mid"].numpy())
        stages.append(cache[f"blocks.{layer}.hook_resid_post"].numpy())
    return stages


def ragged_array(inputs: Sequence[Sequence[Any]]) -> tuple[np.ndarray, list[int]]:
    """`inputs` as one array padded to the longest, for `run_array(tokens, lengths=...)`: a `U1`
    array padded with "" where every token is a one-character str (the fast path), else an
    object array padded with None (the per-token path), and the lengths."""
    lengths = [len(tokens) for tokens in inputs]
    chars = all(isinstance(t, str) and len(t) == 1 for tokens in inputs for t in tokens)
    array = np.full((len(inputs), max(lengths, default=1)), "" if chars else None, object)
    for row, tokens in enumerate(inputs):
        array[row, : len(tokens)] = list(tokens)
    return (array.astype("U1") if chars else array), lengths


@contextmanager
def threads(count: int) -> Iterator[None]:
    """torch's intra-op thread count set to `count` inside the block, restored after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)

"""Logits at padding positions mean nothing: a categorical output, like a numerical one, is
checked for NaN and infinities at the real positions only, so a batch mixing lengths decodes as
its inputs do one by one (docs/runtime.md: padding never changes a real position's output)."""

from __future__ import annotations

import handmade_models as hm
import numpy as np
import pytest
import torch

import transformer
from transformer import ModelOutputError
from transformer.decoding import OutputEncoding, OutputSpec, OutputType


def _prev_with_infinite_padding() -> transformer.CompiledTransformer:
    """`previous_token` whose logit 0 is +inf at PAD positions only: the `pad` dimension, which
    no head reads, holds 3e38 there and W_U multiplies it by 3e38 (finite weights)."""
    made = hm.previous_token()
    pad = made.metadata["residual"].index("pad")
    made.tensors["embed.W_E"][made.metadata["vocab"]["pad_id"], pad] = 3e38
    made.tensors["unembed.W_U"][pad, 0] = 3e38
    return transformer.from_tensors(made.tensors, made.metadata)


def test_infinite_logits_at_padding_do_not_fail_a_mixed_batch() -> None:
    model = _prev_with_infinite_padding()
    ids, lengths = model.encode(["abc", "a"])
    logits = model.forward(ids)
    assert torch.isinf(logits[1, 2:, 0]).all() and torch.isfinite(logits[0]).all()
    expected = [["-", "a", "b"], ["-"]]
    assert model.run(["abc"]) + model.run(["a"]) == expected
    assert model.run(["abc", "a"]) == expected
    assert model.decode(logits, lengths) == expected
    assert model.to_values(model.run_ids(ids), lengths) == expected


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])  # numpy's and torch's paths
def test_logits_decode_alike_on_both_paths(dtype: torch.dtype) -> None:
    model = _prev_with_infinite_padding()
    ids, lengths = model.encode(["abc", "a"])
    logits = model.forward(ids).to(dtype)
    assert model.decode(logits, lengths) == [["-", "a", "b"], ["-"]]
    with pytest.raises(ModelOutputError, match="NaN or infinite logits for 'prev'"):
        model.decode(logits, [3, 2])  # the PAD at position 2 read as real


def test_categorical_decode_reads_only_real_positions_for_nan() -> None:
    spec = OutputSpec("out", OutputEncoding.CATEGORICAL, OutputType.STRINGS, ("x", "y"))
    logits = np.array([[[0, 0], [1, 0], [0, 1]], [[0, 0], [0, 1], [np.nan, 0]]], dtype=np.float32)
    assert spec.decode(logits, [2, 1]) == [["x", "y"], ["y"]]
    with pytest.raises(ModelOutputError, match="NaN or infinite logits for 'out'"):
        spec.decode(logits, [2, 2])


GRIDS = [
    {"denominators": (1, 1, 1)},
    {"length_denominators": (1, 2, 2)},
    {"end_denominators": (1, 1, 1)},
    {"length_denominators": (2, 2, 2), "int_positions": (1, 2)},
]


@pytest.mark.parametrize("grid", GRIDS, ids=lambda grid: "+".join(grid))
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_grid_output_ignores_non_finite_logits_at_padding(
    grid: dict[str, tuple[int, ...]], bad: float
) -> None:
    """A padding position whose denominator is 1 (or that `int_positions` lists) was made an
    int with the real ones: an infinite logit there raised OverflowError (NaN: ValueError) from
    decode, run_ids' to_values and run on a batch mixing lengths."""
    spec = OutputSpec("out", OutputEncoding.NUMERICAL, OutputType.INTS, None, **grid)  # type: ignore[arg-type]
    logits = np.array([[[0], [1], [2], [3]], [[0], [1], [bad], [bad]]], dtype=np.float32)
    alone = spec.decode(logits[:1], [3]) + spec.decode(logits[1:, :2], [1])
    assert alone == [[1, 2, 3], [1]]
    types = [[type(x) for x in row] for row in alone]
    batched = spec.decode(logits, [3, 1])
    assert batched == alone and [[type(x) for x in row] for row in batched] == types
    codes = spec.grid_rows(np.array([3, 1]), 3) * np.array([[1.0, 2, 3], [1, bad, bad]])
    from_codes = spec.values_of(codes, [3, 1])  # run_ids's codes: past a length, anything
    assert from_codes == alone and [[type(x) for x in row] for row in from_codes] == types

"""A sublayer's output bias (an MLP's `b_out`, a layer's attention `b_O`) is added at every
position, whatever the reach says the sublayer writes. The certifier checked `W_out`'s and
`W_O`'s columns against the dimensions each sublayer writes, but `b_out` only at the dimensions
an MLP part writes, and `b_O` only in layers with heads: a file whose bias wrote a one-hot column
of a later variable (or of the output), or a headless layer's `b_O`, re-checked as proved while
it decoded every input wrongly (found by injecting faults into library models)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import compile_sop
from compiler.certify import recheck
from compiler.model import CompiledModel
from rasp.errors import Source
from rasp.interpreter import load_source
from tests.runtime_helpers import as_runtime

# layer 0: length (a head, then an MLP); layer 1: the flip (a head; an MLP with no units)
FLIP = 'flip = select(indices, length - indices - 1, ==);\nres = aggregate(flip, "x" if tokens == "a" else "y");'
# one layer: no head, an MLP
MAP = 'res = "x" if (indices + indicator(tokens == "a")) % 2 == 0 else "y";'


def _model(text: str) -> CompiledModel:
    return compile_sop(load_source(Source("<test>", text)).get("res"), ["a", "b"], 3)


def _edited(model: CompiledModel, tensor: str, dim: str, value: float) -> CompiledModel:
    weights = {k: v.copy() for k, v in model.weights.items()}
    weights[tensor][model.metadata["residual"].index(dim)] = value
    return CompiledModel(model.config, weights, model.metadata)


def _decodes(model: CompiledModel, inputs: list[str]) -> list[list[object]]:
    return as_runtime(model).run(inputs)


@pytest.mark.parametrize(
    ("text", "tensor", "dim", "given"),
    [
        (FLIP, "blocks.0.mlp.b_out", "res:x", "b"),  # an MLP part's bias on a later head's column
        (FLIP, "blocks.1.mlp.b_out", "res:x", "b"),  # an MLP of no units
        (MAP, "blocks.0.attn.b_O", "res:x", "a"),  # a layer of no heads
    ],
)
def test_an_output_bias_outside_what_the_sublayer_writes_is_not_proved(
    text: str, tensor: str, dim: str, given: str
) -> None:
    model = _model(text)
    assert recheck(model.weights, model.metadata).ok
    assert _decodes(model, [given]) == [["y"]]
    edited = _edited(model, tensor, dim, 1.0)
    assert _decodes(edited, [given]) == [["x"]]  # the edit is real: the input decodes wrongly
    cert = recheck(edited.weights, edited.metadata)
    assert not cert.ok
    (error,) = cert.errors
    assert repr(dim) in error and tensor.rsplit(".", 1)[-1] in error, error


def test_an_output_bias_on_what_the_mlp_writes_is_checked_as_its_error() -> None:
    """Where the MLP part writes the dimension, its bias is part of the value it writes: a small
    one is an error within the margin, one past the decoder's margin fails it (not a refusal to read)."""
    model = _model(MAP)
    assert not np.any(model.weights["blocks.0.mlp.b_out"])  # the compiler writes no output bias
    assert recheck(_edited(model, "blocks.0.mlp.b_out", "res:x", 1e-3).weights, model.metadata).ok
    cert = recheck(_edited(model, "blocks.0.mlp.b_out", "res:x", 1.5).weights, model.metadata)
    assert not cert.ok and not cert.errors

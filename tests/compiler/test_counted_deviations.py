"""The certifier compares what a block writes with what the program means, and used to ignore a
difference below 1e-9 * (1 + |intended|) as float64 noise (`certify_mlp`, `certify_attention`):
a tolerance no margin carried. Every difference now counts, with a bound on float64's own error
in the certifier's evaluation (`compiler.bounds.f64_error`); where that evaluation is exact, none
is added, so an exact block stays exact."""

from __future__ import annotations

import copy

import numpy as np

from compiler import compile_sop
from compiler.certify import recheck
from tests.compiler.limit_checks import program


def _model():  # noqa: ANN202 (a CompiledModel)
    sop = program("w1 = selector_width(select(tokens, tokens, <));\ny = w1 > 1;\n", "y")
    return compile_sop(sop, list("abc"), 6, name="y")


def _decoder_bound(weights: dict[str, np.ndarray], metadata: dict) -> float:
    cert = recheck(weights, metadata)
    assert cert.ok
    (decoder,) = [c for c in cert.checks if c.sublayer == "decoder"]
    return float(decoder.bound)


def test_an_exact_one_hot_written_by_an_mlp_has_no_error() -> None:
    model = _model()
    assert _decoder_bound(model.weights, model.metadata) == 0.0


def test_a_deviation_below_1e_9_of_an_mlp_output_is_error() -> None:
    model = _model()
    weights = copy.deepcopy(model.weights)
    column = model.metadata["residual"].index("y:False")
    # the one-hot's False column written 4e-10 off at every point: within the old 1e-9 * (1 + 0)
    weights["blocks.0.mlp.b_out"][column] = np.float32(4e-10)
    bound = _decoder_bound(weights, model.metadata)
    assert bound >= 4e-10  # was 0: the difference was dropped and the column read as exact

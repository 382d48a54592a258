"""The certifier compares what a block writes with what the program means, and used to ignore a
difference below 1e-9 * (1 + |intended|) as float64 noise (`certify_mlp`, `certify_attention`):
a tolerance no margin carried. Every difference now counts, with a bound on float64's own error
in the certifier's evaluation (`compiler.bounds.f64_error`); where that evaluation is exact, none
is added, so an exact block stays exact."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from compiler import compile_sop
from compiler.certificate import Check
from compiler.certify import _embedding
from compiler.certify_attention import check_attention
from compiler.certify_mlp import check_mlp
from compiler.reach import Reach
from tests.compiler.limit_checks import program

# small values on a coarse dyadic grid: the MLP's output sum is exact (error 0)
TINY = """
w1 = selector_width(select(tokens, tokens, <));
y = {0: 0, 1: 0.000244140625, 2: 0.000732421875, 3: 0.000244140625, 4: 0, 5: 0.00048828125}[w1];
"""


def _written_error(weights: dict[str, np.ndarray], metadata: dict[str, Any], dim: str) -> float:
    """The certifier's bound on |float32 - exact| of residual dimension `dim` after layer 0."""
    reach = Reach.from_json(metadata["reach"])
    checks: list[Check] = []
    residual = list(metadata["residual"])
    walk = _embedding(weights, reach, int(metadata["max_len"]), residual, checks, ())
    check_attention(walk, 0)
    check_mlp(walk, 0)
    assert all(c.ok for c in checks)
    return float(walk.err.at(walk.err.magnitude)[residual.index(dim)])


def test_an_exact_mlp_output_stays_exact_and_a_deviation_below_1e_9_is_error() -> None:
    model = compile_sop(program(TINY, "y"), list("abc"), 6, name="y")
    assert model.metadata["certificate"]["ok"]
    assert _written_error(model.weights, model.metadata, "y") == 0.0
    weights = copy.deepcopy(model.weights)
    d = model.metadata["residual"].index("y")
    # y written 2^-30 (9.3e-10) off at every point: within the old 1e-9 * (1 + |y|)
    weights["blocks.0.mlp.b_out"][d] += np.float32(2.0**-30)
    off = _written_error(weights, model.metadata, "y")
    # the same weights against outputs moved by as much: no deviation, the same rounding
    moved = copy.deepcopy(model.metadata)
    (part,) = moved["reach"]["mlps"]
    part["outputs"] = [v + 2.0**-30 for v in part["outputs"]]
    on = _written_error(weights, moved, "y")
    assert off - on >= 2.0**-30 * (1 - 1e-6)  # was 0: the deviation was dropped


# a mean of small numbers on a coarse dyadic grid, copied by one head (kind "number")
MEAN = """
y = {"a": 0, "b": 0.000244140625, "c": 0.000732421875}[tokens];
res = aggregate(select(indices, indices, <=), y);
"""


def test_a_deviation_of_a_head_s_copy_below_1e_9_is_error() -> None:
    model = compile_sop(program(MEAN, "res"), list("abc"), 4, name="res")
    assert model.metadata["certificate"]["ok"]
    base = _written_error(model.weights, model.metadata, "res")
    weights = copy.deepcopy(model.weights)
    d = model.metadata["residual"].index("res")
    assert weights["blocks.0.attn.W_O"][0, 0, d] == 1.0
    # W_O one float32 step above 1: the copy of 0.000732421875 written 8.7e-11 high, within the
    # old 1e-9 * (1 + |intended|) that the attention check dropped
    weights["blocks.0.attn.W_O"][0, 0, d] = np.float32(1.0 + 2.0**-23)
    off = _written_error(weights, model.metadata, "res")
    deviation = 0.000732421875 * 2.0**-23
    assert deviation < 1e-9
    assert off - base >= deviation * (1 - 1e-6)  # was 0: the deviation was dropped

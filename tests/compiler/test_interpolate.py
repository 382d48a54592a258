"""Interpolating MLPs (compiler.interpolate): a smooth numerical map of a mean is linear between its
reachable points, and the certifier carries each unit's error to the output instead of deciding it."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.blocks import ONE, Encoded, Encoding
from compiler.certify import recheck
from compiler.interpolate import interpolation_mlp
from compiler.numeric import ErrorBound
from compiler.reach import Reach
from rasp import sops as S
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib
from tests.runtime_helpers import run_compiled

PREFIX = 'q = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'

# (program, N, parameters at most: stepped, these took a one-hot output of 37,229 (q * q at 16),
# 545,481 (at 32) and 8.0M (at 64) parameters; q - q * q / 2 was refused from N = 16)
SMOOTH = {
    "square": (PREFIX + "res = q * q;", 16, 1_500),
    "square at 32": (PREFIX + "res = q * q;", 32, 6_000),
    "square at 64": (PREFIX + "res = q * q;", 64, 20_000),
    "chain": (PREFIX + "res = q - q * q / 2;", 16, 1_500),
    "chain at 32": (PREFIX + "res = q - q * q / 2;", 32, 6_000),
}


def _program(text: str) -> S.SOp:
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    return interp.get("res")


def _inputs(n: int, seed: int) -> list[list]:
    return (
        all_inputs("ab", 5)
        + random_inputs("ab", n, 60, seed=seed)
        + [["a"] * n, ["b"] * n, ["a"] + ["b"] * (n - 1), ["b"] * (n - 1) + ["a"]]
    )


@pytest.mark.exactness
@pytest.mark.parametrize("case", sorted(SMOOTH))
def test_a_smooth_map_of_a_mean_is_interpolated_small_and_exact(case: str) -> None:
    text, n, most = SMOOTH[case]
    root = _program(text)
    model = compile_sop(root, list("ab"), n, name="res")
    assert model.param_count() <= most
    assert len(model.metadata["layers"]) == 1
    assert any(m.get("continuous") for m in model.metadata["reach"]["mlps"])
    inputs = _inputs(n, seed=n)
    assert check_inputs(model, root, inputs) == len(inputs)
    singles = inputs[-24:]  # the full-length ones among them, one at a time
    assert check_inputs(model, root, singles, batch=1) == len(singles)


# (program, N, parameters at most): stepped per context value these took 134,640 and 2.1M (the
# token, at 16 and 32), 440,451 and 17.1M (the index's class), 6.5M (times the length, at 16)
IN_CONTEXT = {
    "by token": (PREFIX + 'res = q * q if tokens == "a" else q;', 16, 1_500),
    "by token at 32": (PREFIX + 'res = q * q if tokens == "a" else q;', 32, 6_000),
    "by index": (PREFIX + "res = q * q if indices > 2 else 0;", 16, 2_000),
    "by index at 32": (PREFIX + "res = q * q if indices > 2 else 0;", 32, 7_000),
    "times the length": (PREFIX + "res = q * q * length;", 16, 30_000),
}


@pytest.mark.exactness
@pytest.mark.parametrize("case", sorted(IN_CONTEXT))
def test_a_smooth_map_of_a_mean_per_context_value_is_interpolated(case: str) -> None:
    text, n, most = IN_CONTEXT[case]
    root = _program(text)
    model = compile_sop(root, list("ab"), n, name="res")
    assert model.param_count() <= most
    assert any(m.get("continuous") for m in model.metadata["reach"]["mlps"])
    inputs = _inputs(n, seed=n + 1)
    assert check_inputs(model, root, inputs) == len(inputs)
    singles = inputs[-24:]
    assert check_inputs(model, root, singles, batch=1) == len(singles)


TWO = (
    PREFIX
    + 'b = aggregate(select(indices, indices, <=), indicator(tokens == "b"));\n'
    + 'g = aggregate(select(1, 1, ==), indicator(tokens == "a"));\n'
)

# (program, parameters at most, lengths): stepped or tabled these took 2.0M (the relu at 64),
# 4.5M (max with 0.25 at 64), 3.4M (max at 16), 1.0M (min at 16) parameters, or were refused
# (`q + relu(g - q)` from 16; at 64 the value analysis refuses it)
KINKED = {
    "relu of a mean": ("d = q - 0.5;\nres = d if d > 0 else 0;", 300, (16, 64)),
    "max with a constant": ("res = max(q, 0.25);", 300, (16, 64)),
    "max of two means": ("res = max(q, g);", 500, (16, 32)),
    "min of two means": ("res = min(q, b);", 500, (16, 32)),
    "max written with a relu": ("d = g - q;\nres = q + (d if d > 0 else 0);", 500, (16,)),
    "distance of two means": ("res = q - b if q > b else b - q;", 500, (16, 32)),
}


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("case", "n"), [(case, n) for case, (_, _, ns) in sorted(KINKED.items()) for n in ns]
)
def test_a_kink_of_one_or_two_means_is_a_few_units_at_every_length(case: str, n: int) -> None:
    text, most, _ = KINKED[case]
    root = _program(TWO + text)
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.param_count() <= most
    assert len(model.metadata["layers"]) == 1
    inputs = all_inputs("abc", 4) + random_inputs("abc", n, 40, seed=n)
    inputs += [["a"] * n, ["b"] * n, ["a"] + ["b"] * (n - 1), ["c"] * (n - 1) + ["a"]]
    assert check_inputs(model, root, inputs) == len(inputs)


WRAP = """
v0 = aggregate(select(tokens, tokens, ==), indicator(tokens == "a"));
v1 = aggregate(select(tokens, tokens, <), indicator(tokens == "b"));
res = (v1 + v0) % 2;
"""


@pytest.mark.exactness
def test_a_sum_that_wraps_is_the_sum_less_a_step_of_it() -> None:
    """(v1 + v0) % 2 takes ~N^2 values; interpolated over the sum, the wrap at 2 is one segment
    as steep as the gap below 2 (1/992 at N = 32), whose slope multiplies the sum's error past
    the snap's margin (a one-hot output of 2.15M parameters was kept). Less the sum itself, it
    is one step at 2: exact, and the sum's error alone reaches the output."""
    root = _program(WRAP)
    model = compile_sop(root, list("ab"), 32, name="res")
    assert model.param_count() <= 1_000
    assert model.metadata["output"]["encoding"] == "numerical"
    assert len(model.metadata["layers"]) == 1
    inputs = all_inputs("ab", 8) + random_inputs("ab", 32, 200, seed=3)
    inputs += [["a"] * 32, ["b"] * 32, ["a"] * 31 + ["b"], ["b"] * 31 + ["a"]]
    assert check_inputs(model, root, inputs) == len(inputs)


def test_a_product_of_two_means_is_no_kink() -> None:
    """q * b is neither mean plus a function of their sum or difference: not built so."""
    model = compile_sop(_program(TWO + "res = q * b;"), list("abc"), 8, name="res")
    assert not any(label.endswith(".rest") for label in model.metadata["residual"])


def test_a_continuous_part_survives_the_file_and_is_certified_again() -> None:
    model = compile_sop(_program(PREFIX + "res = q * q;"), list("ab"), 16, name="res")
    reach = Reach.from_json(json.loads(json.dumps(model.metadata["reach"])))
    assert [m.continuous for m in reach.mlps] == [True]
    certificate = recheck(model.weights, model.metadata)
    assert certificate.ok
    mlp = [c for c in certificate.checks if c.sublayer.endswith("mlp")]
    assert len(mlp) == 1 and "no decision (continuous" in mlp[0].where


def test_a_wrong_kink_weight_is_not_certified() -> None:
    """The certifier compares what the interpolation writes with the map at every point: a slope
    change 0.01 off moves the output past its snap's margin (1/512) where the unit is on."""
    model = compile_sop(_program(PREFIX + "res = q * q;"), list("ab"), 16, name="res")
    weights = dict(model.weights)
    w_out = weights["blocks.0.mlp.W_out"].copy()
    unit = int(np.flatnonzero(np.abs(w_out).max(axis=1))[len(w_out) // 3])
    w_out[unit] += 0.01
    weights["blocks.0.mlp.W_out"] = w_out
    assert not recheck(weights, model.metadata).ok


def test_a_jump_is_left_to_the_steps() -> None:
    """`1 if q > 0.5 else 0` as a line would be as steep as the gap between two means: its
    input's error times that slope is more than the steps' exact whole numbers."""
    model = compile_sop(_program(PREFIX + "res = 1 if q > 0.5 else 0;"), list("ab"), 16, name="res")
    assert not any(m.get("continuous") for m in model.metadata["reach"]["mlps"])


def test_a_step_with_a_stepped_context_is_left_to_the_steps() -> None:
    """tracr's shuffle_dyck2 reads `any_negative` (`balance_() < 0` or the other balance's, a bool
    from a steep step) as a number: as a line per context value, the gates' weights carry that
    bool's error into the line (slope N) and on into `has_neg`, which the last step weighs by 4N
    (24.5 against a margin of 2.5 at N = 64: a fourth layer, 15,917 parameters); the steps'
    pairs cancel it (3 layers, 12,433). At N = 40: 9,025 parameters, not 11,669 in 4 layers."""
    model = compile_sop(lib.make_shuffle_dyck2(), list("(){}"), 40, name="shuffle_dyck2")
    assert model.metadata["config"]["n_layers"] == 3
    assert model.param_count() <= 9_025
    assert not any(m.get("continuous") for m in model.metadata["reach"]["mlps"])
    rng = random.Random(3)
    inputs = [list(t) for k in (1, 2, 3) for t in itertools.product("(){}", repeat=k)]
    inputs += [[rng.choice("(){}") for _ in range(rng.randint(4, 40))] for _ in range(60)]
    inputs += [list("({})") * 10, list("(" * 20 + ")" * 20), list(")(" * 20)]
    program = lib.make_shuffle_dyck2()
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(program(tokens)), tokens


def _reading(name: str) -> Encoded:
    return Encoded.materialised_numerical(name, (0.0, 1.0))


def test_the_interpolant_passes_through_every_point_with_one_unit_per_kink() -> None:
    points = [(0.0, 1.0), (0.25, 1.5), (0.5, 2.0), (1.0, 0.0)]  # collinear first three
    x = _reading("x")
    spec = interpolation_mlp(
        x,
        points,
        Encoded.materialised_numerical("y", (0.0, 1.0, 1.5, 2.0)),
        op="f(x)",
        name="y",
        x_error=ErrorBound(1e-7),
    )
    assert spec is not None and spec.continuous
    assert spec.notes["kinks"] == 2  # x = 0 (slope 2) and x = 0.5 (slope -4): no kink at 0.25
    w, one = spec.W_in[x.number[0][0]], spec.W_in[ONE]  # [hidden] each
    for at, y in points:
        h = np.maximum(w * at + one + spec.b_in, 0.0)
        assert float(h @ spec.W_out[:, 0]) == pytest.approx(y, abs=1e-12)
    assert 0 < spec.notes["output_error_bound"] < 1e-5


@pytest.mark.parametrize(
    "points", [[(0.0, 1.0)], [(0.0, "a"), (1.0, "b")], [(0.0, 1.0), (1.0, float("inf"))]]
)
def test_no_interpolant_for_one_point_or_values_that_are_not_finite_numbers(points) -> None:
    out = Encoded("y", Encoding.NUMERICAL, (0.0,), number=())
    assert (
        interpolation_mlp(_reading("x"), points, out, op="f", name="y", x_error=ErrorBound(0.0))
        is None
    )

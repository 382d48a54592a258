"""A step over a sum of two numbers takes its inputs' written error in the driver's last build.

Defs seed 2172227 (the defs flavour's recursion `g3_r(-x if x < b else x - n, n - 1)`, found by
gen67) reduced by session 67: `hist < b` was planned as a step over 1/(hist+1) - b, whose sums
at N = 10 lie 0.0091 apart (1/10 - 10 and 1/11 - 10), with b's error taken for its rounding
alone; b is the inner recursion's `t8 + t8`, written by maps that pass their input's error on,
and the certifier found a relu margin of 1.5 against 5.97. Every other build was refused; the
one with that written error (and the interpolations taking theirs) is proved (101,969
parameters) and agrees. It compiled at N = 8 before and does so as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from compiler.build_trials import BuildOptions
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

TEXT = """load "hist";
def g0(g0_a, g0_b, g0_c) {
    return load_from_location(count(tokens, "a"), 1) + max((g0_b if (tokens == "x") else g0_c), max(0.5, g0_a));
}
def g3(g3_a, g3_b) {
    def g3_r(g3_r_x, g3_r_n) { return g3_r_x if g3_r_n == 0 else g3_r(-g3_r_x if g3_r_x < g3_b else g3_r_x - g3_r_n, g3_r_n - 1); }
    t8 = g3_r(g3_a, 6);
    return t8 + t8;
}
acc = hist % 3;
res = g3(hist, g3(load_from_location(hist, 2), g0(acc, hist, indices) + acc));"""


def test_the_option_is_off_by_default() -> None:
    # (every build but the driver's last plans as before: no model proved before changes)
    assert BuildOptions().written_sums is False


@pytest.mark.slow  # (a 15 to 60 s compile: every other build is tried first)
@pytest.mark.exactness
def test_a_recursions_comparison_is_proved_with_its_inputs_written_error() -> None:
    programs = Path(__file__).parents[2] / "programs"
    root = load_source(Source("<test>", TEXT), search_dirs=[programs]).get("res")
    assert isinstance(root, SOp)
    vocab = list("xab")
    model = compile_sop(root, vocab, 10)
    inputs = all_inputs(vocab, 3) + random_inputs(vocab, 10, 60, 2172227)
    assert check_inputs(model, root, inputs) == len(inputs)

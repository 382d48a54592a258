"""An affine view is read as its fit: no block computes it, and no error bound carries how far the
program's values lie from the fit (its misfit). The fit allowed each row a misfit of 1e-9 of the
LARGEST value, so a map affine but for one small value (a misfit of 1.5e-6 beside values up to
2048) became a free view, and the model output the fit's 0.0009765625 where the program gives
0.0009780625, certified (the snap's margin 7.5e-7 against a float32 bound of 1.75e-10): each row
now gets its own float64 noise (compiler.affine_fits.exact_affine_fit)."""

from __future__ import annotations

import itertools

import numpy as np

from compiler import compile_sop
from compiler.affine_fits import exact_affine_fit
from tests.compiler.limit_checks import agrees_everywhere, program

# affine in w1 (256 * w1 + 2^-10) but where both widths are 0 (every token alike), 1.5e-6 above
NEARLY_AFFINE = """
w1 = selector_width(select(tokens, tokens, <));
w2 = selector_width(select(tokens, tokens, >));
y = 256 * w1 + 0.0009765625 + (0.0000015 if w1 == 0 and w2 == 0 else 0);
"""


def test_a_misfit_within_noise_of_the_largest_value_only_is_no_fit() -> None:
    rows = [[w1, w2] for w1, w2 in itertools.product(range(9), repeat=2) if w1 + w2 < 9]
    ys = [256 * w1 + 2.0**-10 + (1.5e-6 if w1 == w2 == 0 else 0) for w1, w2 in rows]
    assert exact_affine_fit(rows, ys) is None
    ys = [256 * w1 + 2.0**-10 for w1, _ in rows]
    assert exact_affine_fit(rows, ys) == [256.0, 0.0, 2.0**-10]


def test_a_misfit_past_a_tracr_rounding_is_no_fit() -> None:
    # 5e-10 at 0.75: within 1e-9 of the value (two values a step tells apart may be that close),
    # past the 12 significant digits tracr rounds its outputs to (5e-13 of 0.75)
    rows = [[k] for k in range(10)]
    line = [0.25 * k + 2.0**-20 for k in range(10)]
    assert (
        exact_affine_fit(rows, [y + (5e-10 if k == 3 else 0) for k, y in enumerate(line)]) is None
    )
    rounded = [float(f"{y:.12g}") for y in line]  # 0.750000953674 for 0.75000095367431640625
    assert rounded != line and exact_affine_fit(rows, rounded) == [0.25, 2.0**-20]


def test_float64_rounding_of_large_terms_that_cancel_is_still_noise() -> None:
    # x1 - x2 of two large fractions: float64 rounds the difference relative to the terms (1e8),
    # so a row where they cancel errs far more than 1e-9 of its own |y|
    rng = np.random.default_rng(0)
    x = 1e8 + rng.integers(0, 1000, size=(40, 2)) / 3
    ys = [a - b for a, b in x.tolist()]
    assert exact_affine_fit(x.tolist(), ys) == [1.0, -1.0, 0.0]


def test_a_nearly_affine_output_agrees_with_the_interpreter() -> None:
    sop = program(NEARLY_AFFINE, "y")
    model = compile_sop(sop, list("abc"), 9, name="y")
    assert model.metadata["certificate"]["ok"]
    agrees_everywhere(sop, model, "abc", 4)  # "a", "aa", ...: both widths 0

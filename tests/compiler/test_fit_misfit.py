"""An affine view is read as its fit, and the fit lets a value miss the line by float64 noise
(`compiler.affine_fits.FIT_NOISE`: a tracr output rounded to 12 digits). That miss is now
carried: the view's reading records a bound on it (`misfit`, in the file's reach), and the
certifier adds it to the error of every linear map that reads the view
(`compiler.bounds.Linear`). Before, nothing carried it: a decision whose margin was smaller than
the miss was certified."""

from __future__ import annotations

import copy
from fractions import Fraction

import numpy as np

from compiler import compile_sop
from compiler.affine_fits import affine_fit, affine_points_misfit, row_misfit
from compiler.bounds import DimErrors, Linear
from compiler.certify import recheck
from compiler.known_affine import known_misfit
from compiler.reach import Reach, Reading
from tests.compiler.limit_checks import agrees_everywhere, program

# affine in w1 but where both widths are 0, 3e-12 above the line (within FIT_NOISE: a view)
NEAR = """
w1 = selector_width(select(tokens, tokens, <));
w2 = selector_width(select(tokens, tokens, >));
y = 0.25 * w1 + 0.00000095367431640625 + (0.000000000003 if w1 == 0 and w2 == 0 else 0);
"""


def _exact_misfit(rows: list[list[float]], ys: list[float], coef: list[float]) -> Fraction:
    return max(
        abs(Fraction(y) - sum(Fraction(x) * Fraction(c) for x, c in zip([*r, 1.0], coef)))
        for r, y in zip(rows, ys)
    )


def test_an_exact_fit_has_no_misfit_and_a_near_one_bounds_its_own() -> None:
    rows = [[w1, w2] for w1 in range(9) for w2 in range(9) if w1 + w2 < 9]
    exact = [0.25 * w1 + 2.0**-20 for w1, _ in rows]
    assert affine_fit(rows, exact) == ([0.25, 0.0, 2.0**-20], 0.0)
    near = [y + (3e-12 if w1 == w2 == 0 else 0.0) for (w1, w2), y in zip(rows, exact)]
    coef, misfit = affine_fit(rows, near)
    assert coef == [0.25, 0.0, 2.0**-20]
    assert misfit >= _exact_misfit(rows, near, coef) > 0


def test_a_misfit_of_inexact_sums_bounds_the_exact_one() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 1000, size=(50, 2)) / 3  # not dyadic: float64 rounds the sums
    ys = [float(f"{a - 2 * b + 0.5:.12g}") for a, b in x.tolist()]
    coef, misfit = affine_fit(x.tolist(), ys)
    assert coef == [1.0, -2.0, 0.5]
    assert misfit >= _exact_misfit(x.tolist(), ys, coef)
    a = np.concatenate([x, np.ones((50, 1))], axis=1)
    assert row_misfit(a, np.array(coef), np.array(ys)) == misfit


def test_the_two_point_fit_and_a_stated_form_bound_theirs() -> None:
    points = [(float(k), float(f"{0.1 * k + 0.3:.12g}")) for k in range(10)]
    (a, b), misfit = affine_points_misfit(points)  # type: ignore[misc]
    worst = max(abs(Fraction(y) - Fraction(a) * Fraction(x) - Fraction(b)) for x, y in points)
    assert misfit >= worst > 0
    assert affine_points_misfit([(float(k), 2 * k + 1) for k in range(5)]) == ((2.0, 1.0), 0.0)
    # Python's `x + y` on whole numbers is exact; on thirds it rounds once
    plus = lambda x, y: x + y  # noqa: E731 (stands for the map's function)
    assert known_misfit(plus, [1.0, 1.0, 0.0], [[0, 1, 2], [3, 4]], [3, 4, 5, 6]) == 0.0
    thirds = [1 / 3, 2 / 3, 4 / 3]
    sums = [x + y for x in thirds for y in thirds]
    assert known_misfit(plus, [1.0, 1.0, 0.0], [thirds, thirds], sums) > 0


def test_a_reading_misfit_is_error_of_every_column_that_reads_it() -> None:
    # one dimension x_1 read as y = 0.25 x_1 + 1 (terms ((1, 0.25), (0, 1.0))), misfit 1e-3
    errors = DimErrors(np.zeros(2), np.zeros(2), np.array([1.0, 8.0]), np.zeros(2, np.int64))
    reading = Reading("y", False, (((1, 0.25), (0, 1.0)),), (1.0, 2.0), ("1", "2"), misfit=1e-3)
    w = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [4.0, -8.0]])  # [one, bos, pad, x_1]
    lin = Linear(w[[0, 3, 1, 2]], np.zeros(2), [reading], [0], errors, (0, 2, 3))
    ev = lin.at([0], np.array([[1.0], [2.0]]))
    # the columns read 4 x_1 and -8 x_1 = 16 y - 16 and -32 y + 32: off by 16 and 32 times it
    assert np.all(ev.error >= np.array([16e-3, 32e-3]))
    plain = Linear(w[[0, 3, 1, 2]], np.zeros(2), [_without(reading)], [0], errors, (0, 2, 3))
    assert np.all(plain.at([0], np.array([[1.0], [2.0]])).error == 0)


def _without(reading: Reading) -> Reading:
    return Reading(reading.name, False, reading.terms, reading.numbers, reading.labels)


def test_a_near_view_records_its_misfit_and_the_certificate_carries_it() -> None:
    sop = program(NEAR, "y")
    model = compile_sop(sop, list("abc"), 9, name="y")
    assert model.metadata["certificate"]["ok"]
    agrees_everywhere(sop, model, "abc", 4)
    reach = Reach.from_json(model.metadata["reach"])
    out = reach.readings[reach.output]
    assert 3e-12 <= out.misfit < 1e-11
    assert Reach.from_json(reach.to_json()) == reach  # the file keeps it
    # a misfit past the snap's margin (half the gap, 0.125) fails the decoder
    meta = copy.deepcopy(model.metadata)
    meta["reach"]["readings"][reach.output]["misfit"] = 0.2
    cert = recheck(model.weights, meta)
    assert not cert.ok
    assert any(not c.ok and c.sublayer == "decoder" for c in cert.checks)
    meta["reach"]["readings"][reach.output].pop("misfit")  # a file written before: 0
    assert recheck(model.weights, meta).ok

"""Maps of two whole numbers that are affine on a few bands of one direction are a few units over
the two numbers (compiler.piecewise), not steps over one with the other's one-hot as context."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import bands, compile_sop, piecewise
from rasp import sops as S
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.runtime_helpers import run_compiled

WIDTHS = """
a = selector_width(select(tokens, tokens, ==));
b = selector_width(select(tokens, "a", ==));
"""


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(f"{WIDTHS}{text}\n", "<test>"))
    return interp.get("res")


def _agrees(root: S.Node, model: object, n: int) -> None:
    rng = random.Random(n)
    inputs = [list(t) for k in range(1, 7) for t in itertools.product("abc", repeat=k)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(7, n))] for _ in range(150)]
    inputs += [[rng.choice("abc") for _ in range(n)] for _ in range(20)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


def _positions(n: int) -> list[tuple[int, int]]:
    return [(i, length) for length in range(1, n + 1) for i in range(length)]


def _evaluate(found: bands.Bands, x: int, y: int) -> float:
    s = found.direction[0] * x + found.direction[1] * y
    band = [b for b in found.bands if b.start <= s][-1]
    return band.coef[0] * x + band.coef[1] * y + band.coef[2]


@pytest.mark.parametrize(
    ("function", "direction", "starts"),
    [
        # i + 1 below the last position, 0 at it: bands of i - length
        (lambda i, n: (i + 1) % n, (1, -1), [-40, -1]),
        # the distance to the nearer end: either side of 2i - length = 0
        (lambda i, n: min(i, n - i - 1), (2, -1), [-40, 0]),
        (lambda i, n: i < n / 2, (2, -1), [-40, 0]),
    ],
)
def test_the_bands_of_a_map_of_the_position_and_the_length(
    function: object, direction: tuple[int, int], starts: list[int]
) -> None:
    rows = [((i, n), function(i, n)) for i, n in _positions(40)]  # type: ignore[operator]
    found = bands.bands_of(rows)
    assert found is not None
    assert found.direction == direction
    assert [b.start for b in found.bands] == starts
    assert all(_evaluate(found, *combo) == float(out) for combo, out in rows)


@pytest.mark.parametrize("shift", [2, 3])
def test_a_rotation_by_more_than_one_is_bands_plus_bands_of_the_short_lengths(shift: int) -> None:
    # (i + shift) % n wraps more than once below length `shift`: bands of i - n from there on,
    # and bands of n for what they leave at the shorter lengths (from shift 4 on, length 3's
    # line is no affine map of i: one step per wrap instead, below)
    rows = [((i, n), (i + shift) % n) for i, n in _positions(40)]
    assert bands.bands_of(rows) is None
    found = bands.fit(rows)
    assert found is not None and len(found) == 2
    assert found[0].direction == (1, -1) and found[1].direction == (0, 1)
    assert all(sum(_evaluate(part, *combo) for part in found) == float(out) for combo, out in rows)
    assert not piecewise.builds(found, piecewise.Encoding.CATEGORICAL, len(rows))


@pytest.mark.parametrize("shift", [4, 5, -5, 16, -16])
@pytest.mark.parametrize("swapped", [False, True])
def test_a_rotation_by_more_is_one_step_per_wrap(shift: int, swapped: bool) -> None:
    # (i + c) % n wraps up to |c| times at the shortest lengths: no few bands hold it, but x + c
    # and one step of height -n along (1, -j) per wrap j (+n along (-1, 1 - j) for c < 0) do
    rows = [((i, n), (i + shift) % n) for i, n in _positions(40)]
    if swapped:
        rows = [((n, i), out) for (i, n), out in rows]
    found = bands.fit(rows)
    assert found is not None and len(found) == abs(shift) + 1
    for j, part in enumerate(found[1:], start=1):
        direction = (1, -j) if shift > 0 else (-1, 1 - j)
        assert part.direction == (direction[::-1] if swapped else direction)
    assert all(sum(_evaluate(part, *combo) for part in found) == float(out) for combo, out in rows)


def test_a_number_modulo_a_smaller_one_is_a_step_per_wrap() -> None:
    # a width modulo the length wraps as often as the width is large: 40 steps at N = 40
    rows = [((w, n), (w + 1) % n) for w in range(41) for n in range(1, 41)]
    found = bands.fit(rows)
    assert found is not None and len(found) == 1 + 41
    assert all(sum(_evaluate(part, *combo) for part in found) == float(out) for combo, out in rows)
    assert piecewise.builds(found, piecewise.Encoding.NUMERICAL, len(rows))


def test_more_wraps_than_an_mlp_may_have_are_no_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [((i, n), (i + 18) % n) for i, n in _positions(40)]  # 18 wraps over 820 rows
    assert bands.fit(rows) is not None
    monkeypatch.setattr(bands, "MAX_WRAP_ROWS", 18 * len(rows) - 1)
    assert bands.fit(rows) is None


def test_a_fit_with_more_units_than_an_mlp_may_have_does_not_build() -> None:
    rows = [((i, n), (i + 18) % n) for i, n in _positions(40)]
    found = bands.fit(rows)
    assert found is not None
    units = 1 + 1 + 18 * (1 + 4)  # the constant, p, and each wrap's component
    assert piecewise.builds(found, piecewise.Encoding.NUMERICAL, piecewise.MAX_MLP_PAIRS // units)
    points = piecewise.MAX_MLP_PAIRS // units + 1
    assert not piecewise.builds(found, piecewise.Encoding.NUMERICAL, points)


@pytest.mark.parametrize(
    "rows",
    [
        [((i, n), i % 5) for i, n in _positions(30)],  # six bands of i
        [((i, n), i * n) for i, n in _positions(10)],  # no band is affine
        [((i + 0.5, n), i) for i, n in _positions(10)],  # not whole numbers
        [((i, n), str(i)) for i, n in _positions(10)],  # not numbers
    ],
)
def test_what_is_no_map_of_a_few_bands(rows: list) -> None:
    assert bands.bands_of(rows) is None


@settings(max_examples=60, deadline=None)
@given(
    direction=st.sampled_from(bands.DIRECTIONS),
    cuts=st.lists(st.integers(-30, 30), min_size=0, max_size=3, unique=True),
    coefs=st.lists(
        st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(-9, 9)),
        min_size=4,
        max_size=4,
    ),
)
def test_bands_reproduce_a_generated_piecewise_affine_map(
    direction: tuple[int, int], cuts: list[int], coefs: list[tuple[int, int, int]]
) -> None:
    cuts = sorted(cuts)

    def f(x: int, y: int) -> int:
        band = sum(direction[0] * x + direction[1] * y >= c for c in cuts)
        a, b, c = coefs[band]
        return a * x + b * y + c

    rows = [((x, y), f(x, y)) for x, y in _positions(16)]
    found = bands.bands_of(rows)
    assert found is not None  # at most len(cuts) + 1 <= MAX_BANDS bands along `direction`
    assert len(found.bands) <= len(cuts) + 1
    assert all(_evaluate(found, *combo) == float(out) for combo, out in rows)


@pytest.mark.exactness
@pytest.mark.parametrize(
    ("text", "n", "most", "before"),
    [
        # the query of a rotation: stepped over the length's 1/(L+1) with the index one-hot as
        # context, 37,870 parameters in 2 layers (772K at N = 256); here 5,438 in 3 (the length
        # decoded first)
        (
            "res = aggregate(select(indices, (indices + 1) % length, ==), tokens);",
            64,
            7_000,
            37_000,
        ),
        (
            "res = indices if indices < length - indices - 1 else length - indices - 1;",
            64,
            5_000,
            27_000,  # (29,000 with the token one-hot it never reads, left out since 2026-12-05)
        ),
        ("res = indices < length / 2;", 64, 5_000, 10_000),
        # wraps twice at length 1: bands of i - length, and of length for that one length
        (
            "res = aggregate(select(indices, (indices + 2) % length, ==), tokens);",
            64,
            7_000,
            40_000,
        ),
        # wraps 5 times at length 1: one step per wrap (45,775 parameters stepped over the
        # length with the index one-hot as context; 773,776 at N = 256, now 19,726)
        (
            "res = aggregate(select(indices, (indices + 5) % length, ==), tokens);",
            64,
            7_000,
            40_000,
        ),
        (
            "res = aggregate(select(indices, (indices - 5) % length, ==), tokens);",
            64,
            7_000,
            38_000,
        ),
        # 18 wraps at length 1: 7,410 parameters in 3 layers, where stepped over the length
        # with the index one-hot as context it took 55,230 in 2
        (
            "res = aggregate(select(indices, (indices + 18) % length, ==), tokens);",
            64,
            9_000,
            50_000,
        ),
        # a width modulo the length or a width: one step per wrap, up to 67 of them (113,659
        # and 141,968 parameters stepped over one number, refused at N = 256; now 13,713 and
        # 14,679, and 49,041 and 50,007 at N = 256). Since `a` is 1..N (5744af6) the second is
        # stepped over b + 1 with a's one-hot as context without the bands: 98,964 (120,867 before)
        ("res = (a + 3) % length;", 64, 15_000, 110_000),
        ("res = (a + 13) % (b + 1);", 64, 15_000, 95_000),
        # three sources (length, indices, b): a table of 125,297 units over 135,200 inputs was
        # refused; over the numbers of its two inputs, 66 steps
        ("res = ((length - indices - 1) + 1) % (b + 1);", 64, 20_000, 0),
        # two widths: the comparison was a source of a table over it and both one-hots (944K);
        # both take 2 layers (a one-hot of a width is decoded too). Without the bands the maps
        # fused over their sources are now tried as well: 23,460 (with a number output; 45,660
        # with the one-hot the default forced) and 5,428 (and 120,867 for `(a + 13) % (b + 1)`),
        # still 4-8 times the banded models
        ("res = a if a < b else b;", 40, 6_000, 20_000),
        ("res = a if a < b else b;", 12, 3_000, 5_000),
    ],
)
def test_a_banded_map_compiles_small_and_agrees_with_the_interpreter(
    text: str, n: int, most: int, before: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _program(text)
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.metadata["certificate"]["errors"] == []
    assert model.param_count() <= most
    _agrees(root, model, n)
    monkeypatch.setattr(piecewise, "fit", lambda rows: None)
    if before == 0:  # refused without the bands
        with pytest.raises(CompileError, match="table MLP"):
            compile_sop(root, list("abc"), n, name="res")
        return
    assert compile_sop(root, list("abc"), n, name="res").param_count() >= before


def test_below_64_positions_a_map_of_the_position_keeps_its_layer() -> None:
    # stepped over the length's 1/(L+1) with the index as context: 2 layers (17,158 parameters
    # at N = 40), where decoding the length for the bands takes 3; from 64 positions on the
    # index one-hot costs more (37,870 against 5,438)
    root = _program("res = aggregate(select(indices, (indices + 1) % length, ==), tokens);")
    assert len(compile_sop(root, list("abc"), 63, name="res").metadata["layers"]) == 2
    assert len(compile_sop(root, list("abc"), 64, name="res").metadata["layers"]) == 3


def test_the_units_are_exact_at_every_point() -> None:
    # pre-activations are dyadic at whole inputs, at least MARGIN from 0: the certifier's bound
    # for the banded MLP is 0 where its inputs are exact (the position, the decoded length)
    root = _program("res = aggregate(select(indices, (indices + 1) % length, ==), tokens);")
    model = compile_sop(root, list("abc"), 64, name="res")
    checks = [c for c in model.metadata["certificate"]["checks"] if c["sublayer"] == "layer 1 mlp"]
    assert checks and all(c["bound"] == 0 and c["margin"] >= piecewise.MARGIN for c in checks)


def test_a_banded_number_is_matched_without_decoding_it_first() -> None:
    # its output is exact in any order (whole inputs, dyadic weights, sums below 2^24): the
    # square that matching reads is built from it directly, not from a whole-number decode
    root = _program(
        "res = aggregate(select(indices, length if indices < length / 2 else 0, ==), tokens);"
    )
    model = compile_sop(root, list("abc"), 64, name="res")
    names = [block["name"] for layer in model.metadata["layers"] for block in layer["mlp"]]
    assert "_map_3.sq" in names and "_map_3.int" not in names


def test_a_categorical_band_holds_one_value_by_type_too() -> None:
    """`1 if 2 * indices < length else 1.0` is the number 1 everywhere: one constant band, whose
    value is its first row's, 1. Built as a one-hot it would write 1.0's points to 1's column,
    where a table reading it lists 1.0 (the bug context steps had): it is not built so."""
    rows = [((i, n), 1 if 2 * i < n else 1.0) for i, n in _positions(12)]
    found = bands.fit(rows)
    assert found is not None and len(found[0].bands) == 1 and found[0].bands[0].value == 1
    assert piecewise.builds(found, piecewise.Encoding.CATEGORICAL, len(rows))
    assert not piecewise.one_value_per_band(found, rows)
    ints = [((i, n), 1) for (i, n), _ in rows]
    assert piecewise.one_value_per_band(bands.fit(ints), ints)

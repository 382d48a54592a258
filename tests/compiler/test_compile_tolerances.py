"""The compile side's tolerances (docs/compiler.md, 'Compile-side tolerances'): what each one
decides, and that a difference within it cannot make a certified model wrong. Where a tolerance
only picks the construction to try or a refusal's words, the certificate checks the result
on its own; where it says something to the user, the words are true."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from compiler import compile_sop
from compiler.certificate import Certificate
from compiler.certify import recheck
from compiler.fits import FLOAT64_NOISE
from compiler.model import CompiledModel
from compiler.twin_gaps import Gap, gap, gap_words
from rasp.errors import CompileError
from tests.compiler.limit_checks import agrees_everywhere, program

BIG = 2**53  # float64 holds whole numbers only from here: 2^53 + 2 is one, 2^53 + 1 is none


def _recheck(model: CompiledModel, edit: dict[str, np.ndarray] | None = None) -> Certificate:
    meta: Any = json.loads(json.dumps(model.metadata))
    return recheck({**model.weights, **(edit or {})}, meta)


def _refusal(text: str, vocab: list, max_len: int = 3) -> str:
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "res"), vocab, max_len, name="res")
    rendered = refused.value.render()
    assert "<test>:" in rendered  # located
    return rendered


# -- twins' words: only a gap of a few units in the last place is called rounding's -------------


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (2 / 3, 0.6666666666666669, Gap.ROUNDING),
        (1.0, 1.0 + 2**-52, Gap.ROUNDING),
        (BIG, BIG + 2, Gap.WHOLES),
        (float(BIG), float(BIG + 2), Gap.WHOLES),
        (BIG, BIG + 1, Gap.WHOLES),  # (ints compared exactly: float(2^53 + 1) is 2^53)
        (10**9, 10**9 + 1, Gap.WHOLES),
        (2e-9, 1.3e-9, Gap.NEAR),
        (0.0, 1e-14, Gap.NEAR),
        (1.0, 1.0 + 1e-10, Gap.NEAR),
    ],
)
def test_a_twins_gap_is_named_for_what_it_is(a: float, b: float, kind: Gap) -> None:
    assert gap(a, b) is kind and gap(b, a) is kind
    words = gap_words(a, b, FLOAT64_NOISE)
    assert ("float64 rounding" in words) == (kind is Gap.ROUNDING)


def test_whole_numbers_past_2_53_in_a_select_are_not_called_rounding() -> None:
    # 2^53 and 2^53 + 2 are two float64 numbers, which no rounding of one number gives: the
    # refusal said they "differ only by float64 rounding"
    text = "x = aggregate(select(indices, indices, ==), tokens_int); res = aggregate(select(x, x, <), x);"
    rendered = _refusal(text, [BIG, BIG + 2, 5])
    assert "float64 rounding" not in rendered
    assert "different whole numbers closer than 1e-09 (relative)" in rendered
    assert "<test>:1:" in rendered


def test_numbers_7e_10_apart_in_a_map_are_not_called_rounding() -> None:
    # 2e-9 and 1.33e-9: no rounding of numbers this size leaves 7e-10
    text = (
        "x = aggregate(select(tokens, tokens, ==), indices * 0.000000001); res = x > 0.0000000015;"
    )
    rendered = _refusal(text, list("abc"))
    assert "float64 rounding" not in rendered
    assert (
        "gives True at 2e-09 and False at 1.3333333333333335e-09, numbers closer than 1e-09"
        in rendered
    )


# -- noisy_sides: whether a map of two means is a·x + b·y decides a hint's words only ------------


@pytest.mark.parametrize(
    ("fn", "ab"),
    [
        (lambda x, y: x - y, (1.0, -1.0)),
        (lambda x, y: 0.1 * x + 0.3 * y, (0.1, 0.3)),
        (lambda x, y: 2 * x - 0.5 * y, (2.0, -0.5)),
        # 1e-10 off the line at a probe: no vote of one mean gives these values (the old absolute
        # 1e-9 took it for x - y, and the hint named a rewrite that computes something else)
        (lambda x, y: x - y + 1e-10 * x * y, None),
        (lambda x, y: 1e-3 * x + 1e-3 * y + 1e-11 * x * y, None),
    ],
)
def test_a_map_is_named_a_vote_only_where_it_is_a_line(fn, ab) -> None:  # noqa: ANN001
    from types import SimpleNamespace

    from compiler.noisy_sides import _coefficients

    assert _coefficients(SimpleNamespace(fn=fn)) == ab


# -- uniform._MAP_ERROR: keys affine in indices differ only where float64's rounding cannot merge them


def _keys_rounded(scale: int):  # noqa: ANN202 (the graph, its sets, and the graph with t Rounded)
    import dataclasses

    from compiler.graph import build_graph
    from compiler.rounded import Rounded
    from compiler.values import infer_values
    from tests.compiler.test_total_orders import _program

    text = 'm = aggregate(select(tokens, "a", ==), indices);\n'
    text += f"t = indices * 0.00000095367431640625 + m * {scale};\n"
    text += "res = aggregate(select(t, indices, ==), indices);"
    graph = build_graph(_program(text))
    t = next(n for n in graph.nodes if n.name == "t")
    rounded = Rounded(t.fn)
    nodes = tuple(dataclasses.replace(n, fn=rounded) if n is t else n for n in graph.nodes)
    other = dataclasses.replace(graph, nodes=nodes)
    return graph, other, t, rounded, infer_values


def test_a_map_rounded_to_12_digits_is_not_taken_as_its_affine_form() -> None:
    # indices * 2^-20 + m * 30000: float64's roundings (3e-11 at most) leave the keys 2^-20 apart,
    # which the 1e-12 bound proves; rounded to 12 digits (a tracr output map's 5e-12: steps of
    # 1e-6 there) positions share keys, and the old proof, seeing through the rounding, said
    # none did. Only the program's output is so rounded, and no select reads it: this pins it.
    graph, rounded_graph, t, rounded, infer_values = _keys_rounded(30000)
    sets = infer_values(graph, list("abc"), 7)
    select = graph[graph.root].inputs[0]
    assert sets.at_most_one[select]  # float64 keys: proved apart
    m = next(n for n in graph.nodes if n.name == "m")
    merged = [
        v
        for v in sets.values[m.index]
        if len({rounded(i * 0.00000095367431640625, v * 30000) for i in range(7)}) < 7
    ]
    assert merged  # rounded keys that two positions share
    assert not infer_values(rounded_graph, list("abc"), 7).at_most_one[select]


# -- interpolate.SLOPE_NOISE: slopes within 1e-10 are one, and the certificate counts the miss ----

PREFIX = 'q = aggregate(select(indices, indices, <=), indicator(tokens == "a"));'


def test_slopes_within_slope_noise_are_one_and_the_line_misses_by_what_they_hide() -> None:
    from compiler.interpolate import _line

    # 2e6·q - 1e6 with a jump of 1e-5 at q = 1/2: the slope there differs by 3e-11 (relative),
    # taken as float64 noise, so the line misses every point from 1/2 on by 1e-5
    qs = sorted({k / n for n in range(1, 5) for k in range(n + 1)})
    points = [(q, q * 2000000 - 1000000 + (q >= 0.5) * 0.00001) for q in qs]
    line = _line(points)
    assert line is not None and len(line.kinks) == 1  # one slope: no kink at 1/2
    at = [line.ys[0] + sum(c * max(x - k, 0.0) for k, c in zip(line.at, line.kinks)) for x in qs]
    miss = max(abs(a - y) for a, (_, y) in zip(at, points))
    assert 0.9e-5 < miss < 1.1e-5


def test_a_line_that_misses_is_certified_with_the_miss_as_error_and_agrees() -> None:
    text = PREFIX + "res = q * 2000000 - 1000000 + (q >= 0.5) * 0.00001;"
    sop = program(text, "res")
    model = compile_sop(sop, list("ab"), 4, name="res")
    assert any(m.get("continuous") for m in model.metadata["reach"]["mlps"])
    agrees_everywhere(sop, model, list("ab"), 4)


def test_the_certificate_compares_an_interpolant_with_the_program_at_every_point() -> None:
    # what SLOPE_NOISE leaves out (a kink) is a difference the certificate finds on its own:
    # without the kink at 1/2 the line misses the jump of 50, and the decoder's snap fails
    text = PREFIX + "res = q * 1000 + (q >= 0.5) * 50;"
    model = compile_sop(program(text, "res"), list("ab"), 4, name="res")
    assert any(m.get("continuous") for m in model.metadata["reach"]["mlps"])
    assert _recheck(model).ok
    w_out = model.weights["blocks.0.mlp.W_out"].copy()
    kinks = np.flatnonzero(w_out.any(axis=1))
    assert len(kinks) == 3  # 1000 from 0, +300 at 1/3, -300 at 1/2
    w_out[kinks[-1]] = 0.0
    cert = _recheck(model, {"blocks.0.mlp.W_out": w_out})
    assert not cert.ok
    assert any(c.kind == "snap" and not c.margin > c.bound for c in cert.checks)


# -- programs aimed at the compile-side tolerances: each certified and right on every input ------

CERTIFIED = [
    # keys affine in indices beside a big uniform: float64 merges 2^53 + 1 into 2^53 (and
    # 2^52 + 0.5 into 2^52), the 1e-12 bound declines the proof, and the values tried show it:
    # the select averages two keys, as the interpreter does
    (
        [1, 2, 4],
        "u = length * 0 + 9007199254740992.0; res = aggregate(select(indices + u, u, ==), tokens_int);",
    ),
    (
        [1, 2, 4],
        "u = length * 0 + 4503599627370496.0; res = aggregate(select(indices * 0.5 + u, u + 0.5, ==), tokens_int);",
    ),
    # ... and beside 10^11 (float64 exact) the proof holds
    (
        list("abc"),
        "u = length * 0 + 100000000000; res = aggregate(select(indices + u, u + 1, ==), tokens);",
    ),
    (
        [1, 2, 4],
        "u = length * 1000000000000; res = aggregate(select(indices + u, u + length - 1, ==), tokens_int);",
    ),
    # slopes that almost interpolate (curvature 1e-10, a jump of 1e-6 on a slope of 1e6)
    (list("ab"), PREFIX + "res = q * 3 + q * q * 0.0000000001;"),
    (list("ab"), PREFIX + "res = q * 1000000 + (q > 0.5) * 0.000001;"),
    (list("ab"), PREFIX + "res = round(q * 1000000000) + (q > 0.5);"),
    # maps 5e-12 off a line (within an affine fit's FIT_NOISE of 1e-11)
    ([0.5, 1.0, 2.0], "res = tokens_float * 3 + (tokens_float == 0.5) * 0.000000000005;"),
    (
        [0.5, 1.0, 2.0],
        "res = aggregate(select(indices, indices, <=), "
        "tokens_float * 3 + (tokens_float == 0.5) * 0.000000000005);",
    ),
    # a difference of two means 1e-10·o·c off a vote; sums of means near 1
    (
        list("ab"),
        PREFIX + 'c = aggregate(select(indices, indices, <=), indicator(tokens == "b"));'
        "res = q - c + q * c * 0.0000000001;",
    ),
    (
        list("ab"),
        PREFIX + 'c = aggregate(select(indices, indices, <=), indicator(tokens == "b"));'
        "res = (q + c) > 0.9999999999;",
    ),
    # values across FLOAT64_NOISE: tokens 1e-9 apart, outputs 9e-10 apart
    ([1.0, 1.000000001, 2.0], "res = tokens_float > 1.0000000005;"),
    (list("abc"), "res = aggregate(select(indices, indices, <=), indices * 0.0000000009 + 1);"),
    # different whole numbers past 2^53, read as tokens and copied
    (
        [BIG, BIG + 2],
        "x = aggregate(select(indices, indices, ==), tokens_int); res = x == 9007199254740994;",
    ),
    (
        [BIG, BIG + 2, 5],
        "x = aggregate(select(indices, indices, ==), tokens_int); res = x > 9007199254740993;",
    ),
    ([BIG, BIG + 2], "res = tokens_int == 9007199254740992;"),
]


@pytest.mark.parametrize(("vocab", "text"), CERTIFIED)
def test_tolerance_point_programs_certify_and_agree(vocab: list[Any], text: str) -> None:
    sop = program(text, "res")
    model = compile_sop(sop, vocab, 3, name="res")
    assert model.metadata["certificate"]["ok"]
    agrees_everywhere(sop, model, vocab, 3)


REFUSED = [
    (
        [1.0, 1.0000000011, 2.0],
        "res = aggregate(select(tokens_float, tokens_float, <), tokens_float);",
        "a snap decision has margin 0",
    ),
    (
        [0.0, 0.000000003],
        "x = aggregate(select(indices, indices, <=), tokens_float); res = x > 0.0000000015;",
        "gives True at 2e-09 and False at 1.5e-09, numbers closer than 1e-09",
    ),
]


@pytest.mark.parametrize(("vocab", "text", "reason"), REFUSED)
def test_tolerance_point_programs_are_refused_located(vocab: list[Any], text: str, reason: str):
    rendered = _refusal(text, vocab)
    assert reason in rendered and "<test>:1:" in rendered


def test_keys_float64_merges_are_averaged_by_the_interpreter_too() -> None:
    # the first program above means what its comment says: 1 + 2^53 is 2^53 in float64
    from rasp.sops import evaluate

    text = "u = length * 0 + 9007199254740992.0; res = aggregate(select(indices + u, u, ==), tokens_int);"
    assert list(evaluate(program(text, "res"), [1, 2, 4]).values) == [1.5, 1.5, 1.5]


# -- bounds.SLACK: what 1 + 1e-9 covers ----------------------------------------------------------


def test_slack_covers_float64_sums_of_millions_of_terms() -> None:
    # a bound summed from k non-negative float64 terms (any order) is within k·2^-53 of the
    # exact sum: SLACK covers sums of up to 2^23 terms per stage (a layer's widest sums are
    # d_model or d_mlp wide, 10^4 to 10^5)
    from compiler.bounds import SLACK

    assert 2**23 * 2.0**-53 < SLACK - 1.0


def test_gamma_leaves_room_for_the_float64_error_of_a_margin() -> None:
    # a decision compares |pre| (float64's value of the exact pre-activation) with
    # (input error + own)·SLACK. float64 misses pre by at most (3n + 3)·2^-53·S (n non-zero
    # products, each part a product and a quotient); the float32 error of any order is at most
    # n·u·S (Jeannerod and Rump, 2013), and `own` counts gamma_n·S: its excess over n·u·S covers
    # that miss for every n (and where own is 0 the column is exact in float64 too)
    from compiler.bounds import U, gamma

    for n in [1, 2, 3, 10, 1000, 2**20]:
        room = float(gamma(n)) - n * U
        assert room > (3 * n + 3) * 2.0**-53, n


def test_a_tracr_output_rounded_to_12_digits_is_still_its_line() -> None:
    from types import SimpleNamespace

    from compiler.noisy_sides import _coefficients
    from compiler.rounded import Rounded

    third = Rounded(lambda x, y: x / 3 - y / 3)  # 12 digits: 5e-12 off the line at a probe
    assert _coefficients(SimpleNamespace(fn=third)) == (1 / 3, -1 / 3)

"""The compile side's tolerances (docs/compiler.md, 'Compile-side tolerances'): what each one
decides, and that a difference within it cannot make a certified model wrong. Where a tolerance
only picks the construction to try or a refusal's words, the certificate checks the result
on its own; where it says something to the user, the words are true."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from compiler.fits import FLOAT64_NOISE
from compiler.twin_gaps import Gap, gap, gap_words
from rasp.errors import CompileError
from tests.compiler.limit_checks import program

BIG = 2**53  # float64 holds whole numbers only from here: 2^53 + 2 is one, 2^53 + 1 is none


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

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

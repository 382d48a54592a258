"""The prelude (the original's rasplib): each function's values, and the primitives behind it."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.errors import RaspError
from rasp.sops import AggregateSOp, MapSOp, SelectorWidthSOp, evaluate
from tests.rasp.interpreting import run, seq, value


def test_primitives_length_and_selector_width() -> None:
    i = run("w = selector_width(select(tokens, tokens, ==));")
    assert isinstance(i.get("w"), SelectorWidthSOp)
    assert list(evaluate(i.get("w"), "hello").values) == [1, 1, 2, 2, 1]
    assert list(evaluate(i.get("length"), "abcd").values) == [4] * 4


@pytest.mark.parametrize(
    ("expr", "tokens", "expected"),
    [
        ('count(tokens, "l")', "hello", [2] * 5),
        ('contains(tokens, "z")', "ab", [False, False]),
        ("average(indices)", "abcd", [1.5] * 4),
        ("load_from_location(tokens, 1)", "abc", ["b"] * 3),
        ('shift(tokens, 2, "_")', "abcd", ["_", "_", "a", "b"]),
        ('mark_first_instance(tokens, "l")', "hello", [False, False, True, False, False]),
        ('mark_last_instance(tokens, "l")', "hello", [False, False, False, True, False]),
        ("has_focus(select(indices, 1, <))", "abc", [True] * 3),
        ("has_focus(select(indices, indices, <))", "abc", [False, True, True]),
        ("sort(tokens, tokens)", "hello", list("ehllo")),
        ("sort(tokens, -indices)", "abc", list("cba")),
        ('aggregate(select_from_last(tokens, "l"), indices)', "hello", [3] * 5),
        ('aggregate(select_from_first(tokens, "l"), indices)', "hello", [2] * 5),
        ("aggregate(select_next_identical(tokens), indices, -1)", "abab", [2, 3, -1, -1]),
    ],
)
def test_prelude(expr: str, tokens: str, expected: list[Any]) -> None:
    assert seq(f"x = {expr};", tokens) == expected


def test_full_s_selects_everything() -> None:
    assert evaluate(value("x = full_s;"), "ab").tolist() == [[True, True], [True, True]]


@pytest.mark.parametrize(
    ("sop", "atom", "tokens"),
    [
        ("tokens", '"a"', "abcab"),
        ("tokens", "tokens", "aba"),
        ("indices", "2", "abcd"),
        ("tokens_int", "1", [1, 2, 1, 1]),
        ("tokens_int", "tokens_int % 2", [1, 2, 0, 3]),
        ("tokens", '"z"', "ab"),
        ("tokens", '"a"', "a"),
    ],
)
def test_count_gives_the_originals_values(sop: str, atom: str, tokens: Any) -> None:
    """The prelude counts with a selector_width; the original's formula gives the same ints."""
    i = run(
        f"ours = count({sop}, {atom});"
        f"theirs = round(length * aggregate(full_s, indicator({sop} == {atom})));"
    )
    ours, theirs = evaluate(i.get("ours"), tokens).values, evaluate(i.get("theirs"), tokens).values
    assert list(ours) == list(theirs) and all(type(v) is int for v in ours)


@pytest.mark.parametrize(
    ("seq", "atom"), [("1", '"a"'), ("1", "1"), ('"ab"', '"ab"'), ("[1]", "1")]
)
def test_count_of_an_atom_fails_as_the_originals_indicator_does(seq: str, atom: str) -> None:
    """`seq == atom` of two atoms is a bool, and the original's `indicator` of it fails; a
    selector_width over `select(False, True, ==)` would count 0 (tokens rebound to 1 did that)."""
    with pytest.raises(RaspError, match="indicator operator expects s-op, got: (True|False)"):
        run(f"x = count({seq}, {atom});")


def test_atom_in_sop_is_an_attention_over_full_s() -> None:
    i = run('x = "a" in tokens;')
    node = i.get("x")
    assert isinstance(node, MapSOp) and isinstance(node.inputs[0], AggregateSOp)
    assert node.inputs[0].selector is i.get("full_s")
    assert list(evaluate(node, "bab").values) == [True] * 3
    assert list(evaluate(node, "bcb").values) == [False] * 3

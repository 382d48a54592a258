"""rasp_gen_prec: its flat expressions reach every precedence level unparenthesized, and a
respaced statement means what it meant (the same parse), so that a divergence it finds is the
spacing's or the precedence's, never the generator's."""

from __future__ import annotations

import random

import pytest
from lark.exceptions import LarkError

from rasp.parser import lark_parser
from tests.compat.rasp_gen import generate
from tests.compat.rasp_gen_prec import expression, respaced


def _parsed(text: str) -> object:
    try:
        return lark_parser().parse(text + "\n")
    except LarkError:
        return "no parse"


def test_flat_expressions_mix_every_level_unparenthesized() -> None:
    rng = random.Random(0)
    texts = [expression(rng.random() < 0.5, rng) for _ in range(600)]
    words = " ".join(texts)
    for op in (" + ", " - ", " * ", " / ", " % ", " ^ ", " == ", " < ", " >= ", " and ", " or "):
        assert op in words, op
    assert any(" in " in t and " if " in t for t in texts)
    assert any(t.count(" if ") >= 2 for t in texts)  # ternaries nested
    assert any("not -" in t or "- -" in t or "-+" in t for t in texts)  # prefix chains
    assert any(" not " in t and " == " in t for t in texts)
    assert any(' or "' in t for t in texts)  # `x == "a" or "b"`
    assert all(_parsed(f"{t};") != "no parse" for t in texts)


def test_respaced_statements_parse_as_before() -> None:
    statements = [
        s
        for program in generate(0, 40)
        for s in program.statements
        if "\n" not in s and not s.startswith(("set ", "show ", "examples", "s-op", "full seq"))
    ]
    assert len(statements) > 300
    changed = 0
    for k, text in enumerate(statements):
        spaced = respaced(text, random.Random(k))
        changed += spaced != text
        assert _parsed(spaced) == _parsed(text), (text, spaced)
    assert changed > len(statements) // 2


@pytest.mark.parametrize(
    ("text", "tight"),
    [
        ("x = - 1;", "x= -1;"),
        ('y = tokens == "a" or "b";', 'y=tokens=="a"or"b";'),
        ("z = = 1;", "z= =1;"),  # two operator characters stay two tokens
        ('"a b" + c;  # a = b', '"a b"+c; # a = b'),  # strings and comments untouched
    ],
)
def test_tight_spacing(text: str, tight: str) -> None:
    outs = {respaced(text, random.Random(seed)) for seed in range(40)}
    assert tight in outs

"""rasp_gen_types: its s-ops mix values of every type the original's sequences hold, they are used
in every way the block promises, and every statement it writes parses (a divergence it finds is
the types', never the generator's)."""

from __future__ import annotations

import random

from tests.compat.parse_check import parses
from tests.compat.rasp_gen import generate
from tests.compat.rasp_gen_types import mixed_sop, typed


def test_mixed_sops_choose_between_types() -> None:
    rng = random.Random(0)
    texts = [mixed_sop(rng, rng.random() < 0.5, 2) for _ in range(400)]
    words = " ".join(texts)
    for piece in ("True", "False", "-0.0", "1.0", "0.5", '"x"', "tokens", "indices > 1"):
        assert f" {piece} " in f" {words} ".replace("(", " ").replace(")", " "), piece
    assert any(t.count(" if ") >= 2 for t in texts)  # nested
    assert all(parses(f"x = {t};") for t in texts)


def test_blocks_use_the_sops_every_way_and_parse() -> None:
    statements = [
        s for seed in range(60) for s in typed([], "p_", seed % 2 == 0, random.Random(seed))
    ]
    assert len(statements) > 100
    words = "\n".join(statements)
    for use in (
        "aggregate(select(indices, indices,",
        "selector_width(select(p_ty",
        "indicator(p_ty",
        "round(p_ty",
        "not p_ty",
        " in [",
        '{1: "a", True: "b", 0: "c"}[p_ty',
        '"abc"[p_ty',
        "full seq display on",
        "full seq display off",
        ', "x");',
    ):
        assert use in words, use
    assert all(parses(s) for s in statements if not s.startswith("full seq"))


def test_generated_programs_hold_the_blocks() -> None:
    programs = generate(0, 30)
    assert sum(any("_ty" in s for s in p.statements) for p in programs) > 10

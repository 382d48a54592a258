"""rasp_gen_iter: its loops, comprehensions and unpackings reach every kind of iterable and every
count of names, nest, shadow, and parse (a divergence it finds is the iteration's, never the
generator's)."""

from __future__ import annotations

import random

from tests.compat.parse_check import parses
from tests.compat.rasp_gen import generate
from tests.compat.rasp_gen_iter import iterated


def test_blocks_reach_every_iteration_and_parse() -> None:
    statements = [s for seed in range(300) for s in iterated([], "p_", random.Random(seed))]
    assert len(statements) > 150
    words = "\n".join(statements)
    for form in (
        "for p_it",
        ", p_it",  # several names
        "_c in ",  # three names
        ' in "abc"',
        ' in {"ab": 1',
        " in range(0, 5, 0)",
        " in zip(",
        " in indices",
        " in 5 ",
        "for p_it",
        "_i in p_it",  # nested comprehension over an outer name
        "_r = {",  # dict comprehension
        " = 7;",  # a shadowed name
        ' = "xy";',  # unpacked assignment
    ):
        assert form in words, form
    assert all(parses(s) for s in statements)


def test_generated_programs_hold_the_blocks() -> None:
    programs = generate(0, 30)
    assert sum(any("_it" in s for s in p.statements) for p in programs) > 10

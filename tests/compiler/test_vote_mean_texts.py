"""RASP's pair balance, `opens - closes` of two prefix means, compared with a constant: the
select reads one mean of the keys' votes (compiler.vote_means), certified at N = 10 (refused
from N = 10 before, a relu margin of 3 against a float32 error of 7.44 at N = 16)."""

from __future__ import annotations

import itertools
import random

import pytest

from compiler import compile_sop
from compiler.forms import prepare
from rasp import sops as S
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.runtime_helpers import run_compiled

BALANCE = """opens = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
closes = aggregate(select(indices, indices, <=), indicator(tokens == "b"));
bal = opens - closes;
"""


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(BALANCE + text, "<test>"))
    return interp.get("res")


def test_a_count_of_the_balance_compiles_and_is_exact() -> None:
    root = _program("res = selector_width(select(bal, -1, ==));")
    n = 10
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.param_count() < 2_000
    rng = random.Random(0)
    inputs = [list(t) for k in range(1, 7) for t in itertools.product("abc", repeat=k)]
    inputs += [[rng.choice("abc") for _ in range(rng.randint(7, n))] for _ in range(300)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("res = selector_width(select(bal, -1, ==));", True),
        ("res = selector_width(select(0, bal, <));", True),
        # 0.3 - 0.2 == 0.1 is False, 0.2 - 0.1 == 0.1 True: not a function of the vote mean
        ("res = selector_width(select(bal, 0.1, ==));", False),
        ("res = bal * 2;", False),  # its last bits are read
    ],
)
def test_what_is_read_as_a_vote_mean(text: str, rewritten: bool) -> None:
    root = _program(text)
    new = prepare(root, list("abc"), 10, votes=True)
    notes = [x.note for x in S.walk(new) if x.note and "a table over" in x.note]
    assert bool(notes) == rewritten

"""A difference of two 0/1 means over one selector, read through maps that depend on it as a
number, is read as one mean of the keys' votes (compiler.vote_means): tracr's
`make_count(make_pair_balance(tokens, "a", "b"), -1)` was refused from N = 10 (the key read
opens - closes, 5.7e-5 of float error); it is certified at N = 10, 16 and 32 now."""

from __future__ import annotations

import itertools
import random

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.forms import prepare
from compiler.vote_means import _combinations
from rasp import sops as S
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.tracr import lib
from rasp.tracr.lower import to_sops

VOCAB = ["a", "b", "c"]


def _inputs(n: int, exhaustive: int, samples: int) -> list[list[str]]:
    short = [list(t) for k in range(1, exhaustive + 1) for t in itertools.product(VOCAB, repeat=k)]
    rng = random.Random(0)
    longer = [
        [rng.choice(VOCAB) for _ in range(rng.randint(exhaustive + 1, n))] for _ in range(samples)
    ]
    return short + (longer if n > exhaustive else [])


def _tables(program: rasp.SOp, n: int) -> list[str]:
    """The notes of the readers rewritten as tables over a vote mean."""
    root = prepare(to_sops(program), VOCAB, n, votes=True)
    return [x.note for x in S.walk(root) if x.note and "a table over" in x.note]


def test_the_count_of_a_pair_balance_compiles_and_is_exact() -> None:
    program = lib.make_count(lib.make_pair_balance(rasp.tokens, "a", "b"), -1)
    n = 10
    model = compile_sop(program, VOCAB, n)  # refused before: a relu margin 3, error 3.45
    assert model.param_count() < 2_000
    inputs = _inputs(n, 6, 300)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs


@pytest.mark.parametrize(
    ("reader", "rewritten"),
    [
        (lambda x: x < 0, True),  # a function of the rational value
        (lambda x: x == -1, True),
        # 0.3 - 0.2 is 0.09999999999999998 in float64, 0.2 - 0.1 is 0.1: the program's answer is
        # not a function of the rational value (nor, then, of the vote mean): kept
        (lambda x: x == 0.1, False),
        (lambda x: x + 0, False),  # the difference's last bits are read: kept
        (lambda x: str(x), False),
    ],
)
def test_a_reader_becomes_a_table_only_where_it_is_a_function_of_the_vote_mean(
    reader, rewritten: bool
) -> None:
    balance = lib.make_pair_balance(rasp.tokens, "a", "b")
    # (read by a SequenceMap, not the output: tracr's output map is rounded to 12 digits)
    program = rasp.SequenceMap(lambda x, t: x, rasp.Map(reader, balance), rasp.tokens)
    assert bool(_tables(program, 10)) == rewritten
    # the rewritten graph is the program on every input, to the last bit (the model is then
    # certified against it)
    root = prepare(to_sops(program), VOCAB, 10, votes=True)
    for xs in _inputs(10, 5, 200):
        want, got = S.evaluate(to_sops(program), xs).values, S.evaluate(root, xs).values
        assert all(same_value(g, w) and type(g) is type(w) for g, w in zip(got, want)), xs


def test_the_combinations_limit() -> None:
    # a + b <= w where no key votes for both (tokens "a" and "b"): C(N + 3, 3) - 1 of them
    assert _combinations(list(range(1, 83)), both=False) is not None
    assert _combinations(list(range(1, 84)), both=False) is None
    assert _combinations(list(range(1, 66)), both=True) is not None
    assert _combinations(list(range(1, 67)), both=True) is None

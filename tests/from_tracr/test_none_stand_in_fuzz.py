"""Seeded probes of `compiler.resolve._none_as_number` (a copy of one key's number with tracr's
default None copies a number standing in for None, mapped back after it): copies of prefix means,
of maps of the tokens and of `tokens + indices`, shifted by k, read by maps that tell None, the
stand-in's own number (`floor(least value) - 1`) and the least value apart. Each model the
compiler accepts must equal the interpreter. A stand-in that one of the copied values can equal
(the least value's floor itself) fails 4 of these; 6 of the 12 take the stand-in."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.tracr import lib

SOURCES = ["prefix mean", "2t - 1", "t + i"]


def _case(seed: int) -> tuple[str, Any, list[Any], int]:
    rng = random.Random(seed)
    vocab = rng.sample([-3, -2, -1, 0, 1, 2, 3, 5, 7, 0.5, 1.5, -0.5], rng.randint(2, 4))
    max_len = rng.randint(3, 6)
    source = rng.choice(SOURCES)
    tokens = rasp.numerical(rasp.Map(lambda v: v, rasp.tokens))
    if source == "prefix mean":
        x, least = lib.make_frac_prevs(tokens), min(vocab)
    elif source == "2t - 1":
        x, least = rasp.numerical(rasp.Map(lambda v: v * 2 - 1, rasp.tokens)), 2 * min(vocab) - 1
    else:
        x = rasp.numerical(rasp.SequenceMap(lambda v, i: v + i, rasp.tokens, rasp.indices))
        least = min(vocab)
    k = rng.randint(1, max_len - 1)
    shifted = lib.shift_by(k, x)
    marker = math.floor(least) - 1

    def reader(v: Any) -> str:
        if v is None:
            return "None"
        return "stand-in" if v == marker else "least" if v == least else "other"

    program = rasp.Map(reader, shifted)
    return f"seed {seed}: {source} shifted by {k}, vocab {vocab}", program, vocab, max_len


@pytest.mark.parametrize("seed", range(12))
def test_copies_with_a_none_stand_in_agree(seed: int) -> None:
    name, program, vocab, max_len = _case(seed)
    try:
        model = compile_sop(program, vocab, max_len)
    except CompileError:
        return  # nothing promised
    inputs = [
        list(t) for n in range(1, min(4, max_len) + 1) for t in itertools.product(vocab, repeat=n)
    ]
    rng = random.Random(seed)
    inputs += [rng.choices(vocab, k=max_len) for _ in range(60)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert len(got) == len(want) and all(map(same_value, got, want)), (name, xs, got, want)

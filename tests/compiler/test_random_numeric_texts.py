"""Differential fuzzing of numbers: random programs of means, maps of means, means compared,
widths of compound selectors, nested aggregates, lookups and position arithmetic
(random_numeric_texts.py), compiled, run and compared with the interpreter on every short input
and on inputs of the maximum length shaped to meet edge cases (one token throughout, two
alternating, runs, one odd token at an end), in one padded batch of mixed lengths and one at a
time. The generator found three certified models that differed from the interpreter (equal
numbers of two types: tests/compiler/test_number_twins.py, tests/compiler/test_values.py)."""

from __future__ import annotations

import itertools
import random

import pytest
from random_numeric_texts import random_numeric_program
from test_compile import all_inputs, check_inputs

from compiler import compile_sop
from rasp.errors import CompileError, RaspError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp, evaluate
from tests.runtime_helpers import as_runtime

# seeds whose programs compile (models of 2 to 5 layers) and check in under a second each; the
# others of 0-129 are refused, fail in the interpreter, or take longer
SEEDS = [41, 57, 59, 77, 78, 81, 97, 100, 101, 104, 106, 108, 109, 119, 122, 129]


def shaped_inputs(vocab: list[str], n: int, rng: random.Random) -> list[list[str]]:
    """Inputs of lengths n and n - 1 that random ones rarely are: one token throughout, two
    alternating, two halves, one odd token at either end, runs."""
    out: list[list[str]] = []
    for m in sorted({n, max(1, n - 1)}):
        out += [[t] * m for t in vocab]
        for a, b in itertools.permutations(vocab, 2):
            out.append([a if i % 2 == 0 else b for i in range(m)])
            out.append([a] * (m // 2) + [b] * (m - m // 2))
            out.append([a] * (m - 1) + [b])
        for _ in range(4):
            run: list[str] = []
            while len(run) < m:
                run += [rng.choice(vocab)] * rng.randint(1, 4)
            out.append(run[:m])
    return out


@pytest.mark.exactness
@pytest.mark.parametrize("seed", SEEDS)
def test_random_numeric_programs_compile_exactly_or_are_refused(seed: int) -> None:
    text, vocab, max_len = random_numeric_program(seed)
    try:
        sop = load_source(Source("<random>", text)).get("res")
    except RaspError:
        pytest.fail(f"the generator's text does not load:\n{text}")
    assert isinstance(sop, SOp)
    try:
        model = compile_sop(sop, vocab, max_len)
    except CompileError:
        return  # a refusal keeps the promise (the seeds were picked where it compiles)
    rng = random.Random(seed)
    short = min(max_len, 4 if len(vocab) <= 2 else 3)
    inputs = all_inputs(vocab, short) + shaped_inputs(vocab, max_len, rng)
    rng.shuffle(inputs)  # mixed lengths in the batch: padding is exercised
    runtime = as_runtime(model)  # (built once: check_inputs takes either)
    compared = check_inputs(runtime, sop, inputs, batch=len(inputs))
    assert compared > 0, text
    # one at a time: no padding, other matrix shapes
    check_inputs(runtime, sop, inputs[:: max(1, len(inputs) // 8)], batch=1)


def test_the_seeds_compile() -> None:
    """(so that the test above compares models, not only refusals)"""
    kept = 0
    for seed in SEEDS[:4]:
        text, vocab, max_len = random_numeric_program(seed)
        sop = load_source(Source("<random>", text)).get("res")
        evaluate(sop, vocab[:2])
        try:
            compile_sop(sop, vocab, max_len)
        except CompileError:
            continue
        kept += 1
    assert kept >= 3

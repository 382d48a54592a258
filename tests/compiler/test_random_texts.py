"""Differential fuzzing from program texts: random RASP as a user writes it (random_texts.py),
through the parser and the prelude, compiled and run, against the interpreter."""

from __future__ import annotations

import random

import pytest
from random_texts import TextGenerator
from test_compile import all_inputs, check_inputs, random_inputs

from compiler import compile_sop
from rasp.errors import CompileError, RaspError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp, evaluate

VOCAB = ["0", "1", "2"]


def _program(seed: int) -> tuple[random.Random, str, SOp | None]:
    """The seed's text and its s-op, or None where the interpreter refuses the text or it
    fails on a plain input (outside what a compiled model promises)."""
    rng = random.Random(seed)
    text = TextGenerator(rng).program()
    try:
        sop = load_source(Source("<random>", text)).get("res")
        if not isinstance(sop, SOp):
            return rng, text, None
        evaluate(sop, ["0", "1"])
    except RaspError:
        return rng, text, None
    return rng, text, sop


SEEDS = range(40)


def test_most_random_texts_are_programs() -> None:
    # (so that the test below, which passes over the others, tests something)
    assert sum(_program(seed)[2] is not None for seed in SEEDS) >= 0.6 * len(SEEDS)


@pytest.mark.exactness
@pytest.mark.parametrize("seed", SEEDS)
def test_random_texts_compile_exactly_or_are_refused(seed: int) -> None:
    rng, text, sop = _program(seed)
    if sop is None:
        return
    max_len = rng.choice([4, 6, 9])
    try:
        model = compile_sop(sop, VOCAB, max_len)
    except CompileError:
        return
    inputs = all_inputs(VOCAB, 4) + random_inputs(VOCAB, max_len, 40, seed)
    assert check_inputs(model, sop, inputs) > 0, text


def test_wide_texts_are_mostly_programs_and_draw_the_extras() -> None:
    # (the campaign's texts flavour: what no other generator writes, still mostly runnable)
    texts = [TextGenerator(random.Random(seed), wide=True).program() for seed in range(60)]
    runnable = 0
    for text in texts:
        try:
            sop = load_source(Source("<random>", text)).get("res")
            runnable += isinstance(sop, SOp) and evaluate(sop, ["0", "1"]) is not None
        except RaspError:
            pass
    assert runnable >= 0.5 * len(texts)
    extras = ["count(", "contains(", "has_focus(", "select_from_first(", "zip(", "}[tokens]"]
    assert all(any(extra in text for text in texts) for extra in extras)


@pytest.mark.exactness
def test_the_fuzz_campaign_runs_wide_texts() -> None:
    import fuzz_campaign

    said: list[str] = []
    assert fuzz_campaign.run("texts", range(0, 8), 6, 120, said.append) == 0
    compiled = int(said[-1].split(": ")[1].split()[0])
    assert said[-1].startswith("texts seeds 0..7: ") and compiled >= 2, said

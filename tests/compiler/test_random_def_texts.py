"""The fuzz campaign's defs flavour (random_def_texts.py): texts built from `def`s with locals
that call each other, nested and several times, inner defs, loops and recursion chaining maps,
functions returning selectors or pairs, and the library's files loaded and composed."""

from __future__ import annotations

import re

import pytest
from fuzz_campaign import PROGRAMS
from random_def_texts import random_def_program

from rasp.errors import RaspError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp, evaluate

SEEDS = range(60)


def _runs(text: str, vocab: list[str]) -> bool:
    try:
        sop = load_source(Source("<defs>", text), search_dirs=[PROGRAMS]).get("res")
        return isinstance(sop, SOp) and evaluate(sop, vocab[:2]) is not None
    except RaspError:
        return False


def test_def_texts_are_mostly_programs_and_draw_the_extras() -> None:
    programs = [random_def_program(seed) for seed in SEEDS]
    assert sum(_runs(text, vocab) for text, vocab in programs) >= 0.8 * len(SEEDS)
    texts = "\n".join(text for text, _ in programs)
    extras = ["load ", "for k in range(", "    def ", "select_next_identical(", "not select"]
    assert all(extra in texts for extra in extras), [e for e in extras if e not in texts]
    assert re.search(r"\bg\d\((.*)\bg\d\(", texts)  # a call nested in a call
    assert re.search(r"def (g\d_r)\(.*\1\(", texts)  # a recursive inner def
    assert re.search(r"\bg\d\(.*\)\[[01]\]", texts)  # a pair's element


@pytest.mark.exactness
def test_the_fuzz_campaign_runs_def_texts() -> None:
    import fuzz_campaign

    said: list[str] = []
    assert fuzz_campaign.run("defs", range(0, 8), 5, 120, said.append) == 0
    compiled = int(said[-1].split(": ")[1].split()[0])
    assert said[-1].startswith("defs seeds 0..7: ") and compiled >= 4, said

"""The fuzz campaign's mixed flavour (random_mixed_texts.py): texts whose s-ops hold 1, 1.0 and
True together, maps reading a variable several times, strings of odd characters and widths of
compound selectors beside means, compiled and checked value by value as `rasp verify` does."""

from __future__ import annotations

import re

import pytest
from random_mixed_texts import random_mixed_program

from compiler import compile_sop
from rasp.errors import RaspError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp, evaluate

SEEDS = range(60)


def _runs(text: str, vocab: list[str]) -> bool:
    try:
        sop = load_source(Source("<mixed>", text)).get("res")
        return isinstance(sop, SOp) and evaluate(sop, vocab[:2]) is not None
    except RaspError:
        return False


def test_mixed_texts_are_mostly_programs_and_draw_the_extras() -> None:
    programs = [random_mixed_program(seed) for seed in SEEDS]
    assert sum(_runs(text, vocab) for text, vocab in programs) >= 0.8 * len(SEEDS)
    texts = "\n".join(text for text, _ in programs)
    extras = ["1.0", "True", "sort(", "selector_width(", '"\\"', '"😀"']
    assert all(extra in texts for extra in extras), [e for e in extras if e not in texts]
    assert re.search(r"\b(v[0-9]+) - \1\b", texts)  # a map reading one variable twice
    assert any("😀" in vocab for _, vocab in programs)


@pytest.mark.exactness
def test_the_fuzz_campaign_runs_mixed_texts() -> None:
    import fuzz_campaign

    said: list[str] = []
    assert fuzz_campaign.run("mixed", range(0, 8), 5, 120, said.append) == 0
    compiled = int(said[-1].split(": ")[1].split()[0])
    assert said[-1].startswith("mixed seeds 0..7: ") and compiled >= 4, said


def test_the_mixed_flavour_tells_a_bool_from_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    """check_inputs takes True for 1.0; the mixed flavour's check does not (a model whose output
    gave a mean's 1.0 as True would pass the one and fail the other)."""
    import fuzz_campaign

    text = 'res = aggregate(select(indices, indices, <=), 1.0 if tokens == "0" else 1);\n'
    root = load_source(Source("<mixed>", text)).get("res")
    model = compile_sop(root, ["0", "1"], 3)
    fuzz_campaign.check_exactly(model, root, [["0", "1"], ["1"]])

    def as_bools(model: object, inputs: list[list]) -> list[list]:
        return [[True] * len(tokens) for tokens in inputs]

    monkeypatch.setattr("tests.runtime_helpers.run_compiled", as_bools)
    with pytest.raises(AssertionError):
        fuzz_campaign.check_exactly(model, root, [["0", "1"], ["1"]])

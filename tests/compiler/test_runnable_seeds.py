"""The fuzz generators draw programs the interpreter runs (runnable.py), and the campaign counts
what it still cannot run as invalid, apart from the compiler's refusals. Before, `texts` seeds
2049000 to 2049079 gave 17 texts the interpreter cannot run (`res = 0`, `indicator(True)`,
`"xyz"[0.5 % 3]`), counted as refusals, and a third of the graph flavours' programs ordered
strings against numbers in a select, so that no input ran."""

from __future__ import annotations

import random

import pytest
from causal_texts import BACK, causal_text
from random_def_texts import PROGRAMS
from random_texts import TextGenerator, wide_text
from runnable import interpreter_error, probe_inputs, text_error

from rasp import sops as S
from rasp.errors import CompileError, Diagnostic, RaspError, Source
from rasp.interpreter import load_source

# the seeds of 2049000..2049079 whose first wide text the interpreter could not run, and why
UNRUNNABLE_TEXTS = {
    2049003: "res is not an s-op",  # res = 0;
    2049010: "indicator operator expects s-op, got: False",
    2049057: "index into string has to be integer, got: 0.5",
}


@pytest.mark.parametrize(("seed", "why"), UNRUNNABLE_TEXTS.items())
def test_a_texts_seed_that_did_not_run_is_drawn_again(seed: int, why: str) -> None:
    first = TextGenerator(random.Random(seed), wide=True).program()
    assert text_error(first, ["0", "1", "2"]) == why
    text = wide_text(seed)
    assert text != first and text_error(text, ["0", "1", "2"]) is None


def test_every_texts_seed_of_the_range_runs_and_a_runnable_one_keeps_its_text() -> None:
    import fuzz_campaign

    for seed in range(2049000, 2049080):
        root, _, _, inputs = fuzz_campaign._program("texts", seed, 6)
        assert interpreter_error(root, inputs) is None, seed
    assert wide_text(2049000) == TextGenerator(random.Random(2049000), wide=True).program()


@pytest.mark.parametrize("flavour", ["plain", "twins", "causal", "kinds"])
def test_the_graph_flavours_draw_programs_the_interpreter_runs(flavour: str) -> None:
    # (of seeds 2060000..2060199, 54, 54, 65 and 38 ran on no input: selects of strings
    # against numbers, a string minus a number)
    import fuzz_campaign

    for seed in range(2060000, 2060040):
        root, _, _, inputs = fuzz_campaign._program(flavour, seed, 6)
        assert interpreter_error(root, inputs) is None, (flavour, seed)


@pytest.mark.parametrize(
    ("flavour", "seed"),
    [("mixed", 2042018), ("defs", 2060033), ("numeric", 2060138), ("texts", 2042004)],
)
def test_the_text_flavours_draw_texts_the_interpreter_runs(flavour: str, seed: int) -> None:
    # (each seed's first text ran neither plain nor rewritten causal: `indicator(False)`,
    # `indicator(True)`, a division by zero, `res = 0`)
    import fuzz_campaign

    for causal in (False, True):
        root, _, _, inputs = fuzz_campaign._program(flavour, seed, 6, causal=causal)
        assert interpreter_error(root, inputs) is None, (flavour, seed, causal)


def test_a_backslash_string_is_one_string_to_the_causal_rewrite() -> None:
    # RASP's strings have no escapes: `"\"` is a backslash (mixed seed 2042002 `--causal` was
    # rewritten into a text that did not parse: a string taken to run on to the next `"`)
    text = 'res = aggregate(select(tokens, "\\", ==), 1, 0) + aggregate(select(tokens, "a", ==), 1, 0);\n'
    rewritten = causal_text(text)
    assert f'aggregate((select(tokens, "\\", ==)) and {BACK}, 1, 0)' in rewritten
    assert f'aggregate((select(tokens, "a", ==)) and {BACK}, 1, 0)' in rewritten
    assert isinstance(load_source(Source("t.rasp", rewritten)).get("res"), S.SOp)


LOOKS_AHEAD = [
    'res = count(tokens, "1");',
    'res = indicator(contains(tokens, "0")) + average(indices);',
    "res = sort(tokens, indices - tokens_int);",
    'res = mark_last_instance(tokens, "1");',
    'res = aggregate(select_from_last(tokens, "2"), indices, -1);',
    "res = indicator(has_focus(select(tokens, tokens, <)));",
    'load "hist";\nres = hist;',
    "res = indices[-2] + tokens_int[3] + tokens_int[ - 1];",  # (texts 2086131 `--causal`)
    'load "length";\nload "reverse";\nres = reverse + tokens + "" if seq_length > 1 else "a";',
]


@pytest.mark.parametrize("text", LOOKS_AHEAD)
def test_causal_texts_of_the_library_look_only_back(text: str) -> None:
    """The prelude's functions that attend to later positions and the files a text loads were
    not rewritten: 15 causal compiles of session 62's campaign were refused for them."""
    root = load_source(Source("t.rasp", causal_text(text, PROGRAMS))).get("res")
    assert isinstance(root, S.SOp)
    tokens = ["2", "1", "0", "2", "1"]
    whole = S.evaluate(root, tokens).values
    for n in range(1, len(tokens)):
        assert S.evaluate(root, tokens[:n]).values == whole[:n], (text, n)


def test_the_campaign_compiles_causal_texts_it_refused_for_the_library() -> None:
    """texts 2022031 (`aggregate(full_s, ...)`) and defs 2044000 (hist's `same_token`) were
    refused `--causal`: their selectors read later positions."""
    import fuzz_campaign

    said: list[str] = []
    assert (
        fuzz_campaign.run("texts", range(2022031, 2022032), 4, 120, said.append, causal=True) == 0
    )
    assert said == [
        "texts --causal seeds 2022031..2022031: 1 compiled and agreed, 0 refused, 0 failed"
    ]
    said.clear()
    assert fuzz_campaign.run("defs", range(2044000, 2044001), 4, 120, said.append, causal=True) == 0
    assert said == [
        "defs --causal seeds 2044000..2044000: 1 compiled and agreed, 0 refused, 0 failed"
    ]


def test_the_campaign_counts_invalid_programs_apart_from_refusals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text the interpreter cannot load, and a program it runs on no input that the compiler
    refuses, are `invalid`: an `INVALID` line with `--reasons`, and a count of their own."""
    import fuzz_campaign

    def unloadable(flavour: str, seed: int, *args: object) -> object:
        if seed == 5:
            raise RaspError("res is not an s-op")
        never = S.Select(keys=S.TokensSOp(), queries=S.IndicesSOp(), comparison=S.Comparison.LT)
        return S.SelectorWidthSOp(selector=never), ["a"], 4, probe_inputs(["a"])

    def refuse(*args: object, **kwargs: object) -> None:
        raise CompileError([Diagnostic("'x' fails on every input")])

    monkeypatch.setattr(fuzz_campaign, "_program", unloadable)
    monkeypatch.setattr(fuzz_campaign, "compile_sop", refuse)
    said: list[str] = []
    assert fuzz_campaign.run("plain", range(5, 7), 4, 120, said.append, reasons=True) == 0
    assert said == [
        "INVALID plain 5: (interpreter) res is not an s-op",
        "INVALID plain 6: (interpreter) '<' not supported between instances of 'str' and 'int'",
        "plain seeds 5..6: 0 compiled and agreed, 0 refused, 0 failed, 2 invalid (the "
        "interpreter runs no input)",
    ]

"""causal_texts.py: texts made causal for the fuzz campaign's `--causal`."""

from __future__ import annotations

import re

import pytest
from causal_texts import BACK, HEADER, causal_text

from rasp.errors import Source
from rasp.interpreter import load_source


def test_every_attending_selector_looks_back_and_length_is_gone() -> None:
    text = (
        'x = aggregate(select(tokens, "length,", ==) or select(indices, length - 1, <), '
        'indicator(tokens == "a"), 0);  # aggregate(full_s, length)\n'
        "y = selector_width(not select(indices, indices, <));\n"
        "z = load_from_location(tokens, length - indices - 1);\n"
    )
    got = causal_text(text)
    assert got.startswith(HEADER)
    body = got[len(HEADER) :]
    assert body.splitlines() == [
        'x = aggregate((select(tokens, "length,", ==) or select(indices, (indices + 1) - 1, <))'
        f' and {BACK}, indicator(tokens == "a"), 0);  # aggregate(full_s, length)',
        f"y = selector_width((not select(indices, indices, <)) and {BACK});",
        "z = load_from_location_back(tokens, (indices + 1) - indices - 1);",
    ]


def test_causal_texts_run_and_their_values_look_only_back() -> None:
    """A causal text's value at a position is the same on every input with the same prefix."""
    text = causal_text(
        'm = aggregate(full_s, indicator(tokens == "a"), 0);\nres = m * length + 0;\n'
    )
    res = load_source(Source("t.rasp", text)).get("res")
    from rasp import sops as S

    assert S.evaluate(res, list("ab")).values[:2] == S.evaluate(res, list("abaa")).values[:2]


@pytest.mark.parametrize("flavour", ["numeric", "mixed"])
def test_the_fuzz_campaign_runs_causal_texts(flavour: str) -> None:
    import fuzz_campaign

    said: list[str] = []
    assert fuzz_campaign.run(flavour, range(0, 6), 5, 120, said.append, causal=True) == 0, said
    summary = re.search(r"--causal seeds 0..5: (\d+) compiled", said[-1])
    assert summary and int(summary.group(1)) >= 2, said

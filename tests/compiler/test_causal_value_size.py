"""A causal compile refused by the value analysis for its size (a map's table of too many input
combinations) also names what a causal model could not compute, as the size checks' refusals do
(compiler.causal.short_causal_problems): the analysis stops before the causal check, and fixing
the size led to a second, unrelated refusal."""

from __future__ import annotations

import pytest

import compiler.map_values
from compiler import compile_sop
from rasp.errors import CompileError
from rasp.interpreter import load_source

LOOKS_AHEAD = "hist = selector_width(select(tokens, tokens, ==));\nbig = hist * 100 + indices * 10 + length;\n"
LOOKS_BACK = (  # (at max-len 8 `big` needs 72 combinations, at 12 156)
    "hist = selector_width(select(tokens, tokens, ==) and select(indices, indices, <=));\n"
    'big = hist * 100 + indices * 10 + (tokens == "a");\n'
)
TABLE = "would need a table of"


def _refusal(text: str, max_len: int, causal: bool = True) -> str:
    program = load_source(text).get("big")  # type: ignore[arg-type]
    with pytest.raises(CompileError) as info:
        compile_sop(program, list("ab"), max_len, causal=causal)
    return info.value.render()


@pytest.fixture(autouse=True)
def small_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # at max-len 8 `big` needs 576 combinations, at 12 1,584: the short check passes this limit
    monkeypatch.setattr(compiler.map_values, "MAX_MAP_COMBINATIONS", 1_000)


def test_a_value_analysis_size_refusal_also_names_what_looks_ahead() -> None:
    text = _refusal(LOOKS_AHEAD, 12)
    assert TABLE in text
    assert "may select later positions, which a causal model cannot see" in text
    assert "'length' reads every position" in text
    assert text.index("causal model cannot see") < text.index(TABLE)


def test_without_causal_it_is_the_size_alone() -> None:
    text = _refusal(LOOKS_AHEAD, 12, causal=False)
    assert TABLE in text and "causal" not in text and text.count("error:") == 1


def test_a_program_that_looks_only_back_is_the_size_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiler.map_values, "MAX_MAP_COMBINATIONS", 100)
    text = _refusal(LOOKS_BACK, 12)
    assert TABLE in text and "causal" not in text and text.count("error:") == 1

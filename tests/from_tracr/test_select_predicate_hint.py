"""A comparison written as RASP spells it (`"=="`, `"<="`) where tracr's Select takes a
Comparison names the Comparison that is spelt so."""

from __future__ import annotations

import pytest

from rasp import tracr as rasp


@pytest.mark.parametrize(("written", "meant"), [("==", "EQ"), ("<=", "LEQ"), ("True", "TRUE")])
def test_a_comparison_string_names_the_comparison(written: str, meant: str) -> None:
    with pytest.raises(TypeError, match=rf"did you mean rasp\.Comparison\.{meant}\?"):
        rasp.Select(rasp.tokens, rasp.tokens, written)  # type: ignore[arg-type]


def test_another_value_gets_no_guess() -> None:
    with pytest.raises(TypeError) as caught:
        rasp.Select(rasp.tokens, rasp.tokens, "lt")  # type: ignore[arg-type]
    assert "did you mean" not in str(caught.value)

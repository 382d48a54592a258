"""A count whose select compares s-ops computed with float32 error (a comparison of a mean) is
decoded from a 1/(w+1) that the scores' error moves: `make_count(make_pair_balance(tokens, "a",
"b"), -1)` is certified at N = 8 and refused from N = 10. The refusal names the count and the
error of its head's scores, and hints at what helps, instead of the generic "fewer values"
(tracr_lib_campaign.py seed 780234 --big --deep --their-lib, #35, in its general form)."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib

VOCAB = ["a", "b", "c"]


def _count_of_a_balance() -> rasp.SOp:
    return lib.make_count(lib.make_pair_balance(rasp.tokens, "a", "b"), -1)


def test_the_count_of_a_balance_compiles_at_8() -> None:
    assert compile_sop(_count_of_a_balance(), VOCAB, 8).metadata["certificate"]["ok"]


def test_its_refusal_at_16_names_the_count_and_its_noisy_scores() -> None:
    with pytest.raises(CompileError) as info:
        compile_sop(_count_of_a_balance(), VOCAB, 16)
    first = info.value.diagnostics[0]
    assert "relu decision" in first.message and "count_-1.frac=" in first.message
    assert first.hint is not None
    assert "'count_-1' is a count decoded from the 1/(w+1) its head writes" in first.hint
    assert "scores carry float32 error up to 0.0" in first.hint
    assert "smaller maximum length" in first.hint and "tokens, indices" in first.hint

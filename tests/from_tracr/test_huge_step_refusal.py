"""A step between numbers float32 cannot tell apart, near 2e15 and 0.5 apart, is refused (a
located CompileError): float64 cannot place its threshold either, and the check that it did
ran first, an internal error (`ValueError: internal: a step threshold falls too close`) where
the user gets a refusal (found by fuzzing tracr sorts over large float tokens)."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib


def test_a_sort_of_tokens_float32_cannot_tell_apart_is_refused() -> None:
    vocab = [-1999999999999999.0, -1499999999999999.8, -2000000000000000.0]
    tokens = rasp.numerical(rasp.Map(lambda v: v, rasp.tokens))
    with pytest.raises(CompileError):
        compile_sop(lib.make_sort_unique(tokens, tokens), vocab, 2)

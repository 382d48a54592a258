"""The value analysis of a chain of maps (compiler.map_values, `chain_values`) calls each map once
per distinct argument tuple, not once per combination of the chain's sources: a tracr function's
call costs far more than a lookup."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from runtime_helpers import run_compiled

import compiler.map_values as map_values
from compiler import compile_sop
from rasp.tracr import lib


def test_shuffle_dyck_calls_each_map_once_per_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by tracr_lib_campaign.py seed 780100 (#81): make_shuffle_dyck of two pairs at N = 8
    ran past 180 s in the campaign (75 s alone: 1.8M calls, 16 s now). At N = 4: 147,477 calls
    before, 775 now."""
    calls = [0]
    apply_map = map_values.apply_map

    def counted(fn: Any, args: Any) -> Any:
        calls[0] += 1
        return apply_map(fn, args)

    monkeypatch.setattr(map_values, "apply_map", counted)
    program = lib.make_shuffle_dyck(["cb", "eh"])
    vocab = ["h", "b", "c", "e"]
    model = compile_sop(program, vocab, 4)
    assert calls[0] < 5_000
    inputs = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs

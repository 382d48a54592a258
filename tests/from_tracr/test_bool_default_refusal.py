"""A tracr mean of numbers with a bool default is refused (a model reads True as 1) under the
program's own text and with the aggregate's hint: it was named by the map back a rewrite made
('stand-ins back to (True,)(_aggregate_1)', 'map(_aggregate_1)') and told to "make it give values
of one type" (mixed_encodings_campaign.py seed 780314 #85)."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib


def test_a_bool_default_beside_means_is_named_as_written() -> None:
    s0 = lib.make_frac_prevs(rasp.numerical(rasp.length == True))  # noqa: E712 (tracr's Map)
    q1 = rasp.Select(rasp.tokens, s0, rasp.Comparison.LEQ)
    s2 = rasp.numerical(rasp.SelectorWidth(q1))
    q3 = q1 | rasp.Select(s0, s2, rasp.Comparison.GT)
    program = rasp.Aggregate(q3, s0, default=True)
    with pytest.raises(CompileError) as info:
        compile_sop(program, [0, 1, 2], 5)
    (problem,) = info.value.diagnostics
    assert problem.message.startswith(
        "'rasp.Aggregate(q3, s0, default=True)' can be a bool or a number ([True]"
    )
    assert problem.span is not None and problem.span.line == 21
    assert problem.hint is not None
    assert problem.hint.endswith("make an aggregate's default the same type as its values")

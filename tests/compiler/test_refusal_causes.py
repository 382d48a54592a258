"""A certificate's refusal in the program's words (compiler.refusal_causes): a select compiled
through a bool (compiler.constant_sides) is quoted as written, a generated label is told by what
it computes, and a step between two values closer than float32 resolves says so."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp.errors import CompileError
from rasp.named_text import MessageNames, is_generated
from tests.compiler.limit_checks import program

# means of 0, 1e-7 and 1 at N = 4 lie 2.5e-8 apart
MEAN = "m = aggregate(select(indices, indices, <=), tokens_float);\n"
VOCAB = [0.0, 1e-7, 1.0]


def _refusal(text: str) -> CompileError:
    with pytest.raises(CompileError) as refused:
        compile_sop(program(text, "res"), VOCAB, 4)
    return refused.value


def test_a_constant_query_select_is_refused_as_the_select_with_the_values_it_cannot_tell() -> None:
    # it said "'m > (0)' (layer 0 mlp, _map_1): a relu decision has margin 3 ...": neither the
    # select the program wrote nor why
    refused = _refusal(MEAN + "res = aggregate(select(m, 0, >), indices, 9);\n")
    message = str(refused)
    assert message.startswith("'select(m, 0, >)' (layer 0 mlp, _map_1: the bool 'm > 0' ")
    assert "one of its sides holds one value at every position" in message
    assert "values 2.5e-08 apart cannot be told apart exactly in float32" in message
    assert "(it must tell m = 0 from m = 2.5e-08)" in message
    assert "(0)" not in message
    span = refused.diagnostics[0].span
    assert span is not None and (span.line, span.col) == (2, 17)  # the select
    assert "numbers of smaller magnitude" in (refused.diagnostics[0].hint or "")


def test_a_comparison_map_of_close_means_says_which_values_it_cannot_tell() -> None:
    message = str(_refusal(MEAN + "res = m > 0;\n"))
    assert message.startswith("'m > 0' (layer 0 mlp, res): values 2.5e-08 apart cannot be told")


def test_generated_labels_are_told_by_what_they_compute_once() -> None:
    texts = {"_map_1": "indices < tokens_int"}
    names = MessageNames(lambda name: None, texts.get)
    assert names.label("_map_1") == "_map_1 (indices < tokens_int)"
    assert names.label("_map_1") == "_map_1"  # said once
    assert names.told_in("unit 0 at (_map_1.frac=0.5)") == ""
    fresh = MessageNames(lambda name: None, texts.get)
    assert fresh.told_in("unit 0 at (_map_1=True)") == "; _map_1: indices < tokens_int"
    # a program's own name is never read as generated
    assert not is_generated("flip") and not is_generated("map_1")
    assert is_generated("_f_aggregate_2") and is_generated("_map_1_2")

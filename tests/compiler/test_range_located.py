"""A block whose error bound passes float32's range, with every decision before it held, is a
failed decision of that block, located at its s-op: the refusal said only that 'the certifier
could not check the model', at the output, as for a model the compiler cannot walk (the fuzz
campaign's ODD). Found by `fuzz_campaign.py texts 1980002 1980003 --max-len 12 --causal`."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from compiler.certify_walk import OutOfRange
from compiler.reach import Reach
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source

# `indices ^ tokens_int` is compared with `tokens_int % 2 + 1` through squares an MLP computes:
# the width head's scores carry float32 error (67 at N = 12, where its weights spread by up to
# e^135 and 1/(w+1)'s bound passed float32's range). The campaign's query was the constant 1,
# which now makes the select a bool of its keys (compiler.constant_sides), compiled exactly.
WIDTH = "res = selector_width(select(indices ^ tokens_int, tokens_int % 2 + 1, ==));"


def _root():  # type: ignore[no-untyped-def]
    return load_source(Source("<test>", WIDTH)).get("res")


def test_a_width_past_float32s_range_is_refused_at_its_head() -> None:
    with pytest.raises(CompileError) as caught:
        compile_sop(_root(), list("012"), 12)
    (diagnostic,) = caught.value.diagnostics
    assert "could not check" not in diagnostic.message
    assert "'selector_width(select(indices ^ tokens_int, tokens_int % 2 + 1, ==))' (layer 2" in (
        diagnostic.message
    )
    assert "past float32's range" in diagnostic.message
    assert diagnostic.span is not None and (diagnostic.span.line, diagnostic.span.col) == (1, 7)
    # the width's own hint: its head's scores carry error
    assert diagnostic.hint is not None and "'res' is a count decoded from the 1/(w+1)" in (
        diagnostic.hint
    )


def test_the_range_failure_is_a_failed_check_of_the_certificate() -> None:
    model = compile_sop(_root(), list("012"), 12, require_certificate=False)
    certificate = model.metadata["certificate"]
    assert not certificate["ok"] and certificate["errors"] == []
    (failed,) = [c for c in certificate["checks"] if c["kind"] == "range"]
    assert (failed["sublayer"], failed["block"]) == ("layer 2 attn", "res")
    assert failed["bound"] > failed["margin"]


def test_an_overflow_in_the_embedding_stays_unchecked() -> None:
    """No block writes the embedding's dimensions: nothing to locate it at."""
    err = OutOfRange("the embedding can leave ...", "the embedding", "tokens", 1e40, "BOS or PAD")
    assert err.as_check(Reach.from_json(_reach_json())) is None


def _reach_json() -> dict:  # type: ignore[type-arg]
    model = compile_sop(_root(), list("012"), 4)
    return model.metadata["reach"]  # type: ignore[no-any-return]

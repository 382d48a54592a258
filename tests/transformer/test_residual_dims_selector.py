"""`residual_dims` / `residual_dim` of a selector's name (reverse's `flip`) say which head reads
it: a researcher looking for the selector in the residual stream was told only that no group is
named so."""

from __future__ import annotations

import pytest

pytest.importorskip("compiler")

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from transformer.errors import ModelInputError


@pytest.fixture(scope="module")
def reverse() -> transformer.CompiledTransformer:
    compiled = compile_sop(load_file("programs/reverse.rasp").get("reverse"), list("abc"), 5)
    return transformer.from_tensors(compiled.weights, compiled.metadata)


@pytest.mark.parametrize("method", ["residual_dims", "residual_dim"])
def test_a_selector_is_named_with_the_head_that_reads_it(
    reverse: transformer.CompiledTransformer, method: str
) -> None:
    with pytest.raises(ModelInputError) as info:
        getattr(reverse, method)("flip")
    assert info.value.hint.startswith(
        "flip is read inside layer 1 head 0 (aggregate(flip, tokens)): a selector, or a value "
        "folded into a head's scores, has no residual dimensions; the head's attention pattern "
        'is cache["pattern", 1][:, 0]'
    )


def test_other_unknown_names_keep_their_hints(reverse: transformer.CompiledTransformer) -> None:
    with pytest.raises(ModelInputError) as info:
        reverse.residual_dims("revers")
    assert info.value.hint == "did you mean reverse?"
    with pytest.raises(ModelInputError) as info:  # a prefix of a name in an op is not that name
        reverse.residual_dims("fli")
    assert "read inside" not in info.value.hint

"""`run_with_cache`'s cache as a TransformerLens user reads it: `names_filter`, the
`cache["pattern", 1]` shorthand, and a KeyError that names the close hook names."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from transformer import ModelInputError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reverse() -> transformer.CompiledTransformer:
    program = load_file(str(ROOT / "programs" / "reverse.rasp")).get("reverse")
    compiled = compile_sop(program, list("abc"), 6)
    return transformer.from_tensors(compiled.weights, compiled.metadata)


def test_names_filter_keeps_only_the_names_it_chooses(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, _ = reverse.encode(["abca", "ab"])
    logits, everything = reverse.run_with_cache(ids)
    for names_filter, kept in [
        (lambda name: name.endswith("hook_pattern"), ["blocks.0.attn.hook_pattern",
                                                      "blocks.1.attn.hook_pattern"]),
        ("blocks.1.hook_resid_mid", ["blocks.1.hook_resid_mid"]),
        (["hook_embed", "blocks.0.mlp.hook_post"], ["hook_embed", "blocks.0.mlp.hook_post"]),
    ]:  # fmt: skip
        filtered_logits, cache = reverse.run_with_cache(ids, names_filter=names_filter)
        assert torch.equal(filtered_logits, logits)
        assert list(cache) == kept
        assert all(torch.equal(cache[name], everything[name]) for name in kept)


@pytest.mark.parametrize(
    ("names_filter", "message"),
    [
        ("blocks.0.hook_resid_pst", r"unknown hook name 'blocks.0.hook_resid_pst'; did you mean "
         r"blocks.0.hook_resid_post"),
        (lambda name: name.startswith("blocks.7"), r"names_filter chooses none of the model's"),
        (3, r"names_filter must be a hook name, a list of them or a predicate"),
    ],
)  # fmt: skip
def test_a_names_filter_that_records_nothing_useful_is_refused(
    reverse: transformer.CompiledTransformer, names_filter: object, message: str
) -> None:
    ids, _ = reverse.encode(["ab"])
    with pytest.raises(ModelInputError, match=message):
        reverse.run_with_cache(ids, names_filter=names_filter)  # type: ignore[arg-type]


def test_transformer_lens_short_names_and_helpful_key_errors(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, _ = reverse.encode(["abca"])
    _, cache = reverse.run_with_cache(ids)
    assert cache["pattern", 1] is cache["blocks.1.attn.hook_pattern"]
    assert cache["resid_post", 0] is cache["blocks.0.hook_resid_post"]
    assert cache["post", 0] is cache["blocks.0.mlp.hook_post"]
    assert cache["embed"] is cache["hook_embed"]
    with pytest.raises(KeyError, match=r"did you mean blocks.1.attn.hook_pattern"):
        cache["blocks.1.attn.hook_patern"]
    with pytest.raises(KeyError, match=r"\('pattern', 2\): not a hook name of this model"):
        cache["pattern", 2]
    _, some = reverse.run_with_cache(ids, names_filter="blocks.1.hook_resid_post")
    with pytest.raises(KeyError, match=r"not recorded \(run_with_cache's names_filter left it"):
        some["blocks.0.hook_resid_post"]

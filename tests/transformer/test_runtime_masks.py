"""Per-head masks (format version 3): a head sees only the keys whose position compares with the
query's as its mask says, and always BOS, one input at a time and in padded batches."""

from __future__ import annotations

import itertools
from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
import torch

import transformer
from transformer.config import HEAD_MASKS, LayerShape
from transformer.interop import mask_hooks, masked_heads, to_transformer_lens
from transformer.model import seen_keys

INPUTS = ["".join(t) for n in range(1, 6) for t in itertools.product("ab", repeat=n)]


@pytest.mark.parametrize("mask", HEAD_MASKS)
def test_a_masked_head_sees_what_its_mask_says(mask: str, tmp_path: Path) -> None:
    made = hm.masked_mean_of_a(mask)
    model = transformer.load(made.save(tmp_path / "m.safetensors"))
    expected = [hm.expected_masked_mean_of_a(text, mask) for text in INPUTS]
    one_by_one = [model.run([text])[0] for text in INPUTS]
    batched = model.run(INPUTS, batch_size=7)  # mixed lengths: PAD keys inside the masks
    for text, want, alone, together in zip(INPUTS, expected, one_by_one, batched, strict=True):
        assert alone == pytest.approx(want, abs=1e-6), (mask, text)
        assert together == alone, (mask, text)
    # an independent float64 forward that applies the masks itself
    ids, _ = model.encode(INPUTS)
    theirs = hm.numpy_forward(made.tensors, made.metadata["config"], ids.numpy())["logits"]
    assert np.allclose(model.forward(ids).numpy(), theirs, atol=1e-6)


def test_seen_keys_keeps_bos_and_meets_causal() -> None:
    seen = seen_keys(("<", ">", "=="), 4, causal=True)
    assert seen is not None and seen.shape == (3, 4, 4)
    assert seen[:, :, 0].all()  # every query of every head sees BOS, the BOS query included
    key, query = torch.arange(4)[None, :], torch.arange(4)[:, None]
    assert torch.equal(seen[0], (key < query) | (key == 0))
    assert torch.equal(seen[1], (key == 0).expand(4, 4))  # after the query, but causal: BOS
    assert torch.equal(seen[2], (key == query) | (key == 0))
    assert seen_keys(("", ""), 4) is None


def test_a_mask_needs_a_known_relation_and_one_per_head() -> None:
    with pytest.raises(ValueError, match="one of"):
        LayerShape(1, 4, 0, ("=<",))
    with pytest.raises(ValueError, match="2 entries for 1 heads"):
        LayerShape(1, 4, 0, ("<", "<"))


def test_masks_are_kept_in_the_config_and_not_in_the_state_dict(tmp_path: Path) -> None:
    model = transformer.load(hm.masked_mean_of_a("<").save(tmp_path / "m.safetensors"))
    assert model.config.has_masks and model.config.layers[0].masks == ("<",)
    assert model.config.to_dict()["layers"][0]["masks"] == ["<"]
    assert not any(name.endswith("seen") for name in model.model.state_dict())
    assert masked_heads(model) == ["layer 0 head 0 (keys < query)"]
    with pytest.raises(ValueError, match="no uniform"):
        model.config.padded  # noqa: B018 (TransformerLens's layout has no masks)


def test_masks_reach_transformer_lens_only_through_hooks(tmp_path: Path) -> None:
    path = hm.masked_mean_of_a("<=").save(tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match="layer 0 head 0 .keys <= query. sees only some keys"):
        to_transformer_lens(path)
    _, state = to_transformer_lens(path, masks_by_hooks=True)
    model = transformer.load(path)
    ((name, hook),) = mask_hooks(model)
    assert name == "blocks.0.attn.hook_attn_scores"
    scores = torch.zeros(2, 1, 3, 3)
    masked = hook(scores, None)
    assert torch.isinf(masked[:, 0, 1, 2]).all() and masked[:, 0, 2, 1].eq(0).all()
    assert masked[:, 0, 0, 0].eq(0).all()  # BOS sees itself
    # with a KV cache TransformerLens scores only the new queries: the last positions
    last = hook(torch.zeros(2, 1, 1, 3), None)
    assert last[:, 0, 0].eq(0).all()  # query 2 sees keys 0..2 under <=
    middle = hook(torch.zeros(2, 1, 1, 2), None)
    assert middle[:, 0, 0].eq(0).all()  # query 1 sees keys 0 and 1
    assert mask_hooks(hm.mean_of_a().save(tmp_path / "plain.safetensors")) == []
    assert set(state) == set(hm.masked_mean_of_a("<=").tensors)


@pytest.mark.gpu
def test_masks_on_cuda(tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    path = hm.masked_mean_of_a("<").save(tmp_path / "m.safetensors")
    cpu, cuda = transformer.load(path), transformer.load(path, device="cuda")
    assert cuda.run(INPUTS, batch_size=16) == cpu.run(INPUTS, batch_size=16)


@pytest.mark.parametrize("causal", [False, True], ids=["masked", "causal"])
def test_a_long_max_len_without_w_pos_costs_nothing_at_load(causal: bool, tmp_path: Path) -> None:
    """A file without W_pos states n_ctx in its header alone: the masks were built for all of it
    at load, so `max_len` 10**6 in an 8 KB file asked for a terabyte (torch's RuntimeError), and
    3,000 took seconds. They are built for the inputs run."""
    made = hm.mean_of_a(causal=True) if causal else hm.masked_mean_of_a("<=")
    max_len = 10**6
    del made.tensors["pos_embed.W_pos"]  # the hand-made mean reads no position
    made.metadata.update(format_version=3, max_len=max_len)
    made.metadata["config"].update(positional=False, n_ctx=max_len + 1)
    model = transformer.load(made.save(tmp_path / "long.safetensors"))
    texts = ["ab", "aab", "a" * 70 + "b" * 30]  # longer than the mask first built
    if causal:
        expected = [hm.expected_mean_of_a(text, causal=True) for text in texts]
    else:
        expected = [hm.expected_masked_mean_of_a(text, "<=") for text in texts]
    for got, want in zip(model.run(texts), expected, strict=True):
        assert got == pytest.approx(want, rel=1e-5)  # a float output: float32 rounding
    assert model.model.blocks[0].attn.seen.shape == (1, 101, 101)


def test_mask_hooks_of_a_long_max_len_are_built_for_the_scores_seen(tmp_path: Path) -> None:
    """`mask_hooks` built `[heads, n_ctx, n_ctx]` at once: `max_len` 10**6 in a file without
    W_pos (8 KB) asked for a terabyte (torch's RuntimeError), where TransformerLens itself builds
    its causal mask per call. The hook builds the keys seen for the scores it is given."""
    made = hm.masked_mean_of_a("<=")
    max_len = 10**6
    del made.tensors["pos_embed.W_pos"]  # the hand-made mean reads no position
    made.metadata.update(format_version=3, max_len=max_len)
    made.metadata["config"].update(positional=False, n_ctx=max_len + 1)
    model = transformer.load(made.save(tmp_path / "long.safetensors"))
    ((name, hook),) = mask_hooks(model)
    assert name == "blocks.0.attn.hook_attn_scores"
    small = hook(torch.zeros(2, 1, 3, 3), None)
    assert torch.isinf(small[:, 0, 1, 2]).all() and small[:, 0, 2, 1].eq(0).all()
    long = hook(torch.zeros(1, 1, 100, 100), None)  # grown past the first size
    assert torch.equal(long[0, 0].isinf(), ~seen_keys(("<=",), 100)[0])
    last = hook(torch.zeros(1, 1, 1, 70), None)  # one new query with a KV cache: position 69
    assert last[0, 0, 0].eq(0).all()

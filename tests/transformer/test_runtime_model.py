"""Hand-made models through `transformer.load`: exact outputs, batching, cache and residuals."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
import torch

import transformer
from transformer.fileformat import tensor_shapes
from transformer.model import Transformer

ALL_ABC = ["".join(p) for n in range(1, 5) for p in itertools.product("abc", repeat=n)]
ALL_AB = ["".join(p) for n in range(1, 7) for p in itertools.product("ab", repeat=n)]


def test_previous_token_is_exact_on_every_input(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    assert model.run(ALL_ABC) == [hm.expected_previous_token(text) for text in ALL_ABC]


def test_two_blocks_compose(model_dir: Path) -> None:
    model = transformer.load(hm.two_back().save(model_dir / "two_back.safetensors"))
    assert model.run(ALL_ABC) == [hm.expected_two_back(text) for text in ALL_ABC]
    ids, _ = model.encode(["abca", "b"])
    _, cache = model.run_with_cache(ids)
    labels = model.residual_labels
    hop1 = [labels.index(f"hop1:{v}") for v in ("a", "b", "c", "BOS")]
    # After block 0, each real position holds its predecessor's token one-hot (BOS for position 1).
    after_first = cache["blocks.0.hook_resid_post"][0, 1:5][:, hop1]  # [n, 4]
    assert torch.equal(after_first, torch.eye(4)[[3, 0, 1, 2]])
    assert torch.equal(cache["blocks.1.hook_resid_pre"], cache["blocks.0.hook_resid_post"])


@pytest.mark.parametrize("causal", [False, True], ids=["bidirectional", "causal"])
def test_numerical_output_through_attention_and_mlp(causal: bool, model_dir: Path) -> None:
    model = transformer.load(
        hm.mean_of_a(causal=causal).save(model_dir / f"mean{causal}.safetensors")
    )
    for text, got in zip(ALL_AB, model.run(ALL_AB), strict=True):
        assert got == pytest.approx(hm.expected_mean_of_a(text, causal=causal), rel=1e-6)
        assert all(type(value) is float for value in got)


def test_batching_with_padding_equals_one_by_one(mean_path: Path) -> None:
    model = transformer.load(mean_path)
    one_by_one = [model.run([text])[0] for text in ALL_AB[:40]]
    # Mixed lengths in one batch (padding) and small batches must change nothing, bit for bit.
    assert model.run(ALL_AB[:40]) == one_by_one
    assert model.run(ALL_AB[:40][::-1], batch_size=3) == one_by_one[::-1]


def test_pad_keys_get_exactly_zero_weight(mean_path: Path) -> None:
    model = transformer.load(mean_path)
    ids, lengths = model.encode(["ab", "abbab"])
    _, cache = model.run_with_cache(ids)
    pattern = cache["blocks.0.attn.hook_pattern"]  # [batch, head, q, k]
    assert lengths == [2, 5]
    assert torch.all(pattern[0, :, :3, 3:] == 0)  # the short input's queries never see its PAD keys
    assert torch.allclose(pattern[0, 0, :3, :3], torch.full((3, 3), 1 / 3))


def test_encode_puts_bos_first_and_pads_right(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["abc", "b"])
    assert ids.dtype == torch.int64
    assert ids.tolist() == [[3, 0, 1, 2], [3, 1, 4, 4]]
    assert lengths == [3, 1]


def test_cache_holds_every_transformer_lens_hook_with_its_shape(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    cfg = model.config
    ids, _ = model.encode(["abc", "ab"])
    logits, cache = model.run_with_cache(ids)
    batch, pos = ids.shape
    expected = {
        "hook_embed": (batch, pos, cfg.d_model),
        "hook_pos_embed": (batch, pos, cfg.d_model),
        "blocks.0.hook_resid_pre": (batch, pos, cfg.d_model),
        "blocks.0.attn.hook_q": (batch, pos, cfg.n_heads, cfg.d_head),
        "blocks.0.attn.hook_k": (batch, pos, cfg.n_heads, cfg.d_head),
        "blocks.0.attn.hook_v": (batch, pos, cfg.n_heads, cfg.d_head),
        "blocks.0.attn.hook_attn_scores": (batch, cfg.n_heads, pos, pos),
        "blocks.0.attn.hook_pattern": (batch, cfg.n_heads, pos, pos),
        "blocks.0.attn.hook_z": (batch, pos, cfg.n_heads, cfg.d_head),
        "blocks.0.hook_attn_out": (batch, pos, cfg.d_model),
        "blocks.0.hook_resid_mid": (batch, pos, cfg.d_model),
        "blocks.0.mlp.hook_pre": (batch, pos, cfg.d_mlp),
        "blocks.0.mlp.hook_post": (batch, pos, cfg.d_mlp),
        "blocks.0.hook_mlp_out": (batch, pos, cfg.d_model),
        "blocks.0.hook_resid_post": (batch, pos, cfg.d_model),
    }
    assert {name: tuple(t.shape) for name, t in cache.items()} == expected
    assert all(t.dtype == torch.float32 for t in cache.values())
    assert logits.shape == (batch, pos, cfg.d_vocab_out)
    assert torch.equal(logits, model.forward(ids))


@pytest.mark.parametrize("builder", ["bidirectional", "causal", "two_back"])
def test_residuals_match_an_independent_numpy_forward(builder: str) -> None:
    made = hm.two_back() if builder == "two_back" else hm.mean_of_a(causal=builder == "causal")
    tensors = {name: torch.from_numpy(value) for name, value in made.tensors.items()}
    model = Transformer(transformer.ModelConfig(**made.metadata["config"]))
    model.load_state_dict(tensors, strict=True)
    bos, pad = made.metadata["vocab"]["bos_id"], made.metadata["vocab"]["pad_id"]
    ids = np.array([[bos, 0, 1, 0, pad, pad], [bos, 1, 1, 0, 0, 1]])
    logits, cache = model.run_with_cache(torch.from_numpy(ids))
    reference = hm.numpy_forward(made.tensors, made.metadata["config"], ids)
    for name, value in reference.items():
        got = logits if name == "logits" else cache[name]
        np.testing.assert_allclose(got.numpy(), value, rtol=1e-6, atol=1e-6, err_msg=name)


def test_causal_attention_never_looks_ahead(causal_mean_path: Path) -> None:
    model = transformer.load(causal_mean_path)
    _, cache = model.run_with_cache(model.encode(["abab"])[0])
    pattern = cache["blocks.0.attn.hook_pattern"][0, 0]  # [q, k]
    assert torch.all(pattern.triu(diagonal=1) == 0)
    # A later token cannot change an earlier output.
    assert model.run(["ab"])[0] == model.run(["abaa"])[0][:2]


def test_a_model_without_blocks_runs(model_dir: Path) -> None:
    model = transformer.load(hm.identity([3, 1, 2]).save(model_dir / "identity.safetensors"))
    assert model.config.n_layers == 0
    assert model.run([[3, 1, 2, 2], [1]]) == [[3, 1, 2, 2], [1]]
    _, cache = model.run_with_cache(model.encode([[1, 2]])[0])
    assert set(cache) == {"hook_embed", "hook_pos_embed"}


def test_parameter_names_are_the_file_tensor_names(prev_path: Path) -> None:
    made = hm.previous_token()
    model = transformer.load(prev_path)
    state = model.model.state_dict()
    assert set(state) == set(made.tensors)
    for name, value in made.tensors.items():
        assert torch.equal(state[name], torch.from_numpy(value)), name
    assert not any(p.requires_grad for p in model.model.parameters())


def test_loaded_model_exposes_its_metadata(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    assert model.max_len == 6
    assert model.vocab.tokens == ("a", "b", "c")
    assert model.device == torch.device("cpu")
    assert model.meta.output.name == "prev"
    assert model.residual_labels[:3] == ("tokens:a", "tokens:b", "tokens:c")
    assert model.meta.layers[0].attn[0].name == "prev"
    assert transformer.read_metadata(prev_path) == hm.previous_token().metadata


def test_degenerate_sizes_without_heads_or_mlp_units(model_dir: Path) -> None:
    made = hm.identity(["a", "b"])
    config = made.metadata["config"]
    config.update(n_layers=1, n_heads=0, d_head=0, d_mlp=0)
    made.metadata["layers"] = [{"attn": [], "mlp": []}]
    shapes = tensor_shapes(config)
    made.tensors.update({name: np.zeros(shape, np.float32) for name, shape in shapes.items()
                         if name not in made.tensors})  # fmt: skip
    model = transformer.load(made.save(model_dir / "degenerate.safetensors"))
    assert model.run(["ab", "b"]) == [["a", "b"], ["b"]]
    _, cache = model.run_with_cache(model.encode(["ab"])[0])
    assert cache["blocks.0.attn.hook_pattern"].shape == (1, 0, 3, 3)
    assert torch.equal(cache["blocks.0.hook_resid_post"], cache["blocks.0.hook_resid_pre"])


def test_a_loaded_model_survives_its_file_being_rewritten(tmp_path: Path) -> None:
    # In a subprocess: weights still mapped from the file would die of SIGBUS after truncation.
    path = hm.previous_token().save(tmp_path / "rewritten.safetensors")
    code = (
        "import sys, pathlib, transformer\n"
        "model = transformer.load(sys.argv[1])\n"
        "pathlib.Path(sys.argv[1]).write_bytes(b'')\n"
        "print(model.run(['abc']))\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[['-', 'a', 'b']]"

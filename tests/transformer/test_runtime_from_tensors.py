"""`transformer.from_tensors`: a model from a file's contents in memory, checked as `load` checks
the file; and `CompiledTransformer.to`, a copy on another device or in float64."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import handmade_models as hm
import numpy as np
import pytest
import torch

import transformer
from transformer import ModelFormatError
from transformer.fileformat import FORMAT_VERSION
from transformer.io import IN_MEMORY

ALL_AB = ["".join(t) for n in range(1, 7) for t in itertools.product("ab", repeat=n)]


def edited(edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]) -> hm.Handmade:
    made = hm.previous_token()
    edit(made.metadata, made.tensors)
    return made


def expect_same_refusal(made: hm.Handmade, tmp_path: Path, *fragments: str) -> None:
    """`from_tensors` refuses what `load` refuses for the saved file, with the same reason."""
    from safetensors.numpy import save_file

    path = tmp_path / "m.safetensors"  # saved as they are (`hm.save` would convert to float32)
    save_file(made.tensors, str(path), metadata={"rasp_forge": json.dumps(made.metadata)})
    with pytest.raises(ModelFormatError) as from_file:
        transformer.load(path)
    with pytest.raises(ModelFormatError) as in_memory:
        transformer.from_tensors(made.tensors, made.metadata)
    assert in_memory.value.path == IN_MEMORY and "\n" not in str(in_memory.value)
    assert in_memory.value.reason == from_file.value.reason
    for fragment in fragments:
        assert fragment in in_memory.value.reason


@pytest.mark.parametrize("builder", [hm.previous_token, hm.two_back, hm.mean_of_a])
def test_in_memory_model_runs_exactly_as_its_file(
    builder: Callable[[], hm.Handmade], tmp_path: Path
) -> None:
    made = builder()
    loaded = transformer.load(made.save(tmp_path / "m.safetensors"))
    built = transformer.from_tensors(made.tensors, made.metadata)
    ids, _ = built.encode(ALL_AB)
    assert torch.equal(built.forward(ids), loaded.forward(ids))
    assert built.run(ALL_AB) == loaded.run(ALL_AB)
    assert built.meta.raw == loaded.meta.raw and built.device.type == "cpu"


def test_torch_tensors_are_accepted_and_every_input_is_copied() -> None:
    made = hm.previous_token()
    before = transformer.from_tensors(made.tensors, made.metadata).run(ALL_AB)
    tensors = {name: torch.from_numpy(value) for name, value in made.tensors.items()}
    model = transformer.from_tensors(tensors, made.metadata)
    for value in made.tensors.values():
        value[...] = 0.0  # the caller's arrays (shared with `tensors`) change afterwards
    made.metadata["output"]["values"] = ["x"] * len(made.metadata["output"]["values"])
    assert model.run(ALL_AB) == before


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (lambda m, t: t.pop("blocks.0.attn.W_K"), ["missing tensor(s) 'blocks.0.attn.W_K'"]),
        (lambda m, t: t.update({"ln_final.w": np.ones(16, np.float32)}), ["unexpected tensor(s)"]),
        (lambda m, t: t.update({"unembed.W_U": np.zeros((16, 3), np.float32)}), ["needs [16, 4]"]),
        (
            lambda m, t: t.update({"unembed.b_U": t["unembed.b_U"].astype(np.float64)}),
            ["'unembed.b_U' has dtype F64", "the format stores F32"],
        ),
        (lambda m, t: t["embed.W_E"].__setitem__((0, 0), np.inf), ["contains NaN or infinite"]),
        (lambda m, t: m.update(format_version=FORMAT_VERSION + 1), ["upgrade rasp-forge"]),
        (lambda m, t: m["config"].update(n_heads=2), ["'blocks.0.attn.W_Q' has shape"]),
        (lambda m, t: m.pop("residual"), ["metadata is missing 'residual'"]),
    ],
)
def test_in_memory_refusals_are_the_files_refusals(
    edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None],
    fragments: list[str],
    tmp_path: Path,
) -> None:
    expect_same_refusal(edited(edit), tmp_path, *fragments)


def test_metadata_that_is_not_json_is_refused() -> None:
    made = hm.previous_token()
    for bad in ({**made.metadata, "extra": object()}, {**made.metadata, "extra": float("nan")}):
        with pytest.raises(ModelFormatError, match="the metadata is not a JSON object"):
            transformer.from_tensors(made.tensors, bad)
    with pytest.raises(ModelFormatError, match="is a list, not a numpy array"):
        transformer.from_tensors({**made.tensors, "embed.W_E": [[0.0]]}, made.metadata)  # type: ignore[dict-item]


def test_tensors_that_hold_no_values_or_no_mapping_are_refused() -> None:
    """A sparse tensor raised torch's RuntimeError, a meta tensor NotImplementedError and a list
    of pairs AttributeError ('list' object has no attribute 'items')."""
    made = hm.previous_token()
    dense = torch.from_numpy(made.tensors["embed.W_E"])
    for value, kind in ((dense.to_sparse(), "a torch.sparse_coo tensor"),
                        (torch.empty(dense.shape, device="meta"), "a meta tensor")):  # fmt: skip
        with pytest.raises(ModelFormatError, match=f"tensor 'embed.W_E' is {kind}, not one"):
            transformer.from_tensors({**made.tensors, "embed.W_E": value}, made.metadata)
    with pytest.raises(ModelFormatError, match="the tensors must map names to arrays, got list"):
        transformer.from_tensors(list(made.tensors.items()), made.metadata)  # type: ignore[arg-type]


def test_a_float64_copy_decodes_alike_and_leaves_the_original() -> None:
    made = hm.mean_of_a()  # a float output: float64 shows the float32 rounding
    model = transformer.from_tensors(made.tensors, made.metadata)
    wide = model.to(dtype=torch.float64)
    assert wide.dtype == torch.float64 and model.dtype == torch.float32
    ids, lengths = model.encode(ALL_AB)
    logits, cache = wide.run_with_cache(ids)
    assert (
        logits.dtype == torch.float64 and cache["blocks.0.attn.hook_pattern"].dtype == torch.float64
    )
    expected = [hm.expected_mean_of_a(text) for text in ALL_AB]
    for got, want in zip(wide.decode(logits, lengths), expected, strict=True):
        assert got == pytest.approx(want, rel=1e-12)
    for got, want in zip(model.run(ALL_AB), expected, strict=True):
        assert got == pytest.approx(want, rel=1e-6)
    assert model.forward(ids).dtype == torch.float32
    prev = hm.previous_token()  # categorical: the same values exactly
    model = transformer.from_tensors(prev.tensors, prev.metadata)
    assert model.to(dtype=torch.float64).run(ALL_AB) == model.run(ALL_AB)
    with pytest.raises(ValueError, match="floating-point"):
        model.to(dtype=torch.int64)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_a_copy_narrower_than_float32_is_refused(dtype: torch.dtype) -> None:
    """The certificate bounds float32 rounding: a bfloat16 copy of reverse decoded 348 of its 363
    inputs at N = 5 wrongly, without an error."""
    made = hm.previous_token()
    model = transformer.from_tensors(made.tensors, made.metadata)
    with pytest.raises(ValueError, match=f"dtype {dtype} is narrower than float32"):
        model.to(dtype=dtype)
    assert model.to(dtype=torch.float32).run(ALL_AB) == model.run(ALL_AB)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_a_copy_on_a_missing_device_is_a_model_format_error() -> None:
    made = hm.previous_token()
    model = transformer.from_tensors(made.tensors, made.metadata)
    with pytest.raises(ModelFormatError, match="cannot place the model on device 'cuda'"):
        model.to("cuda")


def test_the_meta_device_is_refused_where_the_model_is_placed(tmp_path: Path) -> None:
    """The meta device keeps shapes, not values: the model loaded, and its first run failed
    with torch's RuntimeError (Tensor.item() cannot be called on meta tensors)."""
    made = hm.previous_token()
    path = made.save(tmp_path / "prev.safetensors")
    model = transformer.from_tensors(made.tensors, made.metadata)
    for place in (
        lambda: transformer.load(path, device="meta"),
        lambda: transformer.from_tensors(made.tensors, made.metadata, device="meta"),
        lambda: model.to("meta"),
        lambda: model.to(torch.device("meta"), dtype=torch.float64),
    ):
        with pytest.raises(ModelFormatError, match="cannot place the model on device 'meta'"):
            place()


@pytest.mark.parametrize("device", ["hpu", "xla", "nonsense"])
def test_a_device_torch_lacks_is_a_model_format_error(device: str, tmp_path: Path) -> None:
    """torch 2.13 without Habana support raised `ModuleNotFoundError: No module named
    'torch.hpu'` from `load(path, device="hpu")`, past the runtime's error."""
    made = hm.previous_token()
    path = made.save(tmp_path / "prev.safetensors")
    model = transformer.from_tensors(made.tensors, made.metadata)
    for place in (lambda: transformer.load(path, device=device), lambda: model.to(device)):
        with pytest.raises(ModelFormatError, match=f"cannot place the model on device '{device}'"):
            place()

"""The arguments of `CompiledTransformer`'s methods besides the inputs themselves: batch sizes,
dtypes, lengths, codes and hand-made ids. A wrong one is a clear error (`ValueError`, or the
runtime's `ModelInputError`), never a bare TypeError from inside nor a wrong answer."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

import transformer
from transformer import ModelInputError
from transformer.interop import to_transformer_lens


@pytest.mark.parametrize("size", [2.5, None, "2", True, 0, -3])
def test_a_batch_size_that_is_not_a_positive_int_is_refused(prev_path: Path, size: object) -> None:
    """2.5 raised `TypeError: 'float' object cannot be interpreted as an integer`, None and "2"
    a TypeError comparing them with 1, and True ran as 1."""
    model = transformer.load(prev_path)
    ids, _ = model.encode(["ab"])
    message = f"batch_size must be an integer >= 1, got {size!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        model.run(["ab"], batch_size=size)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape(message)):
        model.run_ids(ids, batch_size=size)  # type: ignore[arg-type]
    assert model.run(["ab"], batch_size=np.int64(2)) == [["-", "a"]]


@pytest.mark.parametrize("dtype", ["float64", np.float64, 64])
def test_a_dtype_that_is_not_a_torch_dtype_is_refused(prev_path: Path, dtype: object) -> None:
    """`to(dtype="float64")` raised `AttributeError: 'str' object has no attribute
    'is_floating_point'`."""
    model = transformer.load(prev_path)
    with pytest.raises(ValueError, match="dtype must be a torch dtype"):
        model.to(dtype=dtype)  # type: ignore[arg-type]


def test_lengths_may_be_a_tensor_or_an_array(prev_path: Path) -> None:
    """A tensor of lengths was refused as `lengths[0] is tensor(2); a row of logits holds 0..2
    positions`, which reads as if 2 did not fit."""
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["ab", "c"])
    logits, codes = model.forward(ids), model.run_ids(ids)
    expected = model.run(["ab", "c"])
    for given in (torch.tensor(lengths), np.array(lengths), tuple(lengths)):
        assert model.decode(logits, given) == expected  # type: ignore[arg-type]
        assert model.to_values(codes, given) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("lengths", [2, None, "2"], ids=["int", "none", "str"])
def test_lengths_that_are_not_a_list_are_refused(prev_path: Path, lengths: object) -> None:
    """`decode(logits, 2)` raised `TypeError: object of type 'int' has no len()`."""
    model = transformer.load(prev_path)
    ids, _ = model.encode(["ab"])
    with pytest.raises(ModelInputError, match="lengths must be a list of ints, one per row"):
        model.decode(model.forward(ids), lengths)  # type: ignore[arg-type]
    with pytest.raises(ModelInputError, match="lengths must be a list of ints, one per row"):
        model.to_values(model.run_ids(ids), lengths)  # type: ignore[arg-type]


def test_codes_of_another_shape_are_refused(prev_path: Path) -> None:
    """One row's codes without the batch dimension were read as one row per code: `1 lengths
    for 2 rows of codes` (and with lengths [0, 0], two empty outputs)."""
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["ab"])
    codes = model.run_ids(ids)
    for bad in (codes[0], codes[None]):
        with pytest.raises(ModelInputError, match=r"codes must be \[batch, n\]"):
            model.to_values(bad, lengths)


def test_run_ids_of_no_rows_has_the_codes_dtype(prev_path: Path, mean_path: Path) -> None:
    """An empty batch gave float32 codes (torch's default dtype), where a categorical model's
    codes are int64 and a numerical one's without listed values float64."""
    for path, dtype in ((prev_path, torch.int64), (mean_path, torch.float64)):
        model = transformer.load(path)
        ids, _ = model.encode(["ab"])
        assert model.run_ids(ids).dtype == dtype
        empty = model.run_ids(ids[:0])
        assert empty.dtype == dtype and empty.shape == (0, ids.shape[1] - 1)


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda ids: ids[:, 1:], "position 0 of row 0 holds id 0, not BOS (3)"),
        (lambda ids: torch.tensor([[3, 0, 3, 1]]), "row 0 holds BOS (3) at position 2"),
        (lambda ids: torch.tensor([[3, 0, 4, 1]]), "row 0 holds PAD (4) before a token"),
        (lambda ids: torch.cat([ids, torch.zeros_like(ids)]), "position 0 of row 1 holds id 0"),
    ],
    ids=["no_bos", "bos_inside", "pad_inside", "second_row"],
)
def test_run_ids_refuses_ids_that_encode_would_not_give(
    prev_path: Path, make: object, what: str
) -> None:
    """Ids without BOS ran as if their first token were BOS (the previous token of "abc" came
    out `['a', 'b']` for "bc"), and a PAD inside an input cut it short: wrong codes without a
    word. The raw forward pass still takes any ids, for experiments."""
    model = transformer.load(prev_path)
    ids, _ = model.encode(["abc"])
    bad = make(ids)  # type: ignore[operator]
    with pytest.raises(ModelInputError, match=re.escape(what)):
        model.run_ids(bad)
    assert model.forward(bad).shape[:2] == bad.shape
    assert model.run_ids(ids[:, :1]).shape == (1, 0)  # BOS alone: no position to decode
    short, _ = model.encode(["abc", "a"])  # PAD after an input's tokens is what encode gives
    assert model.to_values(model.run_ids(short), [3, 1]) == model.run(["abc", "a"])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_weights_converted_in_place_to_a_narrow_dtype_are_refused(
    prev_path: Path, dtype: torch.dtype
) -> None:
    """`model.model` is the plain nn.Module, whose `.to(dtype)` converts in place, past
    `CompiledTransformer.to`'s refusal: a compiled sort then decoded all 363 inputs of length
    1..5 wrongly in bfloat16, without an error."""
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["ab"])
    model.model.to(dtype)
    message = f"the model's weights are {dtype}, narrower than float32"
    calls = {
        "run": lambda: model.run(["ab"]),
        "forward": lambda: model.forward(ids),
        "module": lambda: model.model(ids),
        "run_with_cache": lambda: model.run_with_cache(ids),
        "run_ids": lambda: model.run_ids(ids),
        "run_array": lambda: model.run_array(np.array([list("ab")])),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=re.escape(message)):
            call()
            pytest.fail(f"{name} ran in {dtype}")
    with pytest.raises(ValueError, match=re.escape(message)):
        to_transformer_lens(model)  # its state dict would hand the rounded weights on
    model.model.double()  # float64 is exact where float32 is (to(dtype=torch.float64) allows it)
    assert model.run(["ab"]) == [["-", "a"]]
    model.model.to(torch.complex64)
    with pytest.raises(ValueError, match="weights are torch.complex64, not float32"):
        model.run(["ab"])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_one_tensor_converted_to_a_narrow_dtype_is_refused(
    prev_path: Path, dtype: torch.dtype
) -> None:
    """The check read W_E's dtype alone: a bias converted by itself is promoted back to float32
    where it is added, its rounding kept (a compiled sort with `blocks.0.mlp.b_in` in bfloat16
    decoded wrongly, without an error). Every floating tensor of the module is checked."""
    model = transformer.load(prev_path)
    name, bias = next((n, p) for n, p in model.model.named_parameters() if ".b_" in n)
    bias.data = bias.data.to(dtype)
    with pytest.raises(ValueError, match=re.escape(f"weight {name} is {dtype}, narrower than")):
        model.run(["ab"])
    bias.data = bias.data.double()  # exact, but torch's products refuse mixed dtypes
    with pytest.raises(ValueError, match=re.escape(f"weight {name} is torch.float64, its emb")):
        model.run(["ab"])
    model.model.double()
    assert model.run(["ab"]) == [["-", "a"]]

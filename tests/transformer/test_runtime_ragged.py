"""`run_array(tokens, lengths=...)`: a ragged batch in one array gives, row by row, what `run` gives
each input alone, whatever lies past a row's length; and the batches inputs of mixed lengths run
in (transformer/batching.py)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import as_runtime, ragged_array
from test_runtime_grids import end_grid_mean_of_a, length_grid_mean_of_a

import transformer
from transformer import ModelInputError
from transformer.batching import CPU_POSITIONS, SLACK_TOKENS, WASTE, length_batches

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

# -- batches -------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 300), min_size=1, max_size=400),
    batch_size=st.integers(1, 600),
    cpu=st.booleans(),
)
def test_batches_cover_every_input_once_in_length_order(
    lengths: list[int], batch_size: int, cpu: bool
) -> None:
    batches = length_batches(lengths, batch_size, cpu=cpu)
    order = np.concatenate(batches)
    assert sorted(order.tolist()) == list(range(len(lengths)))
    # sorted by length, equal lengths in input order: each batch's last input is its longest
    assert order.tolist() == sorted(range(len(lengths)), key=lambda i: lengths[i])
    assert all(0 < len(batch) <= batch_size for batch in batches)
    if not cpu:  # as before: batch_size consecutive inputs of that order
        assert [len(batch) for batch in batches[:-1]] == [batch_size] * (len(batches) - 1)
        return
    for batch in batches:
        sizes = [lengths[i] for i in batch]
        # a few thousand positions at most (but one input), and little padding past SLACK_TOKENS
        assert len(batch) == 1 or len(batch) * (1 + max(sizes)) <= CPU_POSITIONS
        waste = len(batch) * max(sizes) - sum(sizes)
        last = [n for n in sizes if n < max(sizes)]  # the rows padded to the longest
        if last:
            before = len(last) * max(sizes) - sum(last)
            assert before <= max(WASTE * sum(last), SLACK_TOKENS) or waste <= SLACK_TOKENS


def test_mixed_lengths_run_in_batches_of_near_lengths_on_the_cpu() -> None:
    rng = random.Random(0)
    lengths = [rng.randint(1, 256) for _ in range(1024)]
    batches = length_batches(lengths, 1024, cpu=True)
    padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    # before: one batch padded to 256, twice the real tokens (and 3x the attention)
    assert padded <= 1.1 * sum(lengths)
    assert len(length_batches(lengths, 1024, cpu=False)) == 1


# -- run_array with lengths --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reverse_model() -> transformer.CompiledTransformer:
    from compiler import compile_sop
    from rasp.interpreter import load_file

    path = Path(__file__).resolve().parents[2] / "programs" / "reverse.rasp"
    return as_runtime(compile_sop(load_file(path).get("reverse"), list("abc"), 4, name="reverse"))


INPUTS = ["a", "cab", "ba", "abca", "c", "bb", "acb", "b"]


@pytest.mark.parametrize("batch_size", [1, 3, 256])
def test_a_ragged_array_gives_what_each_input_gives_alone(
    batch_size: int, reverse_model: Any
) -> None:
    tokens, lengths = ragged_array(INPUTS)
    assert tokens.dtype == np.dtype("U1")  # padded with "", outside the vocabulary
    got = reverse_model.run_array(tokens, batch_size=batch_size, lengths=lengths)
    assert got.dtype == np.dtype("U1") and got.shape == (len(INPUTS), 4)
    for row, text, n in zip(got.tolist(), INPUTS, lengths, strict=True):
        assert row == reverse_model.run([text])[0] + [""] * (4 - n)


@pytest.mark.parametrize(
    "padding",
    [
        np.array([list("abca"), ["b", "<pad>", "<pad>", "<pad>"]]),  # wider strs: per token
        np.array([list("abca"), ["b", None, 7, "z"]], dtype=object),
        np.ma.array([list("abca"), list("bzzz")], mask=[[0] * 4, [0, 1, 1, 1]]),
        np.array([list("abca"), ["b", "\x00", "a", "z"]]),  # "" and "\x00" are code point 0
    ],
)
def test_tokens_past_a_length_are_never_read(padding: Any, reverse_model: Any) -> None:
    got = reverse_model.run_array(padding, lengths=[4, 1])
    assert got.tolist() == [["a", "c", "b", "a"], ["b", "", "", ""]]


def test_ints_and_the_device_lookup_take_lengths() -> None:
    from compiler import compile_sop
    from rasp.interpreter import load_file

    path = Path(__file__).resolve().parents[2] / "programs" / "hist.rasp"
    hist = as_runtime(compile_sop(load_file(path).get("hist"), [1, 2, 3], 4, name="hist"))
    tokens = np.array([[1, 2, 2, 3], [3, 3, 0, 0], [2, -5, 99, 0]])  # 0, -5, 99: no tokens
    lengths = np.array([4, 2, 1])
    want = [hist.run([row[:n]])[0] for row, n in zip(tokens.tolist(), lengths, strict=True)]
    got = hist.run_array(tokens, lengths=lengths)
    assert got.dtype == np.int64
    assert [row[:n] for row, n in zip(got.tolist(), lengths, strict=True)] == want
    assert got.tolist()[1][2:] == [0, 0]  # int64's fill
    assert hist.run_array(tokens, lengths=torch.tensor(lengths), fill=-1).tolist()[2] == [
        want[2][0],
        -1,
        -1,
        -1,
    ]
    # the lookup a GPU makes, here on the CPU: padding keys looked up as a known one
    codec = hist._arrays
    keyed = codec._keys(tokens)
    assert keyed is not None
    assert codec._lookup_torch(*keyed, torch.device("cpu")) is None  # 0, -5, 99 unknown


@pytest.mark.parametrize("made", [length_grid_mean_of_a, end_grid_mean_of_a])
def test_grids_by_length_and_from_the_end_use_each_rows_own_length(made: Any) -> None:
    model = transformer.from_tensors(made().tensors, made().metadata)
    texts = ["ab", "aaab", "b", "abbab", "a"]
    tokens, lengths = ragged_array(texts)
    got = model.run_array(tokens, batch_size=2, lengths=lengths)
    assert got.dtype == np.float64
    for row, text, n in zip(got.tolist(), texts, lengths, strict=True):
        assert row[:n] == model.run([text])[0]
        assert all(np.isnan(row[n:]))  # float64's fill


def test_an_array_wider_than_max_len_holds_shorter_inputs(reverse_model: Any) -> None:
    tokens = np.full((2, 9), "", dtype="U1")
    tokens[0, :4], tokens[1, :2] = list("abca"), list("ba")
    got = reverse_model.run_array(tokens, lengths=[4, 2], fill="-")
    assert got.shape == (2, 9)
    assert got.tolist() == [list("acba") + ["-"] * 5, list("ab") + ["-"] * 7]
    empty = reverse_model.run_array(np.empty((0, 3), dtype="U1"), lengths=[])
    assert empty.shape == (0, 3) and empty.dtype == np.dtype("U1")


@pytest.mark.parametrize(
    ("lengths", "fill", "message"),
    [
        ([4], None, r"1 lengths for 2 rows of tokens"),
        ([4, 0], None, r"lengths\[1\] is 0; an input holds at least one token"),
        ([4, 5], None, r"lengths\[1\] is 5; a row of tokens holds 0..4 positions"),
        ([4, True], None, r"lengths\[1\] is True"),
        ("ab", None, "lengths must be a list of ints"),
        ([4, 2], 1, "fill 1 is no value of the output's dtype <U1"),
        ([4, 2], "ab", "fill 'ab' is no value"),
    ],
)
def test_bad_lengths_and_fills_are_named(
    lengths: Any, fill: Any, message: str, reverse_model: Any
) -> None:
    tokens = np.array([list("abca"), list("ba  ")])
    with pytest.raises(ModelInputError, match=message):
        reverse_model.run_array(tokens, lengths=lengths, fill=fill)


def test_lengths_beyond_max_len_and_tokens_within_a_length_are_checked(
    reverse_model: Any,
) -> None:
    wide = np.array([list("abcab")])
    with pytest.raises(ModelInputError, match=r"lengths\[0\] is 5; the model reads at most 4"):
        reverse_model.run_array(wide, lengths=[5])
    with pytest.raises(ModelInputError, match='token "z" at position 1 of input 1 is not in'):
        reverse_model.run_array(np.array([list("abc"), list("azc")]), lengths=[3, 2])
    masked = np.ma.array([list("abc"), list("bca")], mask=[[0] * 3, [0, 1, 1]])
    with pytest.raises(ModelInputError, match="position 1 of input 1 is masked") as err:
        reverse_model.run_array(masked, lengths=[3, 2])
    assert "one length" not in str(err.value)
    with pytest.raises(ModelInputError, match="give lengths= with it"):
        reverse_model.run_array(np.array([list("abc")]), fill="")
    with pytest.raises(ModelInputError, match=r"got list \(run takes lists of inputs\)"):
        reverse_model.run_array([list("abc")], lengths=[3])


def test_a_padded_array_without_lengths_points_to_them(reverse_model: Any) -> None:
    with pytest.raises(ModelInputError) as err:
        reverse_model.run_array(np.array([list("abc"), ["a", "b", ""]]))
    assert str(err.value).endswith(
        'input 1 reads as 2 tokens padded with "": give each input\'s length (run_array(tokens, '
        "lengths=...), which ignores the tokens past it), or inputs of several lengths to run"
    )


@needs_cuda
def test_a_ragged_array_on_cuda_equals_the_cpu(reverse_model: Any) -> None:
    rng = random.Random(3)
    texts = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 4))) for _ in range(300)]
    tokens, lengths = ragged_array(texts)
    on_gpu = reverse_model.to("cuda")
    got = on_gpu.run_array(tokens, lengths=lengths)
    assert np.array_equal(got, reverse_model.run_array(tokens, lengths=lengths))


def test_run_ids_and_run_array_cut_cpu_batches_at_the_position_cap(
    reverse_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch of 1024 full-length rows took 2-3x the time of batches of at most CPU_POSITIONS
    positions (bench/README.md): `run_ids` and `run_array` cut their CPU batches there too, and
    give the same values as one row at a time."""
    model = reverse_model
    rng = random.Random(5)
    n = model.max_len
    inputs = [[rng.choice(model.vocab.tokens) for _ in range(n)] for _ in range(40)]
    ids, _ = model.encode(inputs)
    alone = torch.cat([model.run_ids(ids[b : b + 1], batch_size=1) for b in range(len(inputs))])
    expected = model.run(inputs)
    seen: list[int] = []
    reduce = model._reduce

    def counted(batch: torch.Tensor, find_undecided: bool) -> Any:
        seen.append(batch.shape[0] * batch.shape[1])
        return reduce(batch, find_undecided)

    monkeypatch.setattr(model, "_reduce", counted)
    monkeypatch.setattr(transformer.compiled, "CPU_POSITIONS", 3 * (1 + n))
    assert torch.equal(model.run_ids(ids, batch_size=1024), alone)
    got = model.run_array(np.array(inputs), batch_size=1024)
    assert got.tolist() == expected
    assert seen and max(seen) == 3 * (1 + n)  # 3 rows of BOS + n positions, not 40

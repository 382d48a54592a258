"""The vectorised encode and the codes-based decode give exactly what the per-token and numpy
paths give: same ids, same values, same errors (token, position and input named alike)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import transformer
from transformer import ModelInputError, ModelOutputError
from transformer.decoding import OutputEncoding, OutputSpec, OutputType
from transformer.vocab import Vocab

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@contextmanager
def per_token_path() -> Iterator[None]:
    """`Vocab.encode` with the vectorised path switched off: the reference."""
    with mock.patch.object(Vocab, "_encode_vectorised", return_value=None):
        yield


def encode_both(vocab: Vocab, inputs: Any) -> tuple[Any, Any]:
    """(fast, reference) results of `vocab.encode(inputs)`: ids and lengths, or the error text."""
    results = []
    for reference in (False, True):
        try:
            if reference:
                with per_token_path():
                    ids, lengths = vocab.encode(inputs)
            else:
                ids, lengths = vocab.encode(inputs)
            results.append((ids.tolist(), lengths, ids.dtype))
        except ModelInputError as err:
            results.append(str(err))
    return results[0], results[1]


MIXED = Vocab((1, "1", True, 1.5, "x", "é", "ab", 0, -3, "😀"), bos_id=10, pad_id=11, max_len=5)
# tokens in and out of MIXED: 1/1.0/True/"1" are four different tokens
POOL = [1, "1", True, 1.5, "x", "é", "ab", 0, -3, "😀", 1.0, False, 2, "", "z", "a", None, 2**70]
POOL += [np.int64(1), np.bool_(True), np.float64(1.5), np.str_("x")]
# the vectorised check joins tokens with "\x00" (no entry of MIXED): tokens holding it must not
# pass for one-character ones
POOL += ["\x00", "x\x00", "\x00x", "\x00\x00"]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.lists(st.sampled_from(POOL), max_size=6),
            st.lists(st.sampled_from(POOL), max_size=6).map(tuple),
            st.text(alphabet="x1éaz😀\ud800", max_size=6),
            st.lists(st.integers(-4, 3), max_size=6).map(np.array),
            st.sampled_from([3, None, b"x"]),
        ),
        min_size=0,
        max_size=5,
    )
)
def test_vectorised_encode_matches_the_per_token_path(inputs: list[Any]) -> None:
    fast, reference = encode_both(MIXED, inputs)
    assert fast == reference


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.lists(st.text(alphabet="abc\u00e9\u4e2d😀\ud800\x00z", min_size=0, max_size=7), max_size=6),
    st.booleans(),
)
def test_unicode_inputs_and_ragged_lengths(texts: list[str], as_lists: bool) -> None:
    # an astral character (😀) takes the searchsorted lookup instead of the dense table
    for tokens in ("abc", ("a", "b", "\u00e9", "\u4e2d"), ("a", "😀", "\ud800", "\x00")):
        vocab = Vocab(tuple(tokens), bos_id=len(tokens), pad_id=len(tokens) + 1, max_len=6)
        inputs = [list(t) for t in texts] if as_lists else texts
        fast, reference = encode_both(vocab, inputs)
        assert fast == reference


def test_int_and_str_token_batches_take_the_fast_path() -> None:
    vocab = Vocab((0, 1, 2, 7, "a", "b"), bos_id=6, pad_id=7, max_len=4)
    with mock.patch.object(Vocab, "_encode_one", side_effect=AssertionError("slow path")):
        ids, lengths = vocab.encode([[7, 0], [2, 1, 1]])
        assert ids.tolist() == [[6, 3, 0, 7], [6, 2, 1, 1]] and lengths == [2, 3]
        ids, _ = vocab.encode(["ab", ["b"], ("a", "a", "b")])
        assert ids.tolist() == [[6, 4, 5, 7], [6, 5, 7, 7], [6, 4, 4, 5]]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([[1, 2], [0, True]], "token true at position 1 of input 1"),
        ([[1, 2], [0, 1.0]], "token 1.0 at position 1 of input 1"),
        ([["a", "b"], ["a", ""]], 'token "" at position 1 of input 1'),
        ([["a", "ab"]], 'token "ab" at position 1 of the input'),
        (["ab", "ba", "abz"], 'token "z" at position 2 of input 2'),
        (["ab", "", "abz"], "input 1 is empty"),
        ([[0, 2**64]], "token 18446744073709551616 at position 1 of the input"),
    ],
)
def test_bad_tokens_are_named_alike(inputs: list[Any], message: str) -> None:
    vocab = Vocab((0, 1, 2, "a", "b"), bos_id=5, pad_id=6, max_len=4)
    fast, reference = encode_both(vocab, inputs)
    assert fast == reference
    assert isinstance(fast, str) and message in fast


# -- decoding --------------------------------------------------------------------------------------


SPECS = [
    OutputSpec("c", OutputEncoding.CATEGORICAL, OutputType.STRINGS, ("x", 1, True, 2.5)),
    OutputSpec("i", OutputEncoding.NUMERICAL, OutputType.INTS, None),
    OutputSpec("b", OutputEncoding.NUMERICAL, OutputType.BOOLS, None),
    OutputSpec("f", OutputEncoding.NUMERICAL, OutputType.FLOATS, None),
    OutputSpec("s", OutputEncoding.NUMERICAL, OutputType.FLOATS, (0, 0.5, 1.0, 1, -2, 3.25)),
    OutputSpec("one", OutputEncoding.NUMERICAL, OutputType.INTS, (4,)),
]


def _decode_torch(spec: OutputSpec, logits: np.ndarray, lengths: list[int]) -> list[list[Any]]:
    """What a GPU does, on the CPU: the torch reduction, then `values_of`."""
    width = max(lengths)
    at_tokens = torch.from_numpy(logits)[:, 1 : 1 + width]
    real = torch.from_numpy(np.arange(width) < np.asarray(lengths)[:, None])
    reduced = spec._reduce_torch(at_tokens, real)
    spec.check(reduced)
    return spec.values_of(reduced.codes.numpy(), lengths)


def _outcome(fn: Any) -> Any:
    try:
        values = fn()
    except ModelOutputError as err:
        return str(err)
    return [[(type(v), v) for v in row] for row in values]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.sampled_from(range(len(SPECS))),
    st.lists(st.integers(1, 5), min_size=1, max_size=4),
    st.integers(0, 2**32 - 1),
    st.sampled_from([None, float("nan"), float("inf")]),
)
def test_torch_and_numpy_decoding_agree(
    which: int, lengths: list[int], seed: int, poison: float | None
) -> None:
    spec = SPECS[which]
    rng = np.random.default_rng(seed)
    columns = len(spec.values or ()) if spec.encoding is OutputEncoding.CATEGORICAL else 1
    logits = rng.choice([-2.0, -0.5, 0.25, 0.5, 0.75, 1.0, 1.5, 3.0, 2.5], size=(len(lengths), 7))
    logits = np.stack([logits + k for k in range(columns)], axis=-1).astype(np.float32)
    logits += rng.normal(0, 0.3, size=logits.shape).astype(np.float32) * (seed % 2)
    if poison is not None:  # at a real position or past the end of a row
        logits[rng.integers(len(lengths)), rng.integers(1, 7), 0] = poison
    want = _outcome(lambda: spec.decode(logits, lengths))
    assert _outcome(lambda: _decode_torch(spec, logits, lengths)) == want
    width = max(lengths)
    real = torch.from_numpy(np.arange(width) < np.asarray(lengths)[:, None])
    assert (
        _outcome(
            lambda: spec.values_of(
                _checked(spec, spec.reduce(torch.from_numpy(logits)[:, 1 : 1 + width], real)),
                lengths,
            )
        )
        == want
    )


@pytest.mark.parametrize(
    "values",
    [("a", "\u00e9", "b"), ("\x00", "\xff", "z"), ("a", "\u4e2d"), ("a", 0), ("a", "bc")],
)
def test_values_decode_to_the_listed_objects_cut_to_each_length(values: tuple[Any, ...]) -> None:
    # one-character Latin-1 values take a str of the whole batch; others an object array
    spec = OutputSpec("c", OutputEncoding.CATEGORICAL, OutputType.STRINGS, values)
    rng = np.random.default_rng(len(values))
    codes = rng.integers(0, len(values), size=(5, 6))
    for lengths in ([6] * 5, [1, 6, 3, 2, 5]):
        want = [[values[k] for k in row[:n]] for row, n in zip(codes.tolist(), lengths)]
        got = spec.values_of(codes, lengths)
        assert [[(type(v), v) for v in row] for row in got] == [
            [(type(v), v) for v in row] for row in want
        ]


def _checked(spec: OutputSpec, reduced: Any) -> np.ndarray:
    spec.check(reduced)
    return reduced.codes.numpy()


# -- run, run_ids, to_values -----------------------------------------------------------------------

RAGGED = ["abc", "a", "cab", "bb", "abcabc", "c", "ab", "ba", "cc"]


@pytest.mark.parametrize("batch_size", [1, 2, 4, 256])
def test_run_matches_one_by_one_decoding(prev_path: Path, batch_size: int) -> None:
    model = transformer.load(prev_path)
    alone = []
    for text in RAGGED:
        ids, lengths = model.encode([text])
        alone.append(model.decode(model.forward(ids), lengths)[0])
    assert model.run(RAGGED, batch_size=batch_size) == alone
    assert model.run([list(t) for t in RAGGED], batch_size=batch_size) == alone
    # the GPU's order (each batch encoded just before it runs), on the CPU
    assert model._run(RAGGED, batch_size, encode_ahead=False) == alone
    array = np.array([list("abc"), list("cab")])  # a 2-D array: one input per row
    expected = [model.run(["abc"])[0], model.run(["cab"])[0]]
    assert model._run(array, batch_size, encode_ahead=False) == model.run(array) == expected


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        # "q" of input 3 is met first (batches run shortest first); input 0 is named, as on the CPU
        (["abcq", "a", "b", "q"], 'token "q" at position 3 of input 0'),
        ("abc", "expected a list of inputs"),
        ([], "no inputs given"),
        (["ab", 3], "input 1 is of type int"),
        (["ab", ""], "input 1 is empty"),
    ],
)
def test_batches_encoded_one_by_one_report_the_first_bad_input(
    prev_path: Path, inputs: Any, message: str
) -> None:
    model = transformer.load(prev_path)
    with pytest.raises(ModelInputError, match=message):
        model._run(inputs, 1, encode_ahead=False)
    with pytest.raises(ModelInputError, match=message):
        model.run(inputs, batch_size=1)


@pytest.mark.parametrize("fixture", ["prev_path", "mean_path"])
def test_run_ids_and_to_values_give_run(fixture: str, request: pytest.FixtureRequest) -> None:
    model = transformer.load(request.getfixturevalue(fixture))
    texts = ["ab", "b", "abab", "ba"] if fixture == "mean_path" else RAGGED
    ids, lengths = model.encode(texts)
    codes = model.run_ids(ids, batch_size=3)
    assert codes.shape == (len(texts), ids.shape[1] - 1) and codes.device == model.device
    assert model.to_values(codes, lengths) == model.run(texts)
    assert model.to_values(codes.numpy(), lengths) == model.run(texts)
    output = model.meta.output
    if output.encoding is OutputEncoding.CATEGORICAL:  # codes index the values
        assert codes.dtype == torch.int64
        assert [[output.values[k] for k in row[:n]] for row, n in zip(codes.tolist(), lengths)] == (
            model.run(texts)
        )
    else:  # floats without a list: the numbers themselves
        assert codes.dtype == torch.float64
        assert [row[:n] for row, n in zip(codes.tolist(), lengths)] == model.run(texts)


def test_run_ids_checks_its_ids(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    with pytest.raises(ModelInputError, match="ids must"):
        model.run_ids(torch.tensor([[3, 9]]))
    with pytest.raises(ValueError, match="batch_size"):
        model.run_ids(torch.tensor([[3, 0]]), batch_size=0)


def test_run_reports_the_first_bad_output_in_batch_order(mean_path: Path) -> None:
    model = transformer.load(mean_path)
    with torch.no_grad():
        model.model.unembed.W_U.fill_(float("nan"))
    with pytest.raises(ModelOutputError, match="computed nan for output 'double_frac'"):
        model.run(["ab", "b"], batch_size=1)
    with pytest.raises(ModelOutputError, match="computed nan for output 'double_frac'"):
        model._run(["ab", "b"], 1, encode_ahead=False)
    # a bad input is reported first, though the batches before it already ran
    with pytest.raises(ModelInputError, match="input 2"):
        model._run(["ab", "b", "abq"], 1, encode_ahead=False)
    ids, _ = model.encode(["ab"])
    with pytest.raises(ModelOutputError, match="computed nan"):
        model.run_ids(ids)


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("fixture", ["prev_path", "mean_path"])
def test_cuda_codes_match_cpu(fixture: str, request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue(fixture)
    cpu, cuda = transformer.load(path, device="cpu"), transformer.load(path, device="cuda")
    texts = ["ab", "b", "abab", "ba", "a", "bbb"]
    ids, lengths = cpu.encode(texts)
    cpu_codes, cuda_codes = cpu.run_ids(ids), cuda.run_ids(ids)
    assert cuda_codes.device.type == "cuda"
    assert cpu.to_values(cpu_codes, lengths) == cuda.to_values(cuda_codes, lengths)
    assert cpu.run(texts, batch_size=2) == cuda.run(texts, batch_size=2)

"""Inputs -> ids (JSON-typed token matching, clear refusals) and logits -> Python values."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import transformer
from transformer import ModelInputError, ModelOutputError
from transformer.decoding import OutputEncoding, OutputSpec, OutputType
from transformer.vocab import Vocab, token_key


@pytest.fixture(scope="module")
def typed_model(tmp_path_factory: pytest.TempPathFactory) -> transformer.CompiledTransformer:
    path = tmp_path_factory.mktemp("typed") / "typed.safetensors"
    return transformer.load(hm.identity([1, "1", True, 1.5, "x"]).save(path))


def test_tokens_match_by_json_type_and_value(typed_model: transformer.CompiledTransformer) -> None:
    assert typed_model.run([[1, "1", True, 1.5], ["x", True, 1]]) == [
        [1, "1", True, 1.5],
        ["x", True, 1],
    ]
    ids, _ = typed_model.encode(
        [[np.int64(1), np.bool_(True)]]
    )  # numpy scalars count as their JSON kind
    assert ids.tolist() == [[5, 0, 2]]
    assert typed_model.run([np.array([1, 1])]) == [[1, 1]]
    for wrong in (1.0, False, "True", 2):
        with pytest.raises(ModelInputError, match="not in the model's vocabulary"):
            typed_model.encode([[wrong]])


def test_outputs_are_plain_python_values(typed_model: transformer.CompiledTransformer) -> None:
    (output,) = typed_model.run([[1, True, 1.5, "1"]])
    assert [type(value) for value in output] == [int, bool, float, str]


def test_unknown_token_names_token_position_and_vocabulary(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    with pytest.raises(ModelInputError) as info:
        model.run(["abc", "abz"])
    assert str(info.value) == (
        'token "z" at position 2 of input 1 is not in the model\'s vocabulary ["a", "b", "c"]'
    )
    with pytest.raises(
        ModelInputError, match=r'token 3 at position 0 of the input .*\["a", "b", "c"\]'
    ):
        model.run([[3]])


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([""], "the input is empty; a model runs on 1 to 6 tokens"),
        (["ab", []], "input 1 is empty"),
        (["abcabca"], "the input has 7 tokens; this model was compiled for at most 6"),
        ([], "no inputs given"),
        ("abc", "expected a list of inputs, got one string"),
        ([3], "the input is of type int; give a string or a list of tokens"),
    ],
)
def test_bad_inputs_are_refused_clearly(prev_path: Path, inputs: object, message: str) -> None:
    model = transformer.load(prev_path)
    with pytest.raises(ModelInputError) as info:
        model.run(inputs)  # type: ignore[arg-type]
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda: (text for text in ["ab"]), "generator"),
        (lambda: {"ab", "ba"}, "set"),
        (lambda: None, "NoneType"),
        (lambda: 3, "int"),
        (lambda: np.array("ab"), "a 0-d numpy array"),
    ],
    ids=["generator", "set", "none", "int", "0-d array"],
)
def test_a_batch_that_is_not_a_list_is_refused(prev_path: Path, make: object, kind: str) -> None:
    """A generator of one input was used up by the length pass: "no inputs given (an empty
    batch)" from run, TypeError from encode; None and 3 raised TypeError; a set ran in no order;
    a 0-d array raised numpy's TypeError (iteration over a 0-d array)."""
    model = transformer.load(prev_path)
    message = f"expected a list of inputs, got {kind}"
    gpu_path = functools.partial(model._run, batch_size=2, encode_ahead=False)  # encodes per batch
    for call in (model.run, model.encode, gpu_path):
        with pytest.raises(ModelInputError, match=message):
            call(make())  # type: ignore[operator]
    assert model.run(np.array(["ab", "ba"])) == model.run(("ab", "ba")) == [["-", "a"], ["-", "b"]]


def test_a_bad_input_fails_before_any_batch_runs(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    with pytest.raises(ModelInputError, match="input 300"):
        model.run(["ab"] * 300 + ["q"], batch_size=4)


@pytest.mark.parametrize(
    ("lengths", "message"),
    [
        ([2, 3], "2 lengths for 1 row of "),
        ([9], "lengths[0] is 9; a row of "),
        ([-1], "lengths[0] is -1; a row of "),
        ([True], "lengths[0] is True; a row of "),
    ],
)
def test_decoding_refuses_lengths_that_do_not_fit_the_batch(
    prev_path: Path, lengths: list, message: str
) -> None:
    """They invented a row (`[['b', 'a'], []]`) or read past an input's end without a word."""
    model = transformer.load(prev_path)
    ids, _ = model.encode(["ab"])
    for decoded in (
        lambda: model.decode(model.forward(ids), lengths),
        lambda: model.to_values(model.run_ids(ids), lengths),
    ):
        with pytest.raises(ModelInputError, match=message.replace("[", r"\[")):
            decoded()


def test_decoding_refuses_logits_of_another_shape(prev_path: Path) -> None:
    """Logits with a column cut off, or of one input without its batch dimension, decoded to
    values without a word (`[['a', 'b']]` from two of three columns)."""
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["ab"])
    logits = model.forward(ids)
    columns = model.config.d_vocab_out
    for bad, shape in (
        (logits[..., :-1], f"[1, 3, {columns - 1}]"),
        (logits[0], f"[3, {columns}]"),
        (logits.numpy(), "ndarray"),
    ):
        with pytest.raises(
            ModelInputError, match=re.escape(f"d_vocab_out = {columns}], got {shape}")
        ):
            model.decode(bad, lengths)  # type: ignore[arg-type]


def test_codes_that_index_no_value_are_refused(prev_path: Path) -> None:
    """A negative code read a value from the end of the list without a word, a large one raised
    IndexError and a float one IndexError too."""
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["ab"])
    codes = model.run_ids(ids)
    assert model.to_values(codes, lengths) == model.run(["ab"])
    count = len(model.meta.output.values)
    for bad in (codes - 1 - codes.max(), codes + count, codes.double()):
        with pytest.raises(
            ModelInputError, match=re.escape(f"codes must be integers in 0..{count - 1}")
        ):
            model.to_values(bad, lengths)
    # codes past an input's length mean nothing: any integer there is cut, not refused
    ids, lengths = model.encode(["ab", "a"])
    codes = model.run_ids(ids)
    for filler in (-1, count + 5):
        padded = codes.clone()
        padded[1, 1:] = filler
        assert model.to_values(padded, lengths) == model.run(["ab", "a"])


def test_run_rejects_a_batch_size_below_one(prev_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        transformer.load(prev_path).run(["a"], batch_size=0)


def test_a_zero_matches_only_the_zero_of_its_sign(tmp_path: Path) -> None:
    # -0.0 == 0.0, but a program reads them apart (`tokens_str`: "-0.0" and "0.0"); a model of
    # the vocabulary [0.0, 1.0] took -0.0 as 0.0, and a compiled `tokens_str` gave "0.0" where
    # the interpreter gives "-0.0"
    model = transformer.load(hm.identity([0.0, 1.0]).save(tmp_path / "zero.safetensors"))
    assert model.run([[0.0, np.float32(0.0)]]) == [[0.0, 0.0]]
    for wrong in (-0.0, np.float64(-0.0), np.array([-0.0])[0]):
        with pytest.raises(ModelInputError, match="not in the model's vocabulary"):
            model.encode([[wrong]])
    negative = transformer.load(hm.identity([-0.0, 1.0]).save(tmp_path / "neg.safetensors"))
    (output,) = negative.run([[-0.0]])
    assert math.copysign(1.0, output[0]) == -1.0
    with pytest.raises(ModelInputError, match="not in the model's vocabulary"):
        negative.encode([[0.0]])
    assert token_key(-0.0) != token_key(0.0)


def test_token_key_separates_json_kinds() -> None:
    keys = [token_key(v) for v in (1, 1.0, True, "1", None)]
    assert len(set(keys)) == 5
    assert token_key([1]) is None


def _numerical(out_type: OutputType, values: tuple[object, ...] | None = None) -> OutputSpec:
    return OutputSpec("out", OutputEncoding.NUMERICAL, out_type, values)  # type: ignore[arg-type]


def _logits(*column: float) -> np.ndarray:
    return np.array([[0.0, *column]], dtype=np.float32)[
        ..., None
    ]  # [1, 1 + n, 1]; position 0 is BOS


def test_numerical_decoding_by_type() -> None:
    assert _numerical(OutputType.INTS).decode(_logits(2.9999, -1.2, 2.5), [3]) == [[3, -1, 2]]
    assert _numerical(OutputType.BOOLS).decode(_logits(0.9, 0.2, 0.5), [3]) == [
        [True, False, False]
    ]
    floats = _numerical(OutputType.FLOATS).decode(_logits(0.25, -3.5), [2])
    assert floats == [[0.25, -3.5]] and all(type(x) is float for x in floats[0])
    ints = _numerical(OutputType.INTS).decode(_logits(4.0), [1])[0]
    assert type(ints[0]) is int


def test_numerical_decoding_snaps_to_listed_values() -> None:
    spec = _numerical(OutputType.FLOATS, (0, 0.5, 1.0))
    assert spec.decode(_logits(0.26, 0.74, 7.0, -1.0), [4]) == [[0.5, 0.5, 1.0, 0]]
    assert spec.decode(_logits(0.25), [1]) == [[0]]  # a tie goes to the first listed value


def test_decoding_reads_only_real_positions() -> None:
    spec = OutputSpec("out", OutputEncoding.CATEGORICAL, OutputType.STRINGS, ("x", "y"))
    logits = np.array(
        [[[0, 9], [1, 0], [0, 1], [9, 0]], [[0, 9], [0, 1], [9, 0], [9, 0]]], dtype=np.float32
    )
    assert spec.decode(logits, [3, 1]) == [["x", "y", "x"], ["y"]]


def test_non_finite_outputs_are_an_error() -> None:
    with pytest.raises(ModelOutputError, match="computed nan for output 'out'"):
        _numerical(OutputType.INTS).decode(_logits(float("nan")), [1])
    spec = OutputSpec("out", OutputEncoding.CATEGORICAL, OutputType.STRINGS, ("x", "y"))
    logits = np.array([[[0, 0], [np.nan, 1.0]]], dtype=np.float32)
    with pytest.raises(ModelOutputError, match="NaN or infinite logits for 'out'"):
        spec.decode(logits, [1])


@pytest.mark.parametrize(
    "ids",
    [
        torch.tensor([[3, -1]]),
        torch.tensor([[3, 5]]),
        torch.tensor([3, 0]),
        torch.tensor([[3.0, 0.0]]),
        torch.zeros((1, 8), dtype=torch.long),
        torch.tensor([[True, False]]),
        torch.tensor([[3, 0]], dtype=torch.complex64),
        np.array([[3, 0]]),
        [[3, 0]],
    ],
    ids=[
        "negative",
        "past_vocab",
        "one_dim",
        "float",
        "too_long",
        "bool",
        "complex",
        "numpy",
        "list",
    ],
)
def test_hand_made_ids_are_checked(prev_path: Path, ids: torch.Tensor) -> None:
    """Bool ids indexed W_E as a mask (an IndexError), numpy arrays and lists had no `.ndim` or
    `.dtype.is_floating_point` (an AttributeError): each is one ModelInputError now."""
    model = transformer.load(prev_path)
    with pytest.raises(ModelInputError, match="ids must"):
        model.forward(ids)
    with pytest.raises(ModelInputError, match="ids must"):
        model.run_with_cache(ids)
    with pytest.raises(ModelInputError, match="ids must"):
        model.run_ids(ids)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32])
def test_ids_of_any_integer_dtype_give_the_same_logits(prev_path: Path, dtype: torch.dtype) -> None:
    """uint8 ids indexed W_E as a (deprecated) byte mask: an IndexError, never the rows."""
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["abc", "b"])
    assert torch.equal(model.forward(ids.to(dtype)), model.forward(ids))
    assert torch.equal(model.run_ids(ids.to(dtype)), model.run_ids(ids))
    assert torch.equal(model.run_with_cache(ids.to(dtype))[0], model.forward(ids))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from("abc"), min_size=1, max_size=6).map("".join),
        min_size=1,
        max_size=8,
    )
)
def test_encoding_round_trips(texts: list[str]) -> None:
    vocab = Vocab(("a", "b", "c"), bos_id=3, pad_id=4, max_len=6)
    ids, lengths = vocab.encode(texts)
    assert lengths == [len(t) for t in texts]
    assert ids.shape == (len(texts), 1 + max(lengths))
    for row, text in zip(ids.tolist(), texts, strict=True):
        assert row[0] == 3
        assert "".join("abc"[i] for i in row[1 : 1 + len(text)]) == text
        assert set(row[1 + len(text) :]) <= {4}


def test_forward_accepts_ids_on_any_device(prev_path: Path) -> None:
    model = transformer.load(prev_path)
    ids, lengths = model.encode(["abc"])
    logits = model(ids.cpu())
    assert logits.dtype == torch.float32
    assert model.decode(logits, lengths) == [["-", "a", "b"]]


def test_a_number_listed_as_int_and_float_decodes_as_the_int() -> None:
    spec = _numerical(OutputType.FLOATS, (0.0, 0, 0.5, 1.0, 1))
    got = spec.decode(_logits(0.0, 1.0, 0.5, 0.9999999), [4])[0]
    assert got == [0, 1, 0.5, 1] and [type(v) for v in got] == [int, int, float, int]


@pytest.mark.parametrize("token", [["a"], {"a": 1}, {"a"}], ids=["list", "dict", "set"])
def test_an_unhashable_token_is_an_unknown_token(prev_path: Path, token: object) -> None:
    """A list, dict or set inside an input raised `TypeError: unhashable type` from the vocabulary
    lookup; it is a token outside the vocabulary like any other."""
    model = transformer.load(prev_path)
    for inputs in ([["a", token]], [("a", token)], ["ab", ["a", token]]):
        with pytest.raises(ModelInputError, match="at position 1 of .* is not in the model's"):
            model.run(inputs)  # type: ignore[arg-type]


def test_digits_given_as_the_other_kind_get_a_hint(tmp_path: Path) -> None:
    # `run([[3, 1]])` on a vocabulary of the strings "1".."3" said only "not in the vocabulary"
    # (the CLI alone said to write them as strings); and the reverse for int vocabularies
    strings = transformer.load(hm.identity(["1", "2", "3"]).save(tmp_path / "s.safetensors"))
    with pytest.raises(ModelInputError) as err:
        strings.run([[3, 1]])
    assert err.value.hint == (
        'the vocabulary holds the string "3", not the number 3: '
        'write the tokens as strings, e.g. ["3", "1"]'
    )
    assert str(err.value) == f"{err.value.reason}; {err.value.hint}"
    assert err.value.reason.startswith("token 3 at position 0 of the input is not in")
    ints = transformer.load(hm.identity([0, 1, 2, 3]).save(tmp_path / "i.safetensors"))
    with pytest.raises(
        ModelInputError, match=re.escape("write the tokens as numbers, e.g. [3, 1]")
    ):
        ints.run([["3", 1]])
    with pytest.raises(ModelInputError, match=re.escape('the number 3, not the string "3"')):
        ints.run(["31"])  # a str input is split into characters
    # no hint where a token is no entry's other spelling (the fix would be a guess)
    for wrong in ([9], ["x"], [1.5], [None], ["3", "x"], "314"):
        with pytest.raises(ModelInputError) as err:
            ints.run([wrong])
        assert err.value.hint == "" and str(err.value) == err.value.reason

"""`run_array`: numpy arrays in and out, with the ids `encode` gives, the values `run` gives (as the
output's dtype holds them) and `run`'s errors; on CUDA the same arrays as on the CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_helpers import as_runtime

import transformer
from transformer import ModelInputError, ModelOutputError
from transformer.arrays import ArrayCodec, output_dtype
from transformer.decoding import OutputEncoding, OutputSpec, OutputType
from transformer.vocab import Atom, Vocab

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
CPU = torch.device("cpu")


def held_as(value: Any, wanted: Atom, dtype: np.dtype) -> bool:
    """Whether `value` (from an array's `tolist`) is `wanted` (from `run`) as `dtype` holds it."""
    if dtype == np.dtype(object):
        return type(value) is type(wanted) and value == wanted
    if dtype.kind == "f":
        return type(value) is float and type(wanted) in (int, float) and value == wanted
    if dtype.kind == "i":
        return type(value) is int and type(wanted) is int and value == wanted
    if dtype.kind == "b":
        return type(value) is bool and type(wanted) is bool and value == wanted
    return type(value) is str and type(wanted) is str and value == wanted


def assert_held(array: np.ndarray, rows: list[list[Atom]], dtype: np.dtype) -> None:
    assert array.dtype == dtype
    got = array.tolist()
    assert len(got) == len(rows)
    for b, (row, wanted) in enumerate(zip(got, rows, strict=True)):
        bad = [
            i for i, (v, w) in enumerate(zip(row, wanted, strict=True)) if not held_as(v, w, dtype)
        ]
        assert len(row) == len(wanted) and not bad, f"row {b}: {row} for {wanted}"


# -- the dtype, from the output entry alone ----------------------------------------------------------


def _spec(values: tuple[Atom, ...] | None, type_: OutputType = OutputType.STRINGS) -> OutputSpec:
    encoding = OutputEncoding.CATEGORICAL if values is not None else OutputEncoding.NUMERICAL
    return OutputSpec("out", encoding, type_, values)


@pytest.mark.parametrize(
    ("values", "type_", "dtype"),
    [
        (("a", "b"), OutputType.STRINGS, "U1"),
        (("a", "", "bcd"), OutputType.STRINGS, "U3"),
        (("a", "b\x00"), OutputType.STRINGS, "O"),  # numpy would drop the trailing NUL
        ((True, False), OutputType.BOOLS, "bool"),
        ((1, -2, 2**62), OutputType.INTS, "int64"),
        ((1, 2**63), OutputType.INTS, "O"),
        ((0, 0.5, 2), OutputType.FLOATS, "float64"),
        ((0.5, 2**53 + 1), OutputType.FLOATS, "O"),  # 2**53 + 1 is no float64
        ((1, "a"), OutputType.STRINGS, "O"),
        ((True, 1), OutputType.INTS, "O"),
        (None, OutputType.INTS, "int64"),
        (None, OutputType.FLOATS, "float64"),
        (None, OutputType.BOOLS, "bool"),
    ],
)
def test_the_dtype_follows_from_the_output_entry(
    values: tuple[Atom, ...] | None, type_: OutputType, dtype: str
) -> None:
    assert output_dtype(_spec(values, type_)) == np.dtype(dtype)


def test_a_grid_output_is_float64() -> None:
    spec = OutputSpec("out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, (1, 2, 3))
    assert output_dtype(spec) == np.dtype(np.float64)


# -- codes -> values: against OutputSpec.values_of ---------------------------------------------------

ATOMS = st.one_of(
    st.text(alphabet="ab\u00e9😀\x00", max_size=3),
    st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.booleans(),
)
LISTED = st.one_of(
    st.lists(st.text(alphabet="ab\u00e9😀", min_size=1, max_size=1), min_size=1, max_size=5),
    st.lists(st.text(alphabet="ab\u00e9😀\x00", max_size=3), min_size=1, max_size=5),
    st.lists(st.integers(-(2**54), 2**54), min_size=1, max_size=5),
    st.lists(st.one_of(st.integers(-9, 9), st.floats(-9, 9)), min_size=1, max_size=5),
    st.lists(st.booleans(), min_size=1, max_size=2),
    st.lists(ATOMS, min_size=1, max_size=5),
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(LISTED, st.integers(1, 4), st.integers(1, 4), st.data())
def test_listed_values_are_those_run_gives(
    values: list[Atom], rows: int, n: int, data: st.DataObject
) -> None:
    flags = data.draw(st.booleans())
    whole_types = tuple(
        "".join(data.draw(st.sampled_from("if.")) for _ in range(k)) for k in range(1, 5)
    )
    spec = OutputSpec(
        "out",
        OutputEncoding.CATEGORICAL,
        OutputType.STRINGS,
        tuple(values),
        whole_types=whole_types if flags else (),
    )
    codes = np.array(
        data.draw(st.lists(st.integers(0, len(values) - 1), min_size=rows * n, max_size=rows * n))
    ).reshape(rows, n)
    codec = ArrayCodec(Vocab(("a",), 1, 2, 4), spec)
    array = codec.values(torch.from_numpy(codes))
    assert_held(array, spec.values_of(codes, [n] * rows), output_dtype(spec))


def _grid_spec(**fields: Any) -> OutputSpec:
    """A numerical output on the length grid (1, 2, 4), with `fields` set."""
    return OutputSpec(
        "o",
        OutputEncoding.NUMERICAL,
        OutputType.FLOATS,
        None,
        length_denominators=(1, 2, 4),
        **fields,
    )


@pytest.mark.parametrize(
    ("spec", "codes"),
    [
        (_spec(None, OutputType.INTS), [[0.0, -3.0, 2.0**53]]),
        (_spec(None, OutputType.BOOLS), [[0.0, 1.0, 1.0]]),
        (_spec(None, OutputType.FLOATS), [[0.1, -2.5, 3.0]]),
        (
            OutputSpec("o", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, (1, 2, 3)),
            [[1.0, 1.0, 2.0]],
        ),
        (
            OutputSpec("o", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, (1, 2, 4)),
            [[0.0, 3.0, 4.0], [1.0, 2.0, 3.0]],
        ),
        (
            OutputSpec(
                "o", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, None, (1, 2, 3)
            ),
            [[0.0, 3.0, 1.0]],
        ),
        (  # an int position: run rounds k / d to an int (a file no certificate covers)
            _grid_spec(int_positions=(0, 2)),
            [[3.0, 1.0, 2.0], [5.0, 3.0, 4.0]],
        ),
        (  # ... but not where whole_types says "f"
            _grid_spec(int_positions=(0, 2), whole_types=("i", "ff", "f.i")),
            [[3.0, 1.0, 2.0], [5.0, 3.0, 4.0]],
        ),
    ],
)
def test_numbers_are_those_run_gives(spec: OutputSpec, codes: list[list[float]]) -> None:
    table = np.array(codes)
    array = ArrayCodec(Vocab(("a",), 1, 2, 3), spec).values(torch.from_numpy(table))
    assert_held(array, spec.values_of(table, [table.shape[1]] * len(table)), output_dtype(spec))


def test_a_whole_number_beyond_int64_is_an_error() -> None:
    codec = ArrayCodec(Vocab(("a",), 1, 2, 3), _spec(None, OutputType.INTS))
    with pytest.raises(ModelOutputError, match="beyond int64"):
        codec.values(torch.tensor([[1.0, 2.0**63]], dtype=torch.float64))
    lowest = codec.values(torch.tensor([[-(2.0**63), 2.0**63 - 1024]], dtype=torch.float64))
    assert lowest.tolist() == [[-(2**63), 2**63 - 1024]]  # int64 holds both
    with pytest.raises(ModelOutputError, match="beyond int64"):
        codec.values(torch.tensor([[-(2.0**63) - 2048]], dtype=torch.float64))


# -- tokens -> ids: against Vocab.encode --------------------------------------------------------------

MIXED = Vocab(
    (1, "1", True, 1.5, "x", "é", "ab", 0, -3, "😀", "\x00"), bos_id=11, pad_id=12, max_len=4
)
TOKENS = st.sampled_from(
    [1, "1", True, 1.5, "x", "é", "ab", 0, -3, "😀", "", "z", 2, "\x00", False]
)


def _ids_or_error(run: Any) -> Any:
    try:
        return run().tolist()
    except ModelInputError as err:
        # run_array's hint for a padded row (test_an_array_of_padded_inputs_...) is its own
        return (
            err.reason if err.hint.startswith("run_array runs inputs of one length") else str(err)
        )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.integers(1, 3),
    st.integers(1, 4),  # lengths past max_len: test_bad_arrays_are_named
    st.sampled_from(
        ["U1", "U2", ">U1", "int8", "uint8", "uint64", "int64", "bool", "float64", "O"]
    ),
    st.data(),
)
def test_encoded_ids_are_those_encode_gives(
    rows: int, n: int, dtype: str, data: st.DataObject
) -> None:
    flat = data.draw(st.lists(TOKENS, min_size=rows * n, max_size=rows * n))
    try:
        tokens = np.array(flat, dtype=object).reshape(rows, n).astype(dtype)
    except (ValueError, TypeError, OverflowError):
        return  # these tokens are no array of this dtype
    codec = ArrayCodec(MIXED, _spec(("a",)))
    got = _ids_or_error(lambda: codec.encode(codec.check(tokens), CPU))
    want = _ids_or_error(lambda: MIXED.encode(tokens.tolist())[0])
    assert got == want


def test_a_large_unsigned_token_is_no_small_int() -> None:
    vocab = Vocab((-1, 1), bos_id=2, pad_id=3, max_len=2)
    codec = ArrayCodec(vocab, _spec(("a",)))
    with pytest.raises(ModelInputError, match="18446744073709551615"):
        codec.encode(np.array([[2**64 - 1]], dtype=np.uint64), CPU)


INT_VOCAB = Vocab((-3, 0, 1, 7, 200), bos_id=5, pad_id=6, max_len=4)


@pytest.mark.parametrize(
    "tokens",
    [
        np.array([[1, 0, -3]])[:, ::-1],  # negative strides: torch.from_numpy refuses them
        np.array([[1, 0, -3]], dtype=">i8"),  # so is a non-native byte order
        np.array([[7, 0, 1, -3]], dtype=">i4")[:, ::-2],
        np.asfortranarray(np.array([[1, 0], [7, 200]], dtype=np.int16)),
        np.array([[1, 0, 7, 200]], dtype=np.uint16)[:, ::2],
        np.array([[1, 200]], dtype=np.uint32),
        np.array([[1, 200]], dtype=np.uint64),
        np.array([[1, 200]], dtype=">u8"),
    ],
)
def test_the_device_lookup_takes_every_int_array(tokens: np.ndarray) -> None:
    # the lookup a GPU runs (in torch), here on the CPU: the ids numpy's finds
    codec = ArrayCodec(INT_VOCAB, _spec(("a",)))
    keyed = codec._keys(codec.check(tokens))
    assert keyed is not None
    on_device = codec._lookup_torch(*keyed, CPU)
    assert on_device is not None
    assert on_device.tolist() == INT_VOCAB.encode(tokens.tolist())[0].tolist()


def test_an_unmasked_masked_array_is_its_data(reverse_model: Any) -> None:
    tokens = np.ma.array([list("abc")], mask=False)
    assert reverse_model.run_array(tokens).tolist() == [["c", "b", "a"]]


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        ([["a", "b"]], r"got list \(run takes lists of inputs\)"),
        (np.array(list("abc")), r"got shape \[3\]"),
        (np.zeros((1, 0), dtype="U1"), "hold 0 tokens each; this model runs on 1 to 4"),
        (np.array([list("abcab")]), "hold 5 tokens each"),
        (np.array([list("ab"), list("az")]), 'token "z" at position 1 of input 1 is not in'),
        # masked entries are None to run (tokens.tolist()), not the data under the mask
        (
            np.ma.array([list("ab"), list("ba")], mask=[[0, 0], [0, 1]]),
            "position 1 of input 1 is masked",
        ),
    ],
)
def test_bad_arrays_are_named(tokens: Any, message: str, reverse_model: Any) -> None:
    with pytest.raises(ModelInputError, match=message):
        reverse_model.run_array(tokens)


ONE_LENGTH = "; run_array runs inputs of one length, 3 tokens each here, and input 1 reads as "


@pytest.mark.parametrize(
    ("tokens", "reads_as"),
    [
        (np.array([list("abc"), ["a", "b", ""]]), '2 tokens padded with ""'),
        (np.array([list("abc"), ["a", None, None]], dtype=object), "1 token padded with null"),
        (np.array([list("abc"), ["b", "<pad>", "<pad>"]]), '1 token padded with "<pad>"'),
        (np.array([[1, 2, 0], [1, 0, 0]]), None),  # the vocabulary holds no ints: no input
        (np.ma.array([list("abc"), list("bca")], mask=[[0] * 3, [0, 1, 1]]), "1 token then masked"),
    ],
)
def test_an_array_of_padded_inputs_says_it_takes_one_length(
    tokens: Any, reads_as: str | None, reverse_model: Any
) -> None:
    # before: only the unknown token (or the masked one), as if a typo
    with pytest.raises(ModelInputError) as err:
        reverse_model.run_array(tokens)
    message = str(err.value)
    if reads_as is None:
        assert "one length" not in message
        return
    assert ONE_LENGTH + reads_as in message
    assert message.endswith(
        ": give each input's length (run_array(tokens, lengths=...), which ignores the tokens "
        "past it), or inputs of several lengths to run"
    )
    # a token outside the vocabulary where no input fills the array, or inside a row: no padding
    for typo in (np.array([list("az"), list("za")]), np.array([list("abc"), list("azb")])):
        with pytest.raises(ModelInputError) as err:
            reverse_model.run_array(typo)
        assert "one length" not in str(err.value)


# -- end to end ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reverse_model() -> transformer.CompiledTransformer:
    from compiler import compile_sop
    from rasp.interpreter import load_file

    path = Path(__file__).resolve().parents[2] / "programs" / "reverse.rasp"
    interp = load_file(path)
    return as_runtime(compile_sop(interp.get("reverse"), list("abc"), 4, name="reverse"))


def test_run_array_gives_runs_values_in_batches(reverse_model: Any) -> None:
    rng = np.random.default_rng(0)
    tokens = rng.choice(np.array(list("abc")), size=(37, 4))
    for batch_size in (1, 5, 256):
        array = reverse_model.run_array(tokens, batch_size=batch_size)
        assert array.tolist() == reverse_model.run(tokens.tolist())
    assert reverse_model.run_array(np.empty((0, 3), dtype="U1")).shape == (0, 3)
    with pytest.raises(ValueError, match="batch_size"):
        reverse_model.run_array(tokens, batch_size=0)


@needs_cuda
def test_run_array_on_cuda_equals_the_cpu(reverse_model: Any) -> None:
    rng = np.random.default_rng(1)
    tokens = rng.choice(np.array(list("abc")), size=(300, 4))
    on_gpu = reverse_model.to("cuda")
    assert np.array_equal(on_gpu.run_array(tokens), reverse_model.run_array(tokens))
    with pytest.raises(ModelInputError, match='token "z"'):
        on_gpu.run_array(np.array([list("abz")]))


def _code_points(codes: list[list[int]], dtype: str) -> np.ndarray:
    """A str array holding `codes` as they are, valid code points or not (numpy stores any)."""
    raw = np.array(codes, dtype=np.dtype("u4").newbyteorder(dtype[0]))  # [batch, n * chars]
    return raw.view(np.dtype(dtype))  # [batch, n]


@pytest.mark.parametrize(
    ("codes", "dtype", "message"),
    [
        ([[0x61, 0x110000]], "=U1", "token <U\\+110000: not a Unicode string> at position 1"),
        ([[0x61, 0xFFFFFFFF]], "=U1", "token <U\\+FFFFFFFF: not a Unicode string> at position 1"),
        ([[0x61, 0x110000]], ">U1", "token <U\\+110000: not a Unicode string> at position 1"),
        ([[0x61, 0, 0x62, 0x110000, 0, 0]], "=U2", "<U\\+0062 U\\+110000: not a Unicode string"),
        # the first bad token in input order, as always: here a valid but unknown one
        ([[0x61, 0x62], [0x7A, 0x110000]], "=U1", 'token "z" at position 0 of input 1'),
    ],
)
def test_an_invalid_code_point_is_an_unknown_token(
    codes: list[list[int]], dtype: str, message: str, reverse_model: Any
) -> None:
    # (making a str of such an entry is CPython's SystemError, which both runs raised)
    tokens = _code_points(codes, dtype)
    with pytest.raises(ModelInputError, match=message):
        reverse_model.run_array(tokens)
    with pytest.raises(ModelInputError, match=message):
        reverse_model.run(tokens)
    with pytest.raises(ModelInputError, match=message):
        reverse_model.run(list(tokens))  # rows as 1-D arrays

"""Output grids: per position (format version 4), position i decodes as round(x * d_i) / d_i; per
length (version 5), every position of an input of length n as round(x * e_n) / e_n; from the end
(version 5), position i of n as round(x * f_k) / f_k with k = n - 1 - i."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import handmade_models as hm
import numpy as np
import pytest
import torch
from test_runtime_file_errors import expect_format_error

import transformer
from transformer.decoding import OutputEncoding, OutputSpec, OutputType

INPUTS = ["a", "ab", "ba", "aaaa", "abab", "bbbb", "aab", "baaab"]


def grid_mean_of_a(max_len: int = 5) -> hm.Handmade:
    """The prefix mean of `tokens == a` with BOS among the keys: position i averages i + 2 keys,
    so its output is k / (i + 2), decoded on that grid."""
    made = hm.masked_mean_of_a("<=", max_len)
    made.metadata["format_version"] = 4
    made.metadata["output"]["denominators"] = list(range(2, max_len + 2))
    return made


def _exact_prefix_means(text: str) -> list[float]:
    return [float(Fraction(text[: i + 1].count("a"), i + 2)) for i in range(len(text))]


def test_a_grid_output_decodes_to_the_exact_fraction(tmp_path: Path) -> None:
    model = transformer.load(grid_mean_of_a().save(tmp_path / "m.safetensors"))
    assert model.meta.output.denominators == (2, 3, 4, 5, 6)
    one_by_one = [model.run([text])[0] for text in INPUTS]
    batched = model.run(INPUTS, batch_size=3)  # mixed lengths
    for text, alone, together in zip(INPUTS, one_by_one, batched, strict=True):
        # equal, not approximately: the float32 mean's drift is rounded away on the grid
        assert alone == together == _exact_prefix_means(text), text
        assert all(type(v) is float for v in alone)
    # the same model without the grid gives the float32 mean itself, not the fraction
    plain = hm.masked_mean_of_a("<=")
    raw = transformer.load(plain.save(tmp_path / "plain.safetensors")).run(["aab"])[0]
    assert raw == pytest.approx(_exact_prefix_means("aab"), abs=1e-6)


def _spec(denominators: tuple[int, ...]) -> OutputSpec:
    return OutputSpec("out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, denominators)


def test_a_grid_of_one_gives_ints_and_both_reductions_agree() -> None:
    spec = _spec((1, 2, 3, 7))
    rng = np.random.default_rng(0)
    k = rng.integers(-20, 20, size=(64, 4)).astype(np.float64)
    d = np.array([1, 2, 3, 7], dtype=np.float64)
    drift = rng.uniform(-0.49, 0.49, size=k.shape) / d  # less than half a step
    logits = torch.from_numpy((k / d + drift)[..., None])  # [batch, n, 1], float64
    real = torch.ones(k.shape, dtype=torch.bool)
    by_numpy = spec.reduce(logits, real)  # the CPU path is numpy's
    by_torch = spec._reduce_torch(logits, real)
    assert torch.equal(by_numpy.codes, by_torch.codes)
    rows = spec.values_of(by_torch.codes.numpy(), [4] * 64)
    for row, ks in zip(rows, k.tolist(), strict=True):
        assert type(row[0]) is int and row[0] == ks[0]  # d = 1: a single value passed through
        assert row[1:] == [ks[j] / d[j] for j in range(1, 4)]
        assert all(type(v) is float for v in row[1:])
    short = spec.values_of(by_torch.codes.numpy()[:2, :2], [1, 2])  # rows cut to their lengths
    assert len(short[0]) == 1 and len(short[1]) == 2


@pytest.mark.parametrize("denominators", [(1, 2, 3, 7), (1, 1, 1, 2), (2, 1, 1, 1), (1,) * 4])
def test_grid_values_are_ints_exactly_where_the_denominator_is_one(
    denominators: tuple[int, ...],
) -> None:
    # mostly floats: made as floats, then the whole columns replaced; mostly whole: per object
    spec = _spec(denominators)
    codes = np.random.default_rng(1).integers(-9, 9, size=(6, 4)).astype(np.float64)
    for lengths in ([4] * 6, [1, 4, 2, 3, 1, 4]):
        want = [
            [int(k) if d == 1 else k / d for k, d in zip(row[:n], denominators, strict=False)]
            for row, n in zip(codes.tolist(), lengths, strict=True)
        ]
        got = spec.values_of(codes, lengths)
        assert [[(type(v), v) for v in row] for row in got] == [
            [(type(v), v) for v in row] for row in want
        ]


@pytest.mark.parametrize("denominators", [(1, 2, 3, 7), (1, 1, 1, 2)])
def test_a_whole_grid_value_beyond_int64_is_the_exact_int(denominators: tuple[int, ...]) -> None:
    # as an `ints` output's decoder gives it: 1e30 wrapped to -2**63 through int64 before
    spec = _spec(denominators)
    codes = np.array([[1e30, -3e19, 2.0**63, 4.0]])
    got = spec.values_of(codes, [4])[0]
    assert [(type(v), v) for v in got if type(v) is int] == [
        (int, int(k)) for k, d in zip(codes[0].tolist(), denominators, strict=True) if d == 1
    ]


def test_a_grid_output_refuses_non_finite_logits() -> None:
    spec = _spec((2, 3))
    logits = torch.tensor([[[0.5], [float("nan")]]], dtype=torch.float64)
    reduced = spec.reduce(logits, torch.ones(1, 2, dtype=torch.bool))
    with pytest.raises(ArithmeticError, match="computed nan for output 'out'"):
        spec.check(reduced)


def length_grid_mean_of_a(max_len: int = 6) -> hm.Handmade:
    """Twice the mean of `tokens == a` over BOS and every token: 2k / (n + 1) at every position of
    an input of length n, decoded on the grid e_n = n + 1."""
    made = hm.mean_of_a(max_len)
    made.metadata["format_version"] = 5
    made.metadata["output"]["length_denominators"] = [n + 1 for n in range(1, max_len + 1)]
    return made


def test_a_length_grid_output_decodes_by_each_inputs_length(tmp_path: Path) -> None:
    model = transformer.load(length_grid_mean_of_a().save(tmp_path / "m.safetensors"))
    assert model.meta.output.length_denominators == (2, 3, 4, 5, 6, 7)
    texts = [*INPUTS, "bbbbbb", "aaaaaa", "b"]
    one_by_one = [model.run([text])[0] for text in texts]
    for batch_size in (1, 3, 16):  # mixed lengths in one batch: each row keeps its own grid
        assert model.run(texts, batch_size=batch_size) == one_by_one
    for text, got in zip(texts, one_by_one, strict=True):
        n = len(text)
        assert got == [float(Fraction(2 * text.count("a"), n + 1))] * n, text
        assert all(type(v) is float for v in got)
    ids, lengths = model.encode(texts)  # run_ids: lengths are the real (non-PAD) positions
    assert model.to_values(model.run_ids(ids), lengths) == one_by_one


def end_grid_mean_of_a(max_len: int = 5) -> hm.Handmade:
    """The suffix mean of `tokens == a` with BOS among the keys: position i of n averages
    n - i + 1 keys, k + 2 for k = n - 1 - i, decoded on that grid."""
    made = hm.masked_mean_of_a(">=", max_len)
    made.metadata["format_version"] = 5
    made.metadata["output"]["end_denominators"] = [k + 2 for k in range(max_len)]
    return made


def test_an_end_grid_output_decodes_by_the_distance_from_the_end(tmp_path: Path) -> None:
    model = transformer.load(end_grid_mean_of_a().save(tmp_path / "m.safetensors"))
    assert model.meta.output.end_denominators == (2, 3, 4, 5, 6)
    one_by_one = [model.run([text])[0] for text in INPUTS]
    for batch_size in (1, 3, 16):  # mixed lengths: each row counts from its own end
        assert model.run(INPUTS, batch_size=batch_size) == one_by_one
    for text, got in zip(INPUTS, one_by_one, strict=True):
        n = len(text)
        want = [float(Fraction(text[i:].count("a"), n - i + 1)) for i in range(n)]
        assert got == want, text
        assert all(type(v) is float for v in got)
    ids, lengths = model.encode(INPUTS)
    assert model.to_values(model.run_ids(ids), lengths) == one_by_one


def _row_denominators(axis: str, table: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """`[batch, n]` denominators of a per-length or from-the-end grid, 1 past each row's end."""
    i = np.arange(n)[None, :]
    at = lengths[:, None] - 1 if axis == "length" else lengths[:, None] - 1 - i  # table index
    return np.where(i < lengths[:, None], table[np.clip(at, 0, len(table) - 1)], 1)


@pytest.mark.parametrize("axis", ["length", "end"])
def test_length_and_end_grid_reductions_agree_and_give_ints_where_it_is_one(axis: str) -> None:
    table = np.array([1, 3, 2, 7])
    grids = {"length": (table, None), "end": (None, table)}[axis]
    spec = OutputSpec(
        "out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, *map(_tuple, grids)
    )
    rng = np.random.default_rng(2)
    lengths = rng.integers(0, 5, size=64)  # 0: an empty input (its row is all padding)
    d = _row_denominators(axis, table, lengths, 4).astype(np.float64)  # [batch, n]
    k = rng.integers(-20, 20, size=(64, 4)).astype(np.float64)
    drift = rng.uniform(-0.49, 0.49, size=k.shape) / d  # less than half a step
    logits = torch.from_numpy((k / d + drift)[..., None])  # [batch, n, 1], float64
    real = torch.from_numpy(np.arange(4) < lengths[:, None])  # [batch, n]
    by_numpy = spec.reduce(logits, real)
    by_torch = spec._reduce_torch(logits, real)
    assert torch.equal(by_numpy.codes, by_torch.codes)
    assert torch.equal(by_numpy.codes[real], torch.from_numpy(k)[real])  # padding: any code
    rows = spec.values_of(by_torch.codes.numpy(), lengths.tolist())
    for row, ks, n, ds in zip(rows, k.tolist(), lengths.tolist(), d.tolist(), strict=True):
        want = [int(x) if e == 1 else x / e for x, e in zip(ks[:n], ds[:n], strict=True)]
        assert [(type(v), v) for v in row] == [(type(v), v) for v in want]


def _tuple(table: np.ndarray | None) -> tuple[int, ...] | None:
    return None if table is None else tuple(table.tolist())


def _edited(tmp_path: Path, edit: Any, made: hm.Handmade | None = None) -> Path:
    made = made or grid_mean_of_a()
    edit(made.metadata)
    return made.save(tmp_path / "edited.safetensors")


GRID_CASES = {
    "old_version": (
        lambda m: m.update(format_version=3),
        ("'output.denominators' needs 'format_version' 4",),
    ),
    "too_few": (
        lambda m: m["output"]["denominators"].pop(),
        ("must list max_len = 5 whole numbers",),
    ),
    "zero": (
        lambda m: m["output"]["denominators"].__setitem__(0, 0),
        ("must list max_len = 5 whole numbers >= 1",),
    ),
    "float": (
        lambda m: m["output"]["denominators"].__setitem__(1, 2.5),
        ("whole numbers",),
    ),
    "bool": (
        lambda m: m["output"]["denominators"].__setitem__(1, True),
        ("whole numbers",),
    ),
    "strings": (
        lambda m: m["output"].update(type="bools"),
        ("needs a numerical output of type ints or floats",),
    ),
    "with_values": (
        lambda m: m["output"].update(values=[0, 0.5]),
        ("'output.values' and 'output.denominators' exclude each other",),
    ),
}


@pytest.mark.parametrize("case", sorted(GRID_CASES))
def test_invalid_denominators(case: str, tmp_path: Path) -> None:
    edit, fragments = GRID_CASES[case]
    expect_format_error(_edited(tmp_path, edit), *fragments)


NEW_GRID_CASES = {
    "length_old_version": (
        length_grid_mean_of_a,
        lambda m: m.update(format_version=4),
        ("'output.length_denominators' needs 'format_version' 5",),
    ),
    "length_too_many": (
        length_grid_mean_of_a,
        lambda m: m["output"]["length_denominators"].append(8),
        ("'output.length_denominators' must list max_len = 6 whole numbers >= 1",),
    ),
    "length_zero": (
        length_grid_mean_of_a,
        lambda m: m["output"]["length_denominators"].__setitem__(0, 0),
        ("one per input length 1..max_len",),
    ),
    "length_with_values": (
        length_grid_mean_of_a,
        lambda m: m["output"].update(values=[0, 0.5]),
        ("'output.values' and 'output.length_denominators' exclude each other",),
    ),
    "length_and_position": (
        length_grid_mean_of_a,
        lambda m: m["output"].update(denominators=[1] * 6),
        ("'output.denominators' and 'output.length_denominators' exclude each other",),
    ),
    "end_old_version": (
        end_grid_mean_of_a,
        lambda m: m.update(format_version=4),
        ("'output.end_denominators' needs 'format_version' 5",),
    ),
    "end_too_few": (
        end_grid_mean_of_a,
        lambda m: m["output"]["end_denominators"].pop(),
        ("one per distance from the end",),
    ),
    "end_and_length": (
        end_grid_mean_of_a,
        lambda m: m["output"].update(length_denominators=[1] * 5),
        ("'output.length_denominators' and 'output.end_denominators' exclude each other",),
    ),
}


@pytest.mark.parametrize("case", sorted(NEW_GRID_CASES))
def test_invalid_length_and_end_denominators(case: str, tmp_path: Path) -> None:
    made, edit, fragments = NEW_GRID_CASES[case]
    expect_format_error(_edited(tmp_path, edit, made()), *fragments)


def test_int_positions_decode_as_ints_on_a_length_grid() -> None:
    """Format version 6: `f if indices > 0 else 0` over a fraction of the length is the int 0 at
    position 0 of every length, which a length grid of e_n > 1 would give as 0.0."""
    lengths = [3, 1, 2]
    e = (2, 4, 4)  # per length 1..3
    flagged = OutputSpec(
        "out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, e, None, (0,)
    )
    plain = OutputSpec("out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, e)
    numbers = np.array([[0.0, 0.5, 0.75], [1.0, 9.0, 9.0], [0.0000001, 0.25, 9.0]])
    want = [[0, 0.5, 0.75], [1], [0, 0.25]]
    got = flagged.from_numbers(numbers, lengths)
    assert [[(type(v), v) for v in row] for row in got] == [
        [(type(v), v) for v in row] for row in want
    ]
    assert plain.from_numbers(numbers, lengths) == [[0.0, 0.5, 0.75], [1.0], [0.0, 0.25]]
    assert all(type(row[0]) is float for row in plain.from_numbers(numbers, lengths))
    # mostly flagged (the object-array path): the same values
    many = OutputSpec(
        "out", OutputEncoding.NUMERICAL, OutputType.FLOATS, None, None, e, None, (0, 1)
    )
    assert many.from_numbers(np.array([[2.0, 3.0, 0.25]]), [3]) == [[2, 3, 0.25]]


def int_positions_mean_of_a(max_len: int = 6) -> hm.Handmade:
    made = length_grid_mean_of_a(max_len)
    made.metadata["format_version"] = 6
    made.metadata["output"]["int_positions"] = [0]
    return made


def test_int_positions_load_from_a_version_6_file(tmp_path: Path) -> None:
    model = transformer.load(int_positions_mean_of_a().save(tmp_path / "m.safetensors"))
    assert model.meta.output.int_positions == (0,)


INT_POSITION_CASES = {
    "old_version": (
        lambda m: m.update(format_version=5),
        ("'output.int_positions' needs 'format_version' 6",),
    ),
    "without_grid": (
        lambda m: (m["output"].pop("length_denominators"), m["output"].update(values=[0, 1])),
        ("'output.int_positions' needs 'output.length_denominators' or",),
    ),
    "out_of_range": (
        lambda m: m["output"].update(int_positions=[0, 6]),
        ("must list increasing program positions 0..5",),
    ),
    "not_increasing": (
        lambda m: m["output"].update(int_positions=[2, 1]),
        ("must list increasing program positions 0..5",),
    ),
    "a_bool": (
        lambda m: m["output"].update(int_positions=[True]),
        ("must list increasing program positions",),
    ),
}


@pytest.mark.parametrize("case", sorted(INT_POSITION_CASES))
def test_invalid_int_positions(case: str, tmp_path: Path) -> None:
    edit, fragments = INT_POSITION_CASES[case]
    expect_format_error(_edited(tmp_path, edit, int_positions_mean_of_a()), *fragments)

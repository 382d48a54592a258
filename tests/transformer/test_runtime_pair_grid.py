"""Per-(position, length) output grids (format version 10): position i of an input of length n
decodes as round(x * d) / d with d = output.pair_denominators[n (n - 1) / 2 + i]."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import handmade_models as hm
import numpy as np
import pytest
import torch
from test_runtime_file_errors import expect_format_error

import transformer
from transformer.decoding import OutputEncoding, OutputSpec, OutputType
from transformer.pair_grid import pair_table, pair_width

MAX_LEN = 6


def _cells(max_len: int = MAX_LEN) -> list[tuple[int, int]]:
    return [(i, n) for n in range(1, max_len + 1) for i in range(n)]


def pair_grid_mean_of_a(max_len: int = MAX_LEN) -> hm.Handmade:
    """Twice the mean of `tokens == a` over BOS and every token, 2k / (n + 1), on the grid
    (n + 1)(i + 1) at (i, n): a different denominator in every cell, each holding the value."""
    made = hm.mean_of_a(max_len)
    made.metadata["format_version"] = 10
    made.metadata["output"]["pair_denominators"] = [(n + 1) * (i + 1) for i, n in _cells(max_len)]
    return made


def test_a_pair_grid_output_decodes_each_cell_on_its_own_grid(tmp_path: Path) -> None:
    model = transformer.load(pair_grid_mean_of_a().save(tmp_path / "m.safetensors"))
    assert len(model.meta.output.pair_denominators) == MAX_LEN * (MAX_LEN + 1) // 2
    texts = ["a", "ab", "ba", "aaaa", "abab", "bbbb", "aab", "baaab", "bbbbbb", "aaaaab", "b"]
    one_by_one = [model.run([text])[0] for text in texts]
    for batch_size in (1, 3, 16):  # mixed lengths in one batch: each row keeps its own grid
        assert model.run(texts, batch_size=batch_size) == one_by_one
    for text, got in zip(texts, one_by_one, strict=True):
        n = len(text)
        assert got == [float(Fraction(2 * text.count("a"), n + 1))] * n, text
        assert all(type(v) is float for v in got)


def _spec(denominators: list[int]) -> OutputSpec:
    return OutputSpec(
        "out",
        OutputEncoding.NUMERICAL,
        OutputType.FLOATS,
        None,
        pair_denominators=tuple(denominators),
    )


def test_the_table_and_both_reductions_read_each_inputs_row() -> None:
    # a prime per cell: reading another cell's denominator gives another value
    primes = [p for p in range(2, 400) if all(p % q for q in range(2, p))][:21]
    spec = _spec(primes)
    assert pair_width(primes) == MAX_LEN
    table = pair_table(primes).reshape(MAX_LEN + 1, MAX_LEN)
    assert (table[0] == 1).all()
    for (i, n), p in zip(_cells(), primes, strict=True):
        assert table[n, i] == p
        assert (table[n, n:] == 1).all()  # past the input's end: padding
    lengths = np.array([1, 6, 3, 4, 2, 6, 5])
    rng = np.random.default_rng(0)
    k = rng.integers(-30, 30, size=(len(lengths), MAX_LEN)).astype(np.float64)
    d = np.array(
        [[table[n, i] for i in range(MAX_LEN)] for n in lengths.tolist()], dtype=np.float64
    )
    drift = rng.uniform(-0.49, 0.49, size=k.shape) / d  # less than half a step
    logits = torch.from_numpy((k / d + drift)[..., None])
    real = torch.from_numpy(np.arange(MAX_LEN)[None, :] < lengths[:, None])
    by_numpy = spec.reduce(logits, real)  # the CPU path is numpy's
    by_torch = spec._reduce_torch(logits, real)
    codes = by_torch.codes.numpy()
    assert np.array_equal(by_numpy.codes.numpy()[real.numpy()], codes[real.numpy()])
    rows = spec.values_of(codes, lengths.tolist())
    for row, ks, ds, n in zip(rows, k.tolist(), d.tolist(), lengths.tolist(), strict=True):
        assert row == [ks[i] / ds[i] for i in range(n)]


CASES = {
    "old_version": (
        lambda m: m.update(format_version=9),
        ("'output.pair_denominators' needs 'format_version' 10",),
    ),
    "too_few": (
        lambda m: m["output"]["pair_denominators"].pop(),
        ("must list max_len (max_len + 1) / 2 = 21 whole numbers >= 1",),
    ),
    "one_per_position": (
        lambda m: m["output"].update(pair_denominators=[2] * MAX_LEN),
        ("must list max_len (max_len + 1) / 2 = 21",),
    ),
    "zero": (
        lambda m: m["output"]["pair_denominators"].__setitem__(3, 0),
        ("position i of an input of length n",),
    ),
    "and_length": (
        lambda m: m["output"].update(length_denominators=[1] * MAX_LEN),
        ("'output.length_denominators' and 'output.pair_denominators' exclude each other",),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_invalid_pair_denominators(case: str, tmp_path: Path) -> None:
    edit, fragments = CASES[case]
    made = pair_grid_mean_of_a()
    edit(made.metadata)
    expect_format_error(made.save(tmp_path / "edited.safetensors"), *fragments)

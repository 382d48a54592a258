"""Lookups of the plan's blocks done once, not per use. A reading (`Encoded`) is hashed once: the
planners key dicts by readings, and hashing every value and term of a 5,000-token reading each
time took 0.5 s of a sort over 5,000 tokens."""

from __future__ import annotations

import copy
import pickle

import numpy as np

from compiler.blocks import Dim, Encoded, Encoding


class Counted:
    """A value that counts how often it is hashed."""

    hashed = 0

    def __hash__(self) -> int:
        Counted.hashed += 1
        return 7


def test_a_reading_is_hashed_once_and_as_dataclass_hashes_it() -> None:
    value = Counted()
    reading = Encoded("x", Encoding.CATEGORICAL, (value,), ((((Dim("x:v"), 1.0)),),))
    Counted.hashed = 0
    first = hash(reading)
    assert hash(reading) == first and Counted.hashed == 1
    fields = (reading.name, reading.encoding, reading.values, reading.one_hot, reading.number, 0.0)
    assert first == hash(fields)


def test_a_copy_hashes_anew() -> None:
    """A str's hash differs between processes: a pickled reading keeps no hash."""
    reading = Encoded.materialised_categorical("x", ("a", "b"))
    hash(reading)
    state = reading.__getstate__()
    assert "_hash" not in state
    again = pickle.loads(pickle.dumps(reading))
    assert again == reading and hash(again) == hash(reading)
    assert copy.copy(reading) == reading and {reading: 1}[copy.deepcopy(reading)] == 1


def test_a_copied_value_s_column_is_its_out_dim_s_first() -> None:
    """`ValuePart.intended` looks columns up in a dict (it scanned out_dims per value: 4,000
    scans of 4,000 for reverse over 2,000 tokens), with out_dims.index's answers."""
    import pytest

    from compiler.blocks import ValuePart

    dims = tuple(Dim.categorical("o", v) for v in ("a", "b", "a", 1, True))
    part = ValuePart(None, dims, "copy", "a")
    for value in ("a", "b", 1, True):
        want = np.zeros(len(dims))
        want[dims.index(Dim.categorical("o", value))] = 1.0
        assert part.intended(value).tolist() == want.tolist()
    with pytest.raises(ValueError, match="not in out_dims"):
        part.intended("z")


def test_a_column_s_dyadic_maximum_is_read_from_its_non_zero_entries() -> None:
    """`dyadic_column_max` is `dyadic_exponent(...).max(axis=0)`, zeros, NaN, infinities,
    fractions, whole numbers and entries past the limit included."""
    from compiler.grids import dyadic_column_max, dyadic_exponent

    rng = np.random.default_rng(5)
    pool = np.array([0.0, -0.0, 1.0, 3.0, 0.5, -0.375, 2.0**-70, 1 / 3, np.nan, np.inf, -(2.0**40)])
    for shape in [(1, 1), (3, 4), (50, 7), (7, 50)]:
        values = rng.choice(pool, size=shape) * (rng.random(shape) < 0.3)
        want = dyadic_exponent(values).max(axis=0)
        assert dyadic_column_max(values).tolist() == want.tolist()
    assert dyadic_column_max(np.zeros((2, 3))).tolist() == [0, 0, 0]

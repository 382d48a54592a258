"""A reading (`Encoded`) is hashed once: the planners key dicts by readings, and hashing every
value and term of a 5,000-token reading each time took 0.5 s of a sort over 5,000 tokens."""

from __future__ import annotations

import copy
import pickle

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
    fields = (reading.name, reading.encoding, reading.values, reading.one_hot, reading.number)
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

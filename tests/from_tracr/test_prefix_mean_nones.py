"""A prefix mean (make_frac_prevs) of values that are None only past position 0 gives None only
where tracr raises: its query at 0 selects key 0 alone, every other query several keys, and tracr's
mean of several values with a None among them is an error. The map back from the stand-in listed
None, which made the output a one-hot of every mean: 289,453 parameters at N = 24 for
tracr_lib_campaign.py seed 780236 --big --deep --their-lib #38 (tracr: 116K), now 13,630, a
number (compiler.first_values)."""

from __future__ import annotations

import itertools
import random

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import RaspError
from rasp.tracr import lib

VOCAB = [1.0, 0.5, 2.0]


def _with_ties() -> rasp.SOp:
    """#38's program: make_sort_unique of a sort whose ties leave its last positions None."""
    p0 = lib.make_sort_unique(rasp.tokens, rasp.indices)
    p1 = lib.make_sort_unique(p0, p0)
    return lib.make_frac_prevs(rasp.numerical(p1 == 1.0))


def _none_at_first() -> rasp.SOp:
    """None at position 0 too (a token 2.0 there): tracr's mean of that one key is None."""
    x = rasp.numerical(rasp.Map(lambda t: None if t == 2.0 else t, rasp.tokens))
    return lib.make_frac_prevs(x)


def _earlier(default: object) -> rasp.SOp:
    """The mean over the earlier positions (`<`): the query at 0 gives the default, at 1 key 0."""
    earlier = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    p1 = lib.make_sort_unique(*[lib.make_sort_unique(rasp.tokens, rasp.indices)] * 2)
    return rasp.numerical(rasp.Aggregate(earlier, rasp.numerical(p1 == 1.0), default=default))


def _compare(program: rasp.SOp, max_len: int, seed: int) -> tuple[int, int]:
    """(inputs tracr evaluates, Nones it gives) where the model agrees with every value (numbers
    within 1e-9); an input it raises on is skipped."""
    model = compile_sop(program, VOCAB, max_len)
    inputs = [list(t) for n in range(1, 5) for t in itertools.product(VOCAB, repeat=n)]
    rng = random.Random(seed)
    inputs += [rng.choices(VOCAB, k=rng.randint(5, max_len)) for _ in range(150)]
    got = run_compiled(model, inputs)
    evaluated = nones = 0
    for xs, row in zip(inputs, got, strict=True):
        try:
            want = program(xs)
        except (RaspError, ValueError):
            continue
        evaluated += 1
        for g, w in zip(row, want, strict=True):
            assert (g is None) == (w is None), (xs, row, want)
            assert g is None or abs(g - w) <= 1e-9 * max(1, abs(w)), (xs, row, want)
            nones += w is None
    return evaluated, nones


def test_no_none_is_listed_where_it_comes_only_with_an_error() -> None:
    model = compile_sop(_with_ties(), VOCAB, 8)
    output = model.metadata["output"]
    assert None not in output.get("values", []) and "none_at" not in output
    assert output["encoding"] == "numerical"
    assert model.param_count() < 6_000  # 4,632 (a one-hot of every mean and None: 15,811)


@pytest.mark.parametrize(
    ("program", "nones"),
    [
        (_with_ties, False),
        (_none_at_first, True),
        (lambda: _earlier(0), False),
        # the query at 0 gives the default None, which shares None's stand-in: still listed
        # (a first version of the rule refused this program as failing on every input)
        (lambda: _earlier(None), True),
    ],
)
def test_the_model_agrees_with_tracr_where_it_does_not_raise(program, nones) -> None:  # noqa: ANN001
    evaluated, got_nones = _compare(program(), 6, 5)
    assert evaluated > 10
    assert (got_nones > 0) == nones


def test_a_none_at_position_0_is_still_listed() -> None:
    """tracr's mean of the one key at 0 is None for a token 2.0 there: the output lists None."""
    model = compile_sop(_none_at_first(), VOCAB, 5)
    output = model.metadata["output"]
    assert None in output.get("values", []) or output.get("none_at") is not None
    assert run_compiled(model, [[2.0], [2.0, 1.0]])[0] == [None]

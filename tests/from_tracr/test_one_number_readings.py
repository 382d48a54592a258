"""An s-op that is one number at every position, in two types (a prefix mean of zeros: the value
itself, 0, at the first position and the mean 0.0 after it), is read as that number: a constant,
exact and free. Its head's reading carried a float32 error into the sum reading it, and from
there into a width counting that sum's extremes: `make_count(make_pair_balance(bools, "b",
True), -1)`, whose opens are never "b", was refused at N = 16 (margin 3 vs error bound 5.2 at
the count's decoding; tracr_lib_campaign.py seed 780234 --big --deep --their-lib, #35)."""

from __future__ import annotations

import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.tracr import lib

VOCAB = ["a", "b", "c"]


def _count_of_a_one_sided_balance() -> rasp.SOp:
    bools = rasp.tokens == "a"
    # opens: bools == "b" is never true, a mean of zeros; closes: the prefix's fraction of "a"
    return lib.make_count(lib.make_pair_balance(bools, "b", True), -1)


def test_a_count_of_a_balance_with_a_mean_of_zeros_compiles_at_16() -> None:
    program = _count_of_a_one_sided_balance()
    model = compile_sop(program, VOCAB, 16)
    assert "opens" not in model.metadata["residual"]  # the constant has no dimension
    rng = random.Random(0)
    inputs = [["a"] * n for n in range(1, 17)]  # every prefix all "a": counts up to 16
    inputs += [rng.choices(VOCAB, k=rng.randint(1, 16)) for _ in range(150)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(tokens)
        assert all(map(same_value, got, want)), (tokens, got, want)

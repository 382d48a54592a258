"""A tracr output map that is the identity on numbers (the stand-in of an aggregate's None
default mapped back) gives its floats to 12 significant digits (`compiler.rounded`): 1.06666666667
for 1.0666666666666667, 3e-12 apart. The affine fit allowed 1e-12, so the map was not seen to be
the identity, and was built as an interpolation over every value of the copy, which writes the
number with an error that outgrows the output grid's margin: tracr's make_reverse of a prefix
mean of float tokens was 73,195 parameters at N = 16, refused at N = 24 (1.4B parameters
predicted, the numeric copies not proved: snap margin 0.00104 vs error 0.0012) and past three
minutes at N = 32 (tracr_lib_campaign.py seed 780305 --big --deep --their-lib, #50). It is now a
free view of the copy: 1,862, 2,398 and 2,934 parameters."""

from __future__ import annotations

import random

from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.tracr import lib

VOCAB = [3.0, 1.0, 2.25, 0.3]


def test_the_reverse_of_a_prefix_mean_of_floats_is_a_copy_and_a_view() -> None:
    program = lib.make_reverse(
        lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda x: x, rasp.tokens)))
    )
    model = compile_sop(program, VOCAB, 10)
    reach = model.metadata["reach"]
    assert [m["name"] for m in reach["mlps"]] == ["length"]  # no MLP for the identity
    assert model.param_count() < 2_000
    rng = random.Random(3)
    inputs = [rng.choices(VOCAB, k=rng.randint(1, 10)) for _ in range(200)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(tokens)
        assert all(abs(g - w) <= 1e-6 for g, w in zip(got, want, strict=True)), (tokens, got)

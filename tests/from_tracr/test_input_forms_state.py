"""The lowered graph's evaluation depends only on its input (rasp.tracr.input_forms): the same
values in any order of inputs, across threads, after an input that failed; and what a compile of
the graph accepts does not depend on what was evaluated on it before (a lowered function notes
what the compiler reads off it only outside an input's evaluation)."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest

from compiler import compile_sop
from rasp import sops
from rasp import tracr as rasp
from rasp.errors import CompileError, RaspError
from rasp.tracr.lower import to_sops

INPUTS = [list(t) for n in (1, 2, 3) for t in itertools.product([0, 1, 2, 3], repeat=n)]


def _programs() -> list[rasp.SOp]:
    mixed = rasp.Map(lambda x: np.bool_(x > 1) if x else True, rasp.tokens)
    floats = rasp.numerical(rasp.Map(lambda x: np.float64(x) / 2, rasp.tokens))
    boom = rasp.Map(lambda x: 1 // (x - 2), rasp.tokens)  # fails where a token is 2
    previous = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    copied = rasp.Aggregate(previous, mixed, default=True)
    mean = rasp.numerical(rasp.Aggregate(upto, floats, default=0))
    return [
        rasp.SequenceMap(lambda a, b: a + b, copied, mixed),
        rasp.SequenceMap(lambda a, b: type(a).__name__ + str(b), mean, boom),
        rasp.SequenceMap(lambda a, b: a * b, mixed, boom),
    ]


def _outcome(lowered: sops.SOp, xs: list[int]) -> tuple[str, object]:
    try:
        return "value", tuple(sops.evaluate(lowered, xs).values)
    except RaspError as err:
        return "error", err.message


@pytest.mark.parametrize("index", range(3))
def test_an_input_s_value_does_not_depend_on_the_inputs_before_it(index: int) -> None:
    program = _programs()[index]
    alone = {tuple(xs): _outcome(to_sops(program), xs) for xs in INPUTS}  # a fresh graph each
    lowered = to_sops(program)
    for xs in [*INPUTS, *reversed(INPUTS)]:
        assert _outcome(lowered, xs) == alone[tuple(xs)], xs
    shared, seen = to_sops(program), []

    def run(chunk: list[list[int]]) -> None:
        seen.extend((tuple(xs), _outcome(shared, xs)) for xs in chunk)

    threads = [threading.Thread(target=run, args=(INPUTS[i::3] + INPUTS,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(outcome == alone[xs] for xs, outcome in seen)


def test_a_compile_does_not_depend_on_an_evaluation_before_it() -> None:
    """True is np.True_ only for the token 5, outside the compile's vocabulary: an evaluation on
    [5, 1] notes the clash on the graph's function (NumpyTypes), and the compile of the same graph
    over [0, 1, 2], accepted on a fresh graph, was then refused for it."""
    mixed = rasp.Map(lambda x: np.bool_(True) if x == 5 else x > 0, rasp.tokens)
    program = rasp.SequenceMap(lambda a, i: a + a, mixed, rasp.indices)
    compile_sop(to_sops(program), [0, 1, 2], 2)
    lowered = to_sops(program)
    sops.evaluate(lowered, [5, 1])
    compile_sop(lowered, [0, 1, 2], 2)


def test_a_compile_does_not_depend_on_a_failed_evaluation_before_it() -> None:
    """A dict only for the token 5: the evaluation on [5] fails (as it should), and the compile
    of the same graph over [0, 1, 2] was then refused naming the dict for 5."""
    program = rasp.Map(lambda x: {1: 2} if x == 5 else x + 1, rasp.tokens)
    compile_sop(to_sops(program), [0, 1, 2], 2)
    lowered = to_sops(program)
    with pytest.raises(RaspError):
        sops.evaluate(lowered, [5])
    try:
        compile_sop(lowered, [0, 1, 2], 2)
    except CompileError as err:
        raise AssertionError(err.render()) from None

"""Exactness does not depend on the evaluation order: the same compiled model, run on single inputs
and on padded batches of mixed lengths, under 1 and under 2 torch threads, agrees with the
interpreter everywhere.

float32 reductions round differently with the batch size and the thread count; a model once passed
every batched test and was still wrong for single inputs under 2 threads (the paper's Dyck-3).
CI runs the `exactness` tests under OMP_NUM_THREADS=2 (the default tier) and again under =1 (.ci/run).
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformer")
compiler = pytest.importorskip("compiler")

from rasp.errors import RaspError  # noqa: E402
from rasp.interpreter import Interpreter  # noqa: E402
from rasp.parser import parse  # noqa: E402
from rasp.sops import SOp, evaluate  # noqa: E402
from rasp.tools.verify import same_value  # noqa: E402
from tests.runtime_helpers import as_runtime, ragged_array, run_compiled, threads  # noqa: E402

pytestmark = pytest.mark.exactness

ROOT = Path(__file__).resolve().parents[1]
DYCK3 = ["(", ")", "[", "]", "{", "}"]


@dataclass(frozen=True)
class Case:
    source: str  # a program; the case compiles its last assigned name
    vocab: tuple[Any, ...]
    max_len: int
    inputs: tuple[str, ...]  # given inputs (one character per token)
    random_inputs: int = 0  # plus this many seeded random ones of lengths 1..max_len


CASES = {
    "dyck1": Case(
        (ROOT / "programs" / "dyck1.rasp").read_text(),
        tuple("()a"),
        40,
        ("(()()a((a(()(()a)))((a(",),
        random_inputs=12,
    ),
    "sort": Case(
        (ROOT / "programs" / "sort.rasp").read_text(),
        tuple("abc"),
        256,
        ("c" * 256, "a"),
        random_inputs=6,
    ),
    "dyck3": Case(
        'load "paper_examples"; d3 = dyck3_ptf;',
        tuple(DYCK3),
        6,
        ("({[]})", "{}[]()", "(([]))", "[{}]()"),
    ),
}


@functools.cache
def compiled(name: str) -> tuple[Any, list[list[Any]], list[list[Any] | None]]:
    """The runtime model, the inputs, and the interpreter's outputs (None where it fails)."""
    case = CASES[name]
    interp = Interpreter()
    interp.exec_program(parse(case.source, f"{name}.rasp"))
    output = interp.last_assigned
    sop = interp.get(output)
    assert isinstance(sop, SOp)
    model = as_runtime(compiler.compile_sop(sop, list(case.vocab), case.max_len, name=output))
    rng = random.Random(name)
    inputs = [list(x) for x in case.inputs] + [
        [rng.choice(case.vocab) for _ in range(rng.randint(1, case.max_len))]
        for _ in range(case.random_inputs)
    ]
    return model, inputs, [interpret(sop, tokens) for tokens in inputs]


def interpret(sop: SOp, tokens: list[Any]) -> list[Any] | None:
    try:
        return list(evaluate(sop, tokens).values)
    except RaspError:
        return None


def ragged_rows(model: Any, inputs: list[list[Any]]) -> list[list[Any]]:
    """`run_array(tokens, lengths=...)` on the inputs padded into one array, rows cut back."""
    tokens, lengths = ragged_array(inputs)
    rows = model.run_array(tokens, batch_size=3, lengths=lengths).tolist()
    return [row[:n] for row, n in zip(rows, lengths, strict=True)]


def wrong(got: list[Any], want: list[Any] | None) -> str | None:
    """Where the model's output differs from the interpreter's (None: it agrees)."""
    if want is None:
        return None
    if len(got) != len(want):
        return f"{len(got)} outputs for {len(want)} positions"
    bad = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not same_value(g, w)]
    return (
        None
        if not bad
        else f"position {bad[0]}: model {got[bad[0]]!r}, interpreter {want[bad[0]]!r}"
    )


@pytest.mark.parametrize(
    "name",
    [
        "dyck1",
        "sort",
        "dyck3",
    ],
)
@pytest.mark.parametrize("count", [1, 2])  # every 1-thread case first: switching threads is slow
def test_single_inputs_and_batches_agree_with_the_interpreter(name: str, count: int) -> None:
    model, inputs, wanted = compiled(name)
    shuffle = [*range(1, len(inputs), 2), *range(0, len(inputs), 2)]  # other lengths side by side
    shuffled = [inputs[i] for i in shuffle]
    with threads(count):
        runs = {
            "alone": [run_compiled(model, [x])[0] for x in inputs],
            "one batch": run_compiled(model, inputs),
            "batches of 3": [
                out
                for i in range(0, len(shuffled), 3)
                for out in run_compiled(model, shuffled[i : i + 3])
            ],
            "grouped by length": model.run(inputs, batch_size=2),
            "one ragged array": ragged_rows(model, inputs),
        }
    order = {"batches of 3": shuffle}
    problems = [
        f"{how}, {count} thread(s), input {''.join(map(str, inputs[i]))!r}: {problem}"
        for how, outputs in runs.items()
        for i, got in zip(order.get(how, range(len(inputs))), outputs, strict=True)
        if (problem := wrong(got, wanted[i])) is not None
    ]
    assert not problems, "\n".join(problems[:10])

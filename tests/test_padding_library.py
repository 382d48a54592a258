"""Padding never changes a real position: every program in programs/, compiled at a small N, gives
each input, run beside inputs of other lengths (one padded batch, `run`'s batches, and
`run_array(tokens, lengths=...)`), exactly what it gives that input alone, under 1 and 2 torch
threads, bidirectional and, where the program allows it, causal. Inputs the program has no value
for are included: the promise is about the model, not the interpreter.

Why it holds: the compiled weights give PAD keys softmax weight exactly 0 at every real query
(docs/compiler.md, "BOS and PAD are handled by assembly"), MLPs act on each position alone, and the
certificate covers any evaluation order, so a wider batch's other summation order cannot move a
decision. The first test checks the zero weight itself, head by head.
"""

from __future__ import annotations

import functools
import itertools
import random
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformer = pytest.importorskip("transformer")
compiler = pytest.importorskip("compiler")

from rasp.interpreter import load_file  # noqa: E402
from tests.runtime_helpers import as_runtime, ragged_array, run_compiled, threads  # noqa: E402
from tests.test_differential import PROGRAMS  # noqa: E402

pytestmark = pytest.mark.exactness

ROOT = Path(__file__).resolve().parents[1]
MAX_LEN = 8
CAUSAL = ("frac_prevs", "dyck1")  # the library programs a causal model can compute
CASES = [(program, False) for program in sorted(PROGRAMS)] + [(p, True) for p in CAUSAL]


@functools.cache
def model_and_inputs(program: str, causal: bool) -> tuple[Any, list[list[str]], list[list[Any]]]:
    """The model, inputs of every length 1..MAX_LEN (all of lengths 1 and 2, 40 random
    others) and each input's output run alone."""
    vocab = list(PROGRAMS[program][0])
    interp = load_file(ROOT / "programs" / f"{program}.rasp")
    name = interp.last_assigned
    assert name is not None
    model = as_runtime(
        compiler.compile_sop(interp.get(name), vocab, MAX_LEN, name=name, causal=causal)
    )
    rng = random.Random(f"{program}-{causal}")
    inputs = [list(t) for n in (1, 2) for t in itertools.product(vocab, repeat=n)]
    inputs += [[rng.choice(vocab) for _ in range(rng.randint(1, MAX_LEN))] for _ in range(40)]
    inputs.append([vocab[0]] * MAX_LEN)  # the widest, beside the shortest
    rng.shuffle(inputs)
    return model, inputs, [model.run([tokens])[0] for tokens in inputs]


@pytest.mark.parametrize(("program", "causal"), CASES)
def test_pad_keys_get_weight_zero_at_every_real_query(program: str, causal: bool) -> None:
    model, inputs, _ = model_and_inputs(program, causal)
    ids, lengths = model.encode(inputs)  # one batch padded to MAX_LEN
    _, cache = model.run_with_cache(ids, names_filter=lambda name: name.endswith("hook_pattern"))
    assert cache, "no attention layer"
    for name, pattern in cache.items():  # [batch, head, query, key]
        for row, n in enumerate(lengths):
            seen = pattern[row, :, : 1 + n, 1 + n :]  # BOS and real queries, PAD keys
            assert bool((seen == 0).all()), f"{name}: input {row} weighs a PAD key"


@pytest.mark.parametrize(("program", "causal"), CASES)
@pytest.mark.parametrize("count", [1, 2])
def test_inputs_beside_others_give_what_they_give_alone(
    program: str, causal: bool, count: int
) -> None:
    model, inputs, alone = model_and_inputs(program, causal)
    tokens, lengths = ragged_array(inputs)
    with threads(count):
        runs = {
            "one padded batch": run_compiled(model, inputs),
            "run, batches of 7": model.run(inputs, batch_size=7),
            "run": model.run(inputs),
        }
        arrays = {
            f"run_array, batches of {size}": model.run_array(
                tokens, batch_size=size, lengths=lengths
            )
            for size in (1, 5, 256)
        }
    for how, outputs in runs.items():
        for b, (got, want) in enumerate(zip(outputs, alone, strict=True)):
            assert got == want and list(map(type, got)) == list(map(type, want)), (
                f"{how}, {count} thread(s): input {''.join(inputs[b])!r} gave {got}, alone {want}"
            )
    for how, array in arrays.items():
        assert array.shape == tokens.shape
        for b, (row, want) in enumerate(zip(array.tolist(), alone, strict=True)):
            # as the array's dtype holds the values (2.0 for 2): test_runtime_arrays.py
            assert row[: lengths[b]] == want, f"{how}: input {''.join(inputs[b])!r}: {row}"


def test_every_row_is_a_real_input() -> None:
    """The inputs mix lengths, so padding is exercised."""
    _, inputs, _ = model_and_inputs("reverse", False)
    assert {len(tokens) for tokens in inputs} == set(range(1, MAX_LEN + 1))

"""The central test: every program in programs/, compiled, agrees with the interpreter.

For each program: compile over the vocabulary of its examples, then compare the torch model with
`rasp.sops.evaluate` on ALL inputs of length 1..5 over its vocabulary (3 tokens; 4 for Dyck-2, 6 for
Dyck-3, whose exhaustive length is 4 in the default run) and on seeded random longer inputs, and
as many again guided to values of the program's variables that random inputs miss (a long
completable prefix of brackets: `rasp.tools.guided_samples`, as `rasp verify` samples), run in
padded batches of mixed lengths, and through `run_array`, one array per length and all in one
ragged array (`lengths=`), which must give what `run` gives. The default run compiles at N = 16 with 200 random and 200 guided
inputs; the slow tier (`pytest -m slow`) at N = 64 with 1,000 of each, of length 1..64.
Inputs on which the interpreter itself fails are skipped (the promise covers only inputs with an output).
"""

from __future__ import annotations

import itertools
import random
import zlib
from pathlib import Path

import numpy as np
import pytest

transformer = pytest.importorskip("transformer")
compiler = pytest.importorskip("compiler")

from rasp.errors import RaspError, Source  # noqa: E402
from rasp.interpreter import load_file  # noqa: E402
from rasp.sops import SOp, evaluate  # noqa: E402
from rasp.tools.guided_samples import draw_samples  # noqa: E402
from rasp.tools.verify import same_value  # noqa: E402
from tests.runtime_helpers import ragged_array  # noqa: E402

pytestmark = pytest.mark.exactness  # CI runs these under OMP_NUM_THREADS=2, then again under =1

ROOT = Path(__file__).resolve().parents[1]
MAX_LEN = 64  # the slow tier
FAST_MAX_LEN = 16  # the default run
# program -> (vocabulary, exhaustive length)
PROGRAMS: dict[str, tuple[str, int]] = {
    "reverse": ("abc", 5),
    "hist": ("abc", 5),
    "double_hist": ("abc", 5),
    "sort": ("abc", 5),
    "most_freq": ("abc", 5),
    "length": ("abc", 5),
    "frac_prevs": ("xab", 5),  # it counts "x"
    "induction": ("abc", 5),
    "dyck1": ("()x", 5),
    "dyck2": ("(){}", 5),
    "hist_bos": ("§ab", 5),
    "paper_examples": ("()[]{}", 5),  # its last name: dyck3_ptf
}


def same(got: object, want: object) -> bool:
    # The promise is on values: numbers within 1e-6 relative, so the interpreter's int 0 (one selected
    # value passed through) and the model's 0.0 agree; a bool never equals a number (verify's rule).
    return same_value(got, want)


def compiled(
    program: str, tmp_path_factory: pytest.TempPathFactory, max_len: int = MAX_LEN
) -> tuple[SOp, object]:
    path = ROOT / "programs" / f"{program}.rasp"
    interp = load_file(path)
    name = interp.last_assigned
    assert name is not None
    sop = interp.get(name)
    assert isinstance(sop, SOp)
    vocab = list(PROGRAMS[program][0])
    model = compiler.compile_sop(
        sop, vocab, max_len, name=name, source=Source(str(path), path.read_text())
    )
    file = tmp_path_factory.mktemp(program) / f"{program}.safetensors"
    model.save(file)
    return sop, transformer.load(file)


def check(sop: SOp, model: object, inputs: list[list[str]]) -> tuple[int, int]:
    rng = random.Random(1)
    order = list(range(len(inputs)))
    rng.shuffle(order)  # mixed lengths in every batch, so padding is exercised
    shuffled = [inputs[i] for i in order]
    outputs = model.run(shuffled, batch_size=97)
    check_arrays(model, shuffled, outputs)
    compared = 0
    for tokens, got in zip(shuffled, outputs, strict=True):
        try:
            want = list(evaluate(sop, tokens).values)
        except RaspError:
            continue
        compared += 1
        assert len(got) == len(want)
        bad = [i for i, (g, w) in enumerate(zip(got, want, strict=True)) if not same(g, w)]
        assert not bad, (
            f"input {''.join(tokens)!r}: position {bad[0]}: model {got[bad[0]]!r}, interpreter {want[bad[0]]!r}"
        )
    return compared, len(inputs)


def check_arrays(model: object, inputs: list[list[str]], outputs: list[list[object]]) -> None:
    """`run_array` on the inputs of each length, as one array, and on all of them as one ragged
    array (`lengths=`), gives what `run` gave them."""
    by_length: dict[int, list[int]] = {}
    for i, tokens in enumerate(inputs):
        by_length.setdefault(len(tokens), []).append(i)
    for rows in by_length.values():
        array = model.run_array(np.array([inputs[i] for i in rows]), batch_size=61)
        got = array.tolist()
        for i, row in zip(rows, got, strict=True):
            # as the dtype holds them: the float 2.0 in a float64 array for the int 2, never a
            # bool for a number (same_value's rule)
            assert all(same(g, w) for g, w in zip(row, outputs[i], strict=True)), (
                f"input {''.join(inputs[i])!r}: run_array {row}, run {outputs[i]}"
            )
    # all of them in one array padded to the longest, with their lengths (a ragged batch)
    tokens, lengths = ragged_array(inputs)
    ragged = model.run_array(tokens, batch_size=61, lengths=lengths).tolist()
    for row, n, want, tokens_i in zip(ragged, lengths, outputs, inputs, strict=True):
        assert all(same(g, w) for g, w in zip(row[:n], want, strict=True)), (
            f"input {''.join(tokens_i)!r}: run_array with lengths {row[:n]}, run {want}"
        )


def compare(
    program: str,
    tmp_path_factory: pytest.TempPathFactory,
    max_len: int,
    samples: int,
    exhaustive_len: int,
) -> None:
    vocab = PROGRAMS[program][0]
    sop, model = compiled(program, tmp_path_factory, max_len)
    exhaustive = [
        list(t) for n in range(1, exhaustive_len + 1) for t in itertools.product(vocab, repeat=n)
    ]
    rng = random.Random(zlib.crc32(program.encode()))
    sampled = [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(samples)]
    drawn = draw_samples(list(vocab), (1, max_len), 2 * samples, zlib.crc32(program.encode()), sop)
    guided = [list(tokens) for tokens in drawn.inputs[drawn.uniform :]]
    compared, total = check(sop, model, exhaustive + sampled + guided)
    # The comparison must not be vacuous: most inputs have an interpreter output.
    assert compared >= total // 3, f"only {compared} of {total} inputs were comparable"


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_compiled_model_matches_interpreter(
    program: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    vocab, exhaustive_len = PROGRAMS[program]
    short = exhaustive_len if len(vocab) <= 4 else exhaustive_len - 1  # 6 tokens: 9,330 -> 1,554
    compare(program, tmp_path_factory, FAST_MAX_LEN, 200, short)


@pytest.mark.slow
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_compiled_model_matches_interpreter_at_n_64(
    program: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    compare(program, tmp_path_factory, MAX_LEN, 1000, PROGRAMS[program][1])


def test_every_library_program_is_covered() -> None:
    shipped = {p.stem for p in (ROOT / "programs").glob("*.rasp")}
    assert shipped == set(PROGRAMS), "add new programs/ files to PROGRAMS with their vocabulary"

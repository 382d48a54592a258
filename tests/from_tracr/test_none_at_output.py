"""An output that maps a number standing in for tracr's None back (compiler.resolve) is that
number, decoded as None (`output.none_at`, format version 9): one logit where the map back's
one-hot of every value the copy takes was the output."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from runtime_helpers import run_compiled

import transformer
from compiler import compile_sop
from rasp import tracr as rasp
from rasp.tools.inspect import format_summary, summarize
from rasp.tools.model_file import read_model_file
from rasp.tracr import lib
from tests.cli_helpers import run

VOCAB = [1, 5, 4, 10]


def _frac_prevs() -> rasp.SOp:
    return lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda v: v, rasp.tokens)))


def _sort_unique(vals: rasp.SOp, keys: rasp.SOp, default: object) -> rasp.SOp:
    """tracr's make_sort_unique with the copy's default given."""
    target = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LT))
    return rasp.Aggregate(
        rasp.Select(target, rasp.indices, rasp.Comparison.EQ), vals, default=default
    )


def _agrees(program: rasp.SOp, got: list[list[object]], inputs: list[list[object]]) -> int:
    """The model's values are the program's (numbers within 1e-9: float64 twins are one value)
    and None where the program's are; the count of Nones."""
    nones = 0
    for xs, row in zip(inputs, got, strict=True):
        want = program(xs)
        assert len(row) == len(want), xs
        for g, w in zip(row, want, strict=True):
            assert (g is None) == (w is None), (xs, row, want)
            assert g is None or abs(g - w) <= 1e-9 * max(1, abs(w)), (xs, row, want)
            nones += w is None
    return nones


def test_a_sort_of_sorted_means_by_the_indices_outputs_one_number(tmp_path: Path) -> None:
    """make_sort_unique(make_sort_unique(x, x), indices) of a prefix mean: None (a position no
    rank reaches) beside the means. The map back was the output's one-hot of every mean: 112,561
    parameters at N = 5, now 29,589 (at N = 20, tracr_lib_campaign seed 780226 #36: 28,375,879,
    now 311,270)."""
    x = _frac_prevs()
    program = lib.make_sort_unique(lib.make_sort_unique(x, x), rasp.indices)
    model = compile_sop(program, VOCAB, 5)
    output = model.metadata["output"]
    assert output["encoding"] == "numerical" and model.metadata["format_version"] == 9
    assert output["none_at"] in output["values"] and None not in output["values"]
    assert model.param_count() < 40_000  # 29,589
    inputs = [list(t) for n in range(1, 5) for t in itertools.product(VOCAB, repeat=n)]
    rng = random.Random(3)
    inputs += [rng.choices(VOCAB, k=5) for _ in range(200)]
    assert _agrees(program, run_compiled(model, inputs), inputs) > 100
    # through the file: the runtime decodes the stand-in as None, `rasp show` says so
    path = tmp_path / "m.safetensors"
    model.save(path)
    loaded = transformer.load(path)
    assert loaded.run(inputs[:50]) == run_compiled(model, inputs[:50])
    assert loaded.run([[1, 1]])[0][1] is None  # [1.0, None]: both keys rank 0
    shown = format_summary(summarize(read_model_file(path)))
    assert f"{output['none_at']!r} decoded as None" in shown


def test_a_shift_of_a_shift_outputs_one_number() -> None:
    """shift_by(1, shift_by(1, x)): the copy's values lie on a grid of denominators by position;
    with None among them the output is snapped to their list. The map back's one-hot was 55,116
    parameters at N = 8, now 2,047."""
    program = lib.shift_by(1, lib.shift_by(1, _frac_prevs()))
    model = compile_sop(program, VOCAB, 8)
    output = model.metadata["output"]
    assert output["encoding"] == "numerical" and "none_at" in output
    assert model.param_count() < 5_000  # 2,047
    rng = random.Random(9)
    inputs = [rng.choices(VOCAB, k=rng.randint(1, 8)) for _ in range(300)]
    assert _agrees(program, run_compiled(model, inputs), inputs) > 300


def test_a_copy_that_never_gives_the_stand_in_lists_no_none() -> None:
    """The outer sort by the indices always selects a key, and the inner one's default is a
    number: the stand-in is never copied, so no listed number decodes as None (format 9 not
    needed)."""
    x = _frac_prevs()
    program = _sort_unique(_sort_unique(x, x, -1), rasp.indices, None)
    model = compile_sop(program, VOCAB, 5)
    output = model.metadata["output"]
    assert output["encoding"] == "numerical" and "none_at" not in output
    assert model.metadata["format_version"] < 9
    inputs = [list(t) for n in range(1, 4) for t in itertools.product(VOCAB, repeat=n)]
    assert _agrees(program, run_compiled(model, inputs), inputs) == 0


SHIFTS = """\
from tracr.rasp import rasp
from tracr.compiler import lib

x = lib.make_frac_prevs(rasp.numerical(rasp.Map(lambda v: v, rasp.tokens)))
program = lib.shift_by(1, lib.shift_by(1, x))
"""


def test_verify_reads_the_stand_in_s_margin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rasp verify --model`'s decoder margins snap a decoded None at its listed number (it
    crashed on float(None))."""
    source = tmp_path / "prog.py"
    source.write_text(SHIFTS)
    out = tmp_path / "m.safetensors"
    target, vocab = f"{source}:program", "[1, 5, 4, 10]"
    common = ["--tracr-compat", "-q"]
    code, _, err = run(
        capsys, "compile", *common, target, "--vocab", vocab, "--max-len", "5", "-o", str(out)
    )
    assert code == 0, err
    code, text, err = run(
        capsys, "verify", "--tracr-compat", target, "--model", str(out), "--samples", "50"
    )
    assert code == 0 and "Traceback" not in err, err
    assert "model == interpreter" in text + err


def test_a_stand_in_a_value_lies_within_float64_noise_of_is_no_output() -> None:
    """The stand-in is 1 below the least value: beside 10000000000.5 (the stand-in 9999999999,
    1e-10 relative) the output's snap targets merged the two (`fits.snap_targets`), so the model
    gave None for every copied 10000000000.5, certified (shift_by(1, x): 627 of 1,604 inputs up
    to N = 4 wrong; found by review). Such a copy keeps the map back's one-hot output."""
    vocab = [10000000000.5, 12000000000.5, 14000000000.5, 16000000000.5, 18000000000.5]
    x = rasp.numerical(rasp.Map(lambda v: v, rasp.tokens))
    for program in (lib.shift_by(1, x), lib.shift_by(1, lib.shift_by(1, x))):
        model = compile_sop(program, vocab, 4)
        assert "none_at" not in model.metadata["output"]
        inputs = [list(t) for n in range(1, 4) for t in itertools.product(vocab, repeat=n)]
        assert _agrees(program, run_compiled(model, inputs), inputs) > 100

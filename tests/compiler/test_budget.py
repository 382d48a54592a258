"""The size prediction (compiler.budget): close to the real size, and a refusal before any work."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from compiler import compile_sop
from compiler.budget import predict
from compiler.driver import _build
from rasp.errors import CompileError
from rasp.interpreter import load_file
from tests.compiler import sop_builders as B

ROOT = Path(__file__).resolve().parents[2]


def _probe(sop, vocab):
    def build(n: int):
        return _build(
            sop, tuple(vocab), n, name=None, source=None, causal=False, note=lambda s: None
        )[0]

    return build


@pytest.mark.parametrize("make", [B.reverse, B.hist], ids=["reverse", "hist"])
def test_the_prediction_is_close_to_the_real_size(make) -> None:
    build = _probe(make(), "abc")
    predicted = predict(build, 100)
    assert predicted is not None
    actual = build(100).param_count()
    assert 0.7 * actual <= predicted.params <= 1.4 * actual, (predicted.params, actual)


def test_small_lengths_are_not_predicted() -> None:
    assert predict(_probe(B.reverse(), "abc"), 64) is None


def test_a_hopeless_length_is_refused_quickly_with_the_figures() -> None:
    # reverse's model is linear in N (numerical addressing), but the value analysis is quadratic
    start = time.perf_counter()
    with pytest.raises(CompileError) as info:
        compile_sop(B.reverse(), list("abc"), 100_000)
    elapsed = time.perf_counter() - start
    text = info.value.render()
    assert "too long and too much memory" in text and "5,000,050,000 (position, length)" in text
    assert "the model: about" in text and "predicted from compiles at max-len 32" in text
    assert "--max-params" in text
    assert elapsed < 10  # well under a second on an idle machine; the point is: no real compile


def test_a_hopeless_length_is_refused_before_the_rewrites_follow_it() -> None:
    # the original's prefix counts (compiler.counts) and an order over many values
    # (compiler.order_digits) are rewritten by `prepare`, which follows every length up to max_len:
    # the refusal comes first (this once ran out of memory instead)
    for program, vocab in (("dyck1", "()"), ("most_freq", "abc")):
        interp = load_file(ROOT / "programs" / f"{program}.rasp")
        sop = interp.get(interp.last_assigned or "")
        start = time.perf_counter()
        with pytest.raises(CompileError, match="too long and too much memory"):
            compile_sop(sop, list(vocab), 100_000)
        assert time.perf_counter() - start < 10


def test_a_model_predicted_too_large_is_refused_with_the_widest_part() -> None:
    with pytest.raises(CompileError) as info:
        compile_sop(B.sort_unique(), list("abc"), 300, max_params=30_000)  # predicted: 42.7K
    text = info.value.render()
    assert "would be too large" in text and "parameters" in text and "widest part" in text
    assert "predicted from compiles at max-len 32" in text


def test_the_limit_can_be_raised_or_lowered() -> None:
    with pytest.raises(CompileError, match="too large"):
        compile_sop(B.hist(), list("abc"), 100, max_params=1_000)
    model = compile_sop(B.hist(), list("abc"), 100, max_params=None)
    assert model.param_count() > 1_000


@pytest.mark.parametrize("name", ["reverse", "sort", "most_freq", "dyck2", "frac_prevs"])
def test_the_size_a_config_gives_is_the_size_stored(name: str) -> None:
    # the assembly refuses a model over the limit from its config alone, before any weight
    from compiler.model import config_params
    from programs import VOCABULARIES

    interp = load_file(ROOT / "programs" / f"{name}.rasp")
    for n in (8, 40):
        model = compile_sop(interp.get(interp.last_assigned), list(VOCABULARIES[name]), n)
        assert config_params(model.config) == model.param_count()

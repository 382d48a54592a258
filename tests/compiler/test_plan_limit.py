"""A build stopped while planned at the first head that alone puts it over the parameter limit
(compiler.plan_limit): sort and most_freq over thousands of tokens are refused before any head's
weights are filled, and no build that fits its limit is stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import attention, compile_sop, driver, plan_limit
from programs import VOCABULARIES
from rasp.errors import CompileError
from rasp.tools.model_steps import program_sop

ROOT = Path(__file__).resolve().parents[2]


def _tokens(n: int) -> list[str]:
    return [f"t{i}" for i in range(n)]


@pytest.fixture
def no_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """Filling a head's rows, sketching a plan and assembling fail the test: where the time went
    (sort over 5,000 tokens: 15 s and a GB per plan, then its sketch)."""

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("a head's weights, a sketch or a model was built")

    monkeypatch.setattr(attention, "_atom_block", built)
    monkeypatch.setattr(driver, "sketch_model", built)
    monkeypatch.setattr(driver, "assemble", built)


@pytest.mark.parametrize(
    ("name", "params", "columns"),
    [("sort", "352,960,773", "16,384"), ("most_freq", "352,960,773", "16,384")],
)
def test_a_head_over_the_limit_stops_the_plan_before_its_weights(
    name: str, params: str, columns: str, no_weights: None
) -> None:
    """Their selects of the tokens sit inside an `or` or read maps of them, so the vocabulary's
    bound does not apply: sort over 5,000 tokens was refused by check_params after two plans
    (45 s and 3.5 GB), most_freq after 43 s and 2.9 GB."""
    sop, out, source = program_sop(str(ROOT / "programs" / f"{name}.rasp"), None)
    with pytest.raises(CompileError) as info:
        compile_sop(sop, _tokens(5_000), 8, name=out, source=source)
    text = info.value.render()
    assert "with 5,000 tokens the model would be too large: at least" in text
    assert f"{params} parameters" in text and f"a head of {columns} columns" in text
    assert "found while planning this head" in text
    assert "prelude.rasp:" in text or f"{name}.rasp:" in text  # located at a select, not nowhere
    assert "the limit is 200,000,000 parameters: use fewer tokens" in text


def test_a_build_at_its_own_size_is_not_stopped() -> None:
    """sort over 256 tokens (where the stop starts) builds under a limit of exactly its size,
    and is stopped while planned one parameter under the bound of its widest head."""
    sop, out, source = program_sop(str(ROOT / "programs" / "sort.rasp"), None)
    vocab = _tokens(256)
    params = compile_sop(sop, vocab, 4, name=out, source=source, max_params=None).param_count()
    assert compile_sop(sop, vocab, 4, name=out, source=source, max_params=params).param_count() == (
        params
    )
    # the width head's 256 classes: 4 ** 5 = 1,024 columns over 259 dimensions
    bound = plan_limit.embedding_params(256) + plan_limit.head_params(259, 1_024)
    assert bound <= params
    with pytest.raises(plan_limit.PlannedOverLimit, match="found while planning this head"):
        compile_sop(sop, vocab, 4, name=out, source=source, max_params=bound - 1)


@pytest.mark.parametrize("name", sorted(VOCABULARIES))
def test_no_library_model_is_stopped_at_its_own_size(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the stop applied at any vocabulary, each library program at its usual vocabulary
    still builds under a limit of exactly its own size: every head's bound is at most the model."""
    sop, out, source = program_sop(str(ROOT / "programs" / f"{name}.rasp"), None)
    vocab = list(VOCABULARIES[name])
    params = compile_sop(sop, vocab, 4, name=out, source=source).param_count()
    checked: list[int] = []
    check = plan_limit.check_head
    monkeypatch.setattr(plan_limit, "BOUND_FROM", 0)
    monkeypatch.setattr(
        attention.plan_limit, "check_head", lambda w, avg: (checked.append(w), check(w, avg))
    )
    model = compile_sop(sop, vocab, 4, name=out, source=source, max_params=params)
    assert model.param_count() == params
    assert checked  # the stop was consulted


def test_a_limit_of_the_kept_model_s_size_keeps_it() -> None:
    """Below N = 16 the eagerly matched build is kept where smaller (most_freq at N = 4: 22,484
    parameters, the default 22,817); under a limit of 22,484 the default's refusal was raised
    before the eager build was tried, so a limit of the model's own size refused it."""
    sop, out, source = program_sop(str(ROOT / "programs" / "most_freq.rasp"), None)
    vocab = list(VOCABULARIES["most_freq"])
    params = compile_sop(sop, vocab, 4, name=out, source=source).param_count()
    assert params == 22_484
    assert compile_sop(sop, vocab, 4, name=out, source=source, max_params=params).param_count() == (
        params
    )
    with pytest.raises(CompileError, match="the model would have 22,817 parameters"):
        compile_sop(sop, vocab, 4, name=out, source=source, max_params=params - 1)

"""`rasp.tools.guided_samples`: verify's samples, half uniformly random and half guided to values of
the program's variables that random inputs miss."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.errors import RaspError
from rasp.interpreter import load_file
from rasp.sops import Evaluator, IndicesSOp, MapSOp, SOp, TokensSOp
from rasp.tools.guided_samples import _magnitude, _node_facts, draw_samples, input_key
from rasp.tools.verify import plan_inputs, verify
from rasp.tools.verify_json import report_json
from rasp.tools.verify_text import format_success

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


def _program(name: str) -> SOp:
    sop = load_file(PROGRAMS / f"{name}.rasp").get(name)
    assert isinstance(sop, SOp)
    return sop


def _last_open(sop: SOp, tokens: tuple[Any, ...]) -> int:
    """The last position where a Dyck program's output is not "F" (-1: none)."""
    values = Evaluator(list(tokens)).seq(sop).values
    return max((i for i, v in enumerate(values) if v != "F"), default=-1)


def test_guided_samples_reach_deep_states_that_random_ones_miss() -> None:
    """dyck2 at N = 64 (verify's lengths 7..64, seed 0): no random input keeps the brackets
    completable past position 20; guided mutants reach the last eighth of the positions."""
    dyck2 = _program("dyck2")
    drawn = draw_samples(list("(){}"), (7, 64), 1000, 0, dyck2)
    assert (drawn.uniform, drawn.guided) == (500, 500)
    uniform = [_last_open(dyck2, t) for t in drawn.inputs[: drawn.uniform]]
    guided = [_last_open(dyck2, t) for t in drawn.inputs[drawn.uniform :]]
    assert max(uniform) < 20
    assert max(guided) >= 56 and sum(p >= 32 for p in guided) >= 20
    assert drawn.facts is not None and drawn.facts_uniform is not None
    assert drawn.facts > drawn.facts_uniform


def test_the_draw_is_seeded_and_its_uniform_half_is_the_uniform_plans() -> None:
    dyck1 = _program("dyck1")
    guided = draw_samples(list("()"), (5, 20), 60, 4, dyck1)
    assert guided == draw_samples(list("()"), (5, 20), 60, 4, dyck1)
    uniform = draw_samples(list("()"), (5, 20), 60, 4)
    assert uniform.uniform == 60 and uniform.facts is None
    assert guided.inputs[:30] == uniform.inputs[:30]
    assert guided.inputs[30:] != uniform.inputs[30:]


@settings(max_examples=30, deadline=None)
@given(
    vocab=st.lists(st.sampled_from("abcxyz"), min_size=1, max_size=4, unique=True),
    lo=st.integers(1, 6),
    extra=st.integers(0, 8),
    count=st.integers(0, 40),
    seed=st.integers(0, 10**6),
)
def test_every_sample_is_in_the_vocabulary_and_the_lengths(
    vocab: list[str], lo: int, extra: int, count: int, seed: int
) -> None:
    program = MapSOp(fn=lambda t: t == "a", inputs=(TokensSOp(name="tokens"),), text="t == a")
    drawn = draw_samples(vocab, (lo, lo + extra), count, seed, program)
    assert len(set(drawn.inputs)) == len(drawn.inputs) <= count  # distinct, never more than asked
    held = sum(len(vocab) ** n for n in range(lo, lo + extra + 1))
    if held >= 2 * count:  # room enough to find them all (rasp.tools.guided_samples.MAX_TRIES)
        assert len(drawn.inputs) == count and drawn.uniform == count - count // 2
    for tokens in drawn.inputs:
        assert lo <= len(tokens) <= lo + extra and set(tokens) <= set(vocab)
        assert list(drawn.outcomes[input_key(tokens)].values) == [t == "a" for t in tokens]


def test_a_program_that_fails_everywhere_still_gets_its_samples() -> None:
    # 1 / (indices - indices) raises on every input: nothing is kept, mutants cannot be made,
    # the guided half is drawn at random, and every outcome is the error
    i = IndicesSOp(name="indices")
    fails = MapSOp(fn=lambda a: 1 / (a - a), inputs=(i,), text="1 / (indices - indices)")
    drawn = draw_samples(list("ab"), (3, 6), 20, 0, fails)
    assert len(drawn.inputs) == 20 and drawn.facts == 0
    assert all(isinstance(drawn.outcomes[input_key(t)], RaspError) for t in drawn.inputs)


def test_facts_key_numbers_by_size_and_sign_not_by_exact_value() -> None:
    facts = _node_facts(0, [40, 41, 0.5, True, "a", math.nan, math.nan])
    assert (0, -1, _magnitude(40)) in facts and _magnitude(40) == _magnitude(41)
    assert _magnitude(0.5) != _magnitude(1) != _magnitude(1.5)
    assert (0, 0, 1) in facts and (0, 1, 1) in facts  # the sign of a number at its position
    assert (0, 3, ("bool", True)) in facts and (0, 4, ("str", "a")) in facts
    assert facts.count((0, -1, "nan")) == 2 and len(set(facts)) == 8  # NaNs: one fact
    assert _node_facts(1, [[1, 2], {"k": 1}])[0] == (1, 0, ("repr", "[1, 2]"))  # unhashable


class _Echo:
    """A model that gives what the interpreter gives (the program's value), counting its runs."""

    meta: ClassVar[dict[str, Any]] = {"residual": [], "layers": []}

    def __init__(self, sop: SOp) -> None:
        self.sop = sop

    def run(self, inputs: list[list[Any]]) -> list[list[Any]]:
        out = []
        for tokens in inputs:
            try:
                out.append(list(Evaluator(tokens).seq(self.sop).values))
            except RaspError:
                out.append([0] * len(tokens))
        return out


def test_verify_reports_the_guided_samples_and_skips_their_failures() -> None:
    i = IndicesSOp(name="indices")
    tenth = MapSOp(fn=lambda a: 10 / (a - 2), inputs=(i,), text="10 / (indices - 2)", name="t")
    plan = plan_inputs("ab", 6, exhaustive_len=2, samples=40, seed=1, program=tenth)
    report = verify(tenth, _Echo(tenth), plan)  # type: ignore[arg-type]
    # every sample is 3..6 tokens long: the interpreter fails on each (position 2)
    assert report.ok and report.checked == 6 and report.skipped == 40
    text = format_success(report, "t")
    assert "sampled:    40 inputs of length 3..6 (seed 1): 20 uniformly random, 20 guided" in text
    assert "coverage:   the samples reach 0 facts" in text
    sampled = report_json(report)["sampled"]
    assert (sampled["uniform"], sampled["guided"], sampled["facts"]) == (20, 20, 0)
    unguided = plan_inputs("ab", 6, exhaustive_len=2, samples=40, seed=1)
    text = format_success(verify(tenth, _Echo(tenth), unguided), "t")  # type: ignore[arg-type]
    assert "sampled:    40 random inputs of length 3..6 (seed 1)" in text
    assert "coverage:" not in text

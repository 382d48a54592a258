"""`rasp verify`'s input counts are true: samples are distinct inputs, and lengths that hold no more
inputs than the samples asked are checked exhaustively instead (the report says so). verify drew
1,000 samples with replacement over a space of 6 inputs and reported "1,000 inputs"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rasp.errors import RaspError
from rasp.sops import MapSOp, TokensSOp
from rasp.tools.guided_samples import draw_samples, input_key
from rasp.tools.verify import MAX_INPUTS, check_plan_size, plan_inputs, verify
from rasp.tools.verify_json import report_json
from rasp.tools.verify_text import format_success

ROOT = Path(__file__).resolve().parents[1]
REVERSE = ROOT / "programs" / "reverse.rasp"


class Echo:
    """A model that outputs its tokens (faithful to `tokens`), counting the inputs it runs."""

    meta = {"residual": ["one", "bos"], "layers": [], "output": {"name": "tokens"}}

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def run(self, inputs: list[list[str]]) -> list[list[str]]:
        self.seen += [tuple(x) for x in inputs]
        return [list(x) for x in inputs]


def test_lengths_holding_fewer_inputs_than_the_samples_are_checked_exhaustively() -> None:
    plan = plan_inputs("ab", 2, exhaustive_len=0, samples=1000, seed=0)
    assert (plan.exhaustive_len, plan.extended_from, plan.extended_count) == (2, 0, 6)
    assert plan.sampled_lengths is None and plan.sample_count == 0 and plan.total == 6
    assert list(plan.inputs()) == [["a"], ["b"], ["a", "a"], ["a", "b"], ["b", "a"], ["b", "b"]]
    # the K asked is kept where the longer lengths hold more than the samples
    wide = plan_inputs("ab", 9, exhaustive_len=2, samples=100)
    assert (wide.exhaustive_len, wide.extended_from) == (2, None)
    assert plan_inputs("ab", 3, 1, samples=12).extended_from == 1  # 4 + 8 = 12 inputs: all
    assert plan_inputs("ab", 3, 1, samples=11).extended_from is None


def test_the_report_counts_each_input_once_in_text_and_json() -> None:
    tokens = TokensSOp(name="tokens")
    model = Echo()
    report = verify(tokens, model, plan_inputs("ab", 2, exhaustive_len=0, samples=1000))
    assert report.ok and report.checked == 6 and len(model.seen) == 6
    text = format_success(report, "tokens")
    assert text.splitlines()[:3] == [
        "verified tokens: model == interpreter on 6 inputs",
        "  exhaustive: every input of length 1..2 over 2 tokens (6 inputs)",
        "  complete:   every input up to the maximum length 2 was checked (lengths 1..2 hold 6 "
        "inputs, no more than the 1,000 samples asked, so each was checked once instead of "
        "sampled)",
    ]
    data = report_json(report)
    assert data["checked"] == 6
    assert data["exhaustive"] == {"max_len": 2, "inputs": 6, "asked_len": None, "extended_from": 0}
    assert data["sampled"]["inputs"] == 0 and data["sampled"]["asked"] == 1000


@pytest.mark.parametrize("guided", [False, True])
def test_samples_are_distinct_inputs(guided: bool) -> None:
    # lengths 1..10 over ab hold 2,046 inputs: 1,000 drawn with replacement held 438 distinct ones
    program = MapSOp(fn=lambda t: t == "a", inputs=(TokensSOp(name="tokens"),), text="t == a")
    plan = plan_inputs(
        "ab", 10, exhaustive_len=0, samples=1000, program=program if guided else None
    )
    inputs = [tuple(x) for x in plan.inputs()]
    assert len(inputs) == len(set(inputs)) == plan.total == plan.sample_count == 1000
    assert inputs == [
        tuple(x) for x in plan_inputs("ab", 10, 0, 1000, program=plan.program).inputs()
    ]


def test_fewer_samples_than_asked_are_reported_as_such() -> None:
    # 2,040 of 2,046: the last unseen inputs are too rare to find by chance within MAX_TRIES
    model = Echo()
    report = verify(TokensSOp(name="tokens"), model, plan_inputs("ab", 10, 0, 2040))
    drawn = report.plan.sample_count
    assert 2000 < drawn < 2040 and report.checked == drawn
    assert len(model.seen) == len(set(model.seen)) == drawn
    lines = format_success(report, "tokens").splitlines()
    assert lines[0] == f"verified tokens: model == interpreter on {drawn:,} inputs"
    assert lines[1] == f"  sampled:    {drawn:,} random inputs of length 1..10 (seed 0)"
    assert lines[2] == (
        f"  distinct:   only {drawn:,} of the 2,040 samples asked: samples are distinct inputs, "
        "and further draws found only ones already drawn"
    )
    sampled = report_json(report)["sampled"]
    assert (sampled["inputs"], sampled["asked"]) == (drawn, 2040)


def test_inputs_of_tokens_python_finds_equal_are_both_drawn() -> None:
    assert input_key([1]) != input_key([True]) and input_key(["a"]) == input_key(("a",))
    drawn = draw_samples([1, True], (1, 3), 7, 0)  # 14 inputs: [1] == [True] in Python
    assert len({input_key(x) for x in drawn.inputs}) == len(drawn.inputs) == 7


def test_an_extended_plan_is_sized_by_the_k_and_s_asked() -> None:
    # every input of length 1..19 over ab is 1,048,574: over the limit, refused as the samples
    # asked (--exhaustive-len 19 was not asked)
    plan = plan_inputs("ab", 19, 0, samples=2**20)
    assert plan.extended_from == 0
    with pytest.raises(RaspError) as caught:
        check_plan_size(plan)
    assert caught.value.message == (
        f"--samples 1,048,576: with the 0 exhaustive inputs, 1,048,576 inputs, more than verify "
        f"checks ({MAX_INPUTS:,})"
    )
    check_plan_size(plan_inputs("ab", 18, 0, samples=2**20))  # 524,286 inputs: all checked


def test_one_length_checked_whole_is_worded_so() -> None:
    # "(length 3 hold 8 inputs, ...)"
    report = verify(TokensSOp(name="tokens"), Echo(), plan_inputs("ab", 3, 2, samples=1000))
    assert report.ok and report.checked == 14
    assert "(length 3 holds 8 inputs, no more than the 1,000 samples asked" in format_success(
        report, "tokens"
    )


def test_the_cli_says_every_input_was_checked(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("compiler")
    from rasp.tools.cli import main

    argv = ["verify", str(REVERSE), "--vocab", "ab", "--max-len", "2", "--exhaustive-len", "0"]
    assert main([*argv, "--samples", "1000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["checked"] == 6 and data["exhaustive"]["inputs"] == 6
    assert data["orders"]["inputs"] == 6  # the sweep, too, runs each input once
    assert main([*argv, "--samples", "1000"]) == 0
    out = capsys.readouterr().out
    assert "model == interpreter on 6 inputs" in out and "lengths 1..2 hold 6 inputs" in out


def test_one_sampled_length_is_named_once() -> None:
    report = verify(TokensSOp(name="tokens"), Echo(), plan_inputs("abc", 6, 5, samples=10))
    text = format_success(report, "tokens")
    assert "10 random inputs of length 6 (seed 0)" in text and "6..6" not in text


def test_a_narrowed_model_check_names_what_it_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify --model with a smaller --max-len or fewer --vocab tokens checks only those: "every
    input up to the maximum length 3 was checked" read as if the model took no longer input."""
    from rasp.tools.cli import main
    from tests.verify_helpers import compiled_reverse

    _, model, _ = compiled_reverse(tmp_path)  # vocab abc, max_len 4
    argv = ["verify", "--model", str(model), "--max-len", "3", "--vocab", '["a","b"]']
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "complete:   every input up to length 3 was checked" in out
    assert "narrowed:   the model also accepts length 4 and 1 more token (of its 3)" in out
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["narrowed_from"] == {"max_len": 4, "tokens": 3}
    assert main(["verify", "--model", str(model), "--json"]) == 0  # the model's own: not narrowed
    assert json.loads(capsys.readouterr().out)["narrowed_from"] is None

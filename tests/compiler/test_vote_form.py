"""The form with differences of two means read as one mean of votes (compiler.vote_form) is built
where the program's other forms are refused or not proved (and, beside a proved model, where its
sketch is smaller: test_vote_form_smaller.py): tracr's pair-balance count is certified through
it, `frac_a > frac_b` keeps its one-layer default, and where the rewrite cannot be made the
refusal says why, located at the difference."""

from __future__ import annotations

import itertools
import random

import pytest

from compiler import compile_sop, vote_means
from compiler.forms import prepare
from rasp import sops as S
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib
from tests.runtime_helpers import run_compiled

VOCAB = ["a", "b", "c"]
BALANCE = """opens = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
closes = aggregate(select(indices, indices, <=), indicator(tokens == "b"));
bal = opens - closes;
"""


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(BALANCE + text, "prog.rasp"))
    return interp.get("res")


def _inputs(n: int, samples: int, seed: int) -> list[list[str]]:
    """Every input up to length 6, and `samples` longer ones up to n."""
    short = [list(t) for k in range(1, 7) for t in itertools.product(VOCAB, repeat=k)]
    rng = random.Random(seed)
    return short + [[rng.choice(VOCAB) for _ in range(rng.randint(7, n))] for _ in range(samples)]


@pytest.mark.parametrize("n", [10, 16])
def test_the_pair_balance_count_is_certified_and_exact(n: int) -> None:
    program = lib.make_count(lib.make_pair_balance(rasp.tokens, "a", "b"), -1)
    # refused on main from N = 10 (a relu margin of 3 against a float32 error of 3.45 at N = 10)
    model = compile_sop(program, VOCAB, n)
    assert model.metadata["certificate"]["ok"] and model.metadata["votes_as_means"] is True
    assert model.param_count() < 2_000
    inputs = _inputs(n, 400, n)
    inputs += [["b"] * n, ["a", "b", "b"] * (n // 3), ["b", "a"] * (n // 2)]
    outputs = run_compiled(model, inputs)
    for xs, got in zip(inputs, outputs, strict=True):
        assert got == program(xs), xs
    # (some inputs have positions where the balance is -1: the count is not always 0)
    assert any(max(program(xs)) > 0 for xs in inputs)


def test_the_default_form_reads_the_two_means_and_keeps_its_one_layer() -> None:
    frac = """prefix = select(indices, indices, <=);
    frac_a = aggregate(prefix, indicator(tokens == "a"));
    frac_b = aggregate(prefix, indicator(tokens == "b"));
    res = "a" if frac_a > frac_b else ("b" if frac_b > frac_a else "=");
    """
    interp = Interpreter()
    interp.exec_program(parse(frac, "prog.rasp"))
    root = interp.get("res")

    def tables(node: S.Node) -> list[str]:
        return [x.note for x in S.walk(node) if x.note and "a table over" in x.note]

    assert not tables(prepare(root, VOCAB, 12))  # the default form: no vote mean
    assert tables(prepare(root, VOCAB, 12, votes=True))  # the alternative: one
    model = compile_sop(root, VOCAB, 12)
    assert len(model.metadata["layers"]) == 1 and "votes_as_means" not in model.metadata


def test_past_the_combinations_limit_the_refusal_says_so_at_the_difference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vote_means, "MAX_COMBINATIONS", 100)  # 285 (w, a, b) at N = 10
    # (the side tables' build, compiler.side_build, would compile it: the refusal is the subject)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)
    with pytest.raises(CompileError) as info:
        compile_sop(_program("res = selector_width(select(bal, -1, ==));"), VOCAB, 10, name="res")
    notes = [d for d in info.value.diagnostics if "mean of the keys' votes" in d.message]
    assert len(notes) == 1 and notes[0].severity == "note"
    assert "285 (width, count, count) combinations" in notes[0].message
    assert "past the limit of 100" in notes[0].message
    span = notes[0].span
    assert span is not None and (span.line, span.col) == (3, 7)  # `opens - closes`
    assert info.value.diagnostics[0].severity == "error"  # the default's refusal comes first


def test_a_reader_that_is_no_function_of_the_vote_mean_is_named() -> None:
    # 0.3 - 0.2 == 0.1 is False in float64, 0.2 - 0.1 == 0.1 True: one vote mean, two answers
    root = _program("res = selector_width(select(bal, 0.1, ==));")
    rewrite = vote_means.vote_rewrite(prepare(root, VOCAB, 10), VOCAB, 10)
    assert rewrite.root is prepare(root, VOCAB, 10) or not [
        x for x in S.walk(rewrite.root) if x.note and "a table over" in x.note
    ]
    (reason,) = rewrite.reasons
    assert "is not a function of it" in reason.message and " of 10 keys" in reason.message
    assert reason.span is not None and reason.span.line == 3


def test_the_tools_pair_the_vote_form_s_names_with_its_graph() -> None:
    pytest.importorskip("transformer")
    from rasp.tools.model_steps import nodes_by_residual_name

    root = _program("res = selector_width(select(bal, -1, ==));")
    model = compile_sop(root, VOCAB, 10, name="res")
    assert model.metadata["votes_as_means"] is True
    names = [b["name"] for layer in model.metadata["layers"] for b in layer["mlp"]]
    names += [h["name"] for layer in model.metadata["layers"] for h in layer["attn"]]
    nodes = nodes_by_residual_name(root, VOCAB, 10, model.metadata)
    # a head's name lists the s-ops it writes, comma-separated
    for name in (part for n in names for part in n.split(", ")):
        assert name in nodes, name
    assert any("a table over" in (nodes[n].note or "") for n in nodes)

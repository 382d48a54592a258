"""Beside a proved model, the form with differences of two means read as one mean of votes
(compiler.vote_form) is sketched, its tables read off one (w, a, b) per vote mean, and built only
where that sketch is smaller: tracr's shuffle_dyck and shuffle_dyck2 compile to it, smaller; a
larger vote form is sketched alone; and tables that do not hold at every (w, a, b) are never
built."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest

from compiler import compile_sop, vote_means
from compiler.forms import Forms, prepare
from rasp import sops as S
from rasp import tracr as rasp
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib
from tests.runtime_helpers import run_compiled

SKETCHED = "compiling: sketch with differences of means read as one mean of votes"
BUILT = "compiling: build with differences of means read as one mean of votes"
BALANCE = """opens = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
closes = aggregate(select(indices, indices, <=), indicator(tokens == "b"));
bal = opens - closes;
"""


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(text, "prog.rasp"))
    return interp.get("res")


def _compiled(root: Any, vocab: list[str], n: int) -> tuple[Any, list[str]]:
    """The model, and the compile's stages."""
    stages: list[str] = []
    model = compile_sop(root, vocab, n, name="res", progress=lambda s, d, t: stages.append(s))
    return model, stages


def _inputs(vocab: list[str], n: int, exhaustive: int, samples: int) -> list[list[str]]:
    short = [list(t) for k in range(1, exhaustive + 1) for t in itertools.product(vocab, repeat=k)]
    rng = random.Random(n)
    longer = [
        [rng.choice(vocab) for _ in range(rng.randint(exhaustive + 1, n))] for _ in range(samples)
    ]
    return short + longer


@pytest.mark.parametrize(
    ("make", "vocab", "default_params", "params"),
    [
        (lambda: lib.make_shuffle_dyck(pairs=["()"]), "()", 3_378, 3_205),
        (lib.make_shuffle_dyck2, "(){}", 5_420, 5_026),
    ],
)
def test_tracr_shuffle_dyck_compiles_to_the_smaller_vote_form(
    make: Callable[[], rasp.SOp], vocab: str, default_params: int, params: int
) -> None:
    """(on main the default form was kept: 3,378 and 5,420 parameters at N = 16, in as many
    layers as the vote form's)"""
    program = make()
    model, stages = _compiled(program, list(vocab), 16)
    assert model.metadata["certificate"]["ok"] and model.metadata["votes_as_means"] is True
    assert model.param_count() == params < default_params
    assert SKETCHED in stages and BUILT in stages
    inputs = _inputs(list(vocab), 16, 6, 200)
    inputs += [list("(" * 8 + ")" * 8), list("()" * 8), list(")(" * 8)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs


def test_a_larger_vote_form_is_sketched_and_not_built() -> None:
    """`frac_a > frac_b`: one layer in the default form, two through the vote mean (its build,
    tried after the default's, took 31 s at N = 40 for a model never kept)."""
    root = _program(
        """prefix = select(indices, indices, <=);
        frac_a = aggregate(prefix, indicator(tokens == "a"));
        frac_b = aggregate(prefix, indicator(tokens == "b"));
        res = "a" if frac_a > frac_b else ("b" if frac_b > frac_a else "=");
        """
    )
    model, stages = _compiled(root, list("abc"), 12)
    assert len(model.metadata["layers"]) == 1 and "votes_as_means" not in model.metadata
    assert SKETCHED in stages and BUILT not in stages


def test_tables_that_do_not_hold_at_every_count_are_not_built() -> None:
    """`bal == 0.1` at N = 10: the first (w, a, b) of the vote mean 0.1 is 1 "a" of 10 keys (0.1
    - 0.0 == 0.1), but 3 "a"s and 2 "b"s give 0.3 - 0.2 = 0.09999999999999998: the table read off
    the first says True where the program says False. It is sketched, refused by the check, and
    the model is the default's, exact on both inputs."""
    root = _program(BALANCE + "res = bal == 0.1;")
    forms = Forms(root, list("abc"), 10)
    unchecked = vote_means.vote_rewrite(
        prepare(root, list("abc"), 10), list("abc"), 10, checked=False
    )
    assert unchecked.unchecked and not vote_means.confirmed(unchecked)
    assert forms.unchecked_votes() is not None and not forms.confirm_votes()
    model, stages = _compiled(root, list("abc"), 10)
    assert "votes_as_means" not in model.metadata and BUILT not in stages
    inputs = [list("aaabbccccc"), list("a" + "c" * 9), list("abaabccccc")]
    outputs = run_compiled(model, inputs)
    assert [out[9] for out in outputs] == [False, True, False]
    for xs, got in zip(inputs, outputs, strict=True):
        assert got == list(S.evaluate(root, xs).values)


def test_confirmed_tables_are_the_checked_rewrite_s() -> None:
    """Where every table holds, the unchecked rewrite gives the checked one's tables, and the form
    `votes=True` then gives is built from it (no second rewrite)."""
    root = _program(BALANCE + 'res = "neg" if bal < 0 else "ok";')
    vocab = list("abc")
    checked = vote_means.vote_rewrite(prepare(root, vocab, 12), vocab, 12)
    unchecked = vote_means.vote_rewrite(prepare(root, vocab, 12), vocab, 12, checked=False)
    assert vote_means.confirmed(unchecked)

    def tables(node: S.Node) -> list[dict[Any, Any]]:
        found = [getattr(x, "fn", None) for x in S.walk(node)]
        return [fn.table for fn in found if isinstance(fn, vote_means._Table)]

    assert tables(unchecked.root) == tables(checked.root) != []
    forms = Forms(root, vocab, 12)
    form = forms.unchecked_votes()
    assert form is not None and forms.confirm_votes()
    assert forms.voted().root is forms._unchecked[0].root  # type: ignore[index]

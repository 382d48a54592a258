"""A function reading several values a model cannot tell apart is checked on every mix of them.

A model gives one value where tracr gives either of two: a sort's copy gives 1 for 1 and 1.0
(`ranks.copy_numbers`), and a tracr mean of bools that may also give an int 0 or 1 of its own
(its default) is read as the bool there (`BoolMeans`). At one position two such arguments are
each either, independently. The checks (`BoolMeans.check`) swapped one argument at a time (the
sort's twins) or all at once (the means), so a function telling only a mix apart compiled,
certified, and was wrong (found by review): `isinstance(a, float) and isinstance(b, float)` of a
sorted copy read twice gave False where tracr gives True (202 of 320 inputs); a function telling
a selected bool beside a default int 0 from two bools, 214 of 262; and a mean that is never empty
beside one that may be, every input. A select's key and query are read at two positions, so one
node as both is each either too: `selector_width(Select(s, s, type(k) is type(q)))` of a sorted
copy s, checked on equal key and query alone, compiled, certified, wrong on 86 of 120 inputs."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib


def _sorted_twins() -> rasp.SOp:
    """Values 1, 1.0 and 3 sorted by keys that never repeat: copied as tokens, 1 for 1.0."""
    vals = rasp.numerical(rasp.Map(lambda t: 1 if t == 1 else (1.0 if t == 2 else 3), rasp.tokens))
    keys = rasp.numerical(rasp.Map(lambda t: t, rasp.tokens))
    return lib.make_sort(vals, keys, max_seq_len=4, min_key=1)


def _before(k: int, token: str) -> rasp.SOp:
    """tracr's mean of `tokens == token` over the keys before q - k, default the int 0."""
    select = rasp.Select(rasp.indices, rasp.indices, lambda key, q: key < q - k)
    return rasp.numerical(rasp.Aggregate(select, rasp.tokens == token, default=0))


def _prefix(token: str) -> rasp.SOp:
    """A mean of bools that is never empty: its 0 and 1 are always one selected bool."""
    select = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return rasp.numerical(rasp.Aggregate(select, rasp.tokens == token, default=0))


def _both_floats(a: Any, b: Any) -> bool:
    return isinstance(a, float) and isinstance(b, float)


def _kinds_match(u: Any, v: Any) -> bool:
    """Whether u and v are both bools or both not, asked of ints and bools only."""
    if type(u) in (int, bool) and type(v) in (int, bool):
        return (type(u) is bool) == (type(v) is bool)
    return True


def _bool_beside(u: Any, v: Any) -> bool:
    """Asked only where u is a bool: whether v is one too."""
    return type(v) is bool if type(u) is bool and type(v) in (int, bool) else True


def _width_of_itself(f: Any, x: rasp.SOp) -> rasp.SOp:
    return rasp.SelectorWidth(rasp.Select(x, x, f))


CASES: dict[str, tuple[Any, list[Any], int]] = {
    "a sorted copy read twice": (
        lambda: rasp.SequenceMap(_both_floats, _sorted_twins(), _sorted_twins()),
        [1, 2, 4],
        4,
    ),
    "a predicate on a sorted copy and itself": (
        lambda: rasp.SelectorWidth(rasp.Select(_sorted_twins(), _sorted_twins(), _both_floats)),
        [1, 2, 4],
        4,
    ),
    # one node as key and query: read at two positions, each either (found by review59)
    "a predicate on one sorted copy as key and query": (
        lambda: _width_of_itself(lambda k, q: type(k) is type(q), _sorted_twins()),
        [1, 2, 4],
        4,
    ),
    "a predicate on one copy of a sorted copy as key and query": (
        lambda: _width_of_itself(lambda k, q: str(k) == str(q), lib.shift_by(1, _sorted_twins())),
        [1, 2, 4],
        4,
    ),
    "two means that may give their default": (
        lambda: rasp.SequenceMap(_kinds_match, _before(0, "x"), _before(1, "x")),
        list("xy"),
        5,
    ),
    "a mean that is never empty beside one that may be": (
        lambda: rasp.SequenceMap(_bool_beside, _prefix("x"), _before(0, "y")),
        list("xy"),
        5,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_a_function_telling_a_mix_apart_is_refused(name: str) -> None:
    make, vocab, max_len = CASES[name]
    program = make()
    inputs = [list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]
    try:
        model = compile_sop(program, vocab, max_len)
    except CompileError as err:
        assert "gives" in str(err)
        return
    wrong = [
        xs
        for xs, got in zip(inputs, run_compiled(model, inputs), strict=True)
        if got != program(xs)
    ]
    assert not wrong, f"certified and wrong on {len(wrong)} of {len(inputs)}, e.g. {wrong[0]}"


def test_the_mixes_are_what_tracr_tells_apart() -> None:
    """Each function gives two results on these programs (else a model of one proves nothing)."""
    for make, vocab, _ in CASES.values():
        program = make()
        results = {v for xs in itertools.product(vocab, repeat=3) for v in program(list(xs))}
        assert len(results) > 1, make


def _twice(f: Any, x: rasp.SOp) -> rasp.SOp:
    return rasp.SequenceMap(f, x, x)


@pytest.mark.parametrize(
    "program, vocab, max_len",
    [
        (_twice(_kinds_match, _before(0, "x")), list("xy"), 5),
        (_twice(lambda u, v: type(u) is type(v), _sorted_twins()), [1, 2, 4], 4),
    ],
    ids=["one mean read twice", "one sorted copy read twice"],
)
def test_one_node_read_twice_holds_one_value(program: rasp.SOp, vocab: list, max_len: int) -> None:
    """Positions reading one node hold its one value: no mix of them is checked (`f(x, x)` never
    reads the int 0 beside the bool, or 1 beside 3), so a function giving one result for each
    value read twice compiles and agrees (the second was refused before, for 1 beside 1.0)."""
    model = compile_sop(program, vocab, max_len)
    inputs = [list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(xs), xs

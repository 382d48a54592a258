"""A tracr program whose Select predicate or Map function fails on every call (a lambda of the
wrong arity, the mistake a first program makes): the interpreter's error says how the function is
called and where it failed, and the compiler refuses the program, located at the Select. Before,
a predicate that raised everywhere read as "selects nothing" and compiled to a model of a
constant 0 with a warning: a model of a program that has no output on any input."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from rasp import sops
from rasp import tracr as rasp
from rasp.errors import CompileError, RaspError
from rasp.tracr.lower import to_sops


def _width(predicate: object) -> sops.SOp:
    select = rasp.Select(rasp.tokens, rasp.tokens, predicate).named("sel")  # type: ignore[arg-type]
    return to_sops(rasp.SelectorWidth(select).named("w"))


def test_a_predicate_of_one_argument_is_refused_not_compiled() -> None:
    with pytest.raises(CompileError) as info:
        compile_sop(_width(lambda k: k == "a"), list("abc"), 5, name="w")
    (diagnostic,) = info.value.diagnostics
    assert "fails on every input of length 1..5" in diagnostic.message
    assert "called as predicate(key, query)" in diagnostic.message
    assert diagnostic.hint is not None and "it fails at key 'a', query 'a'" in diagnostic.hint


def test_a_predicate_failing_on_every_pair_is_refused() -> None:
    with pytest.raises(CompileError, match="fails on every input"):
        compile_sop(_width(lambda k, q: k < 1), list("ab"), 4, name="w")


def test_a_predicate_false_everywhere_still_compiles() -> None:
    # all False without an error is a select of no key, as before
    compiled = compile_sop(_width(lambda k, q: False), list("ab"), 4, name="w")
    assert compiled is not None


def test_a_predicate_failing_on_some_pairs_still_compiles() -> None:
    # "a" < 1 raises, "b" does not reach it: the model is defined where the program is
    compiled = compile_sop(_width(lambda k, q: k == "b" or k < 1), list("ab"), 4, name="w")
    assert compiled is not None


def test_the_interpreter_says_how_a_predicate_is_called_and_where_it_failed() -> None:
    with pytest.raises(RaspError) as info:
        sops.evaluate(_width(lambda k: k == "a"), list("abc"))
    assert "(a Select's predicate is called as predicate(key, query))" in info.value.message
    assert info.value.hint == "it failed at key 'a', query 'a'"


def test_the_interpreter_says_how_a_map_is_called() -> None:
    wrong = to_sops(rasp.Map(lambda x, y: x + y, rasp.tokens).named("m"))  # type: ignore[misc]
    with pytest.raises(RaspError) as info:
        sops.evaluate(wrong, list("ab"))
    assert "(a Map's function is called with 1 argument)" in info.value.message
    assert info.value.hint is not None and "position 0" in info.value.hint

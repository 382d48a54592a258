"""A failing map's hint names each input it was called with: by its name or short program text,
and where it has neither (a program built in Python, tracr's `rasp.tokens`, a long expression)
by what it is (`tokens_asis`, `indices`) or its place, `its second input`: `input 1 = "a"` read
as a name the program had given."""

from __future__ import annotations

import pytest

import compiler
from rasp import sops as S
from rasp.errors import CompileError, RaspError


def _fails(a: object, b: object) -> object:
    return a + b  # type: ignore[operator]  (a string and an int: TypeError)


def test_input_words() -> None:
    from rasp.wording import input_words

    assert input_words(0, 1) == "its input"
    assert [input_words(k, 3) for k in range(3)] == [
        "its first input",
        "its second input",
        "its third input",
    ]
    assert input_words(11, 12) == "its input 12"


def test_the_interpreter_names_tracrs_unnamed_inputs() -> None:
    tokens, indices = S.TokensSOp(kind=S.TokenKind.ASIS), S.IndicesSOp()
    root = S.MapSOp(fn=_fails, inputs=(tokens, indices), text="add")
    with pytest.raises(RaspError) as info:
        S.Evaluator(["a"]).seq(root)
    assert 'where tokens_asis = "a" (a string), indices = 0' in str(info.value.hint)
    lower = S.MapSOp(fn=lambda t: t.lower(), inputs=(tokens,), text="lower")
    upper = S.MapSOp(fn=lambda t: t.upper(), inputs=(tokens,), text="upper")
    both = S.MapSOp(fn=lambda a, b: int(a) + int(b), inputs=(lower, upper), text="both")
    with pytest.raises(RaspError) as info:
        S.Evaluator(["a"]).seq(both)
    hint = str(info.value.hint)
    assert 'its first input = "a" (a string), its second input = "A" (a string)' in hint, hint


def test_the_compilers_refusal_names_them_alike() -> None:
    tokens = S.TokensSOp(kind=S.TokenKind.ASIS)
    long = "each token in lower case, as Python's str.lower gives it"  # (too long to quote)
    lower = S.MapSOp(fn=lambda t: t.lower(), inputs=(tokens,), text=long)
    upper = S.MapSOp(fn=lambda t: t.upper(), inputs=(tokens,), text=long.replace("lower", "upper"))
    both = S.MapSOp(fn=lambda a, b: int(a) + int(b), inputs=(lower, upper), text="both")
    with pytest.raises(CompileError) as info:
        compiler.compile_sop(both, ["a", "b"], 3)
    message = info.value.render()
    assert "fails on every input" in message and "input 1 =" not in message, message
    assert 'its first input = "a" (a string), its second input = "A"' in message, message

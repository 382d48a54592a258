"""A failing map's hint names each input it was called with: by its name or program text (a long
expression's cut to 40 columns, as an unnamed s-op's label is), and where it has neither (a
program built in Python, tracr's `rasp.tokens`) by what it is (`tokens_asis`, `indices`) or its
place, `its second input`: `input 1 = "a"` read as a name the program had given."""

from __future__ import annotations

import pytest

import compiler
from rasp import sops as S
from rasp.errors import CompileError, RaspError, Source
from rasp.interpreter import load_source


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


# three zeros summed: 62 characters of program text, no name
LONG = "(indices - indices) + (indices - indices) + (indices - indices)"


def _hint(text: str, name: str) -> str:
    sop = load_source(Source("<test>", text)).get(name)
    with pytest.raises(RaspError) as info:
        S.evaluate(sop, list("abc"))
    return str(info.value.hint)


def test_a_long_input_is_named_by_its_text_cut_short() -> None:
    # it was `its input = 0`: which of a long line's parts failed was not said
    hint = _hint(f"y = 1 / ({LONG});", "y")
    assert hint == "it failed at position 0, where ((indices - indices) + (indices - indi...) = 0"


def test_two_inputs_cut_alike_say_where_each_starts() -> None:
    plus = LONG[: -len("(indices - indices)")] + "(indices + 1)"
    hint = _hint(f"z = ({plus}) / ({LONG});", "z")
    cut = "((indices - indices) + (indices - indi...)"
    assert hint == (
        f"it failed at position 0, where {cut} (line 1, column 6) = 1, "
        f"{cut} (line 1, column {6 + len(plus) + 5}) = 0"
    )


def test_a_short_input_and_a_named_one_are_unchanged() -> None:
    hint = _hint(f"w = {LONG};\nv = (indices - indices) / w;", "v")
    assert hint == "it failed at position 0, where (indices - indices) = 0, w = 0"


def test_the_compiler_cuts_a_long_input_as_the_interpreter_does() -> None:
    # the compiler's refusal said `its input = 0` for this while the interpreter named it
    source = Source("<test>", f"y = 1 / ({LONG});")
    with pytest.raises(CompileError) as info:
        compiler.compile_sop(load_source(source).get("y"), list("abc"), 4, source=source)
    cut = "((indices - indices) + (indices - indi...)"
    assert f"it fails where {cut} = 0" in str(info.value.hint), info.value.hint


FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧: five characters, two columns


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # `日...日(tokens)`: 25 characters, 42 columns: past LABEL_MAX, so a Python map's own text
        # is not quoted (it was, cut by columns, being "short" by characters)
        ("日" * 17, "its first input"),
        # 43 characters, 22 columns: short, so quoted whole (it was `its first input`)
        (FAMILY * 7, f"{FAMILY * 7}(tokens)"),
        ("x" * 32, f"{'x' * 32}(tokens)"),  # ASCII as before: 40 characters are short, 41 not
        ("x" * 33, "its first input"),
    ],
)
def test_a_python_maps_text_is_short_by_columns(text: str, shown: str) -> None:
    tokens = S.TokensSOp(kind=S.TokenKind.ASIS)
    first = S.MapSOp(fn=lambda t: t.lower(), inputs=(tokens,), text=text)  # `text(tokens)`
    both = S.MapSOp(fn=_fails, inputs=(first, S.IndicesSOp()), text="both")
    with pytest.raises(CompileError) as info:
        compiler.compile_sop(both, ["a", "b"], 3)
    hint = str(info.value.hint)
    assert f'where {shown} = "a" (a string), indices = 0' in hint, hint

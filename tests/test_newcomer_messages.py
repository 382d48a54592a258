"""Messages a newcomer met on a first walk through the project (session 66), each once unclear:
an input of words typed run together (`thecat` for ["the", "cat"]) was told only its length,
an input in the quotes the shell kept (`--input '"abc"'`) was told only that `"` is no token,
a constant output of strings was written bare (`is  at every position` for "", `is a b at` for
"a b"), and `rasp compile` of `tokens + 1` over number tokens did not say, as `rasp run` does, that
`tokens_int` reads them as numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tools.input_hints import cli_input, input_hint
from rasp.tools.probe import probe_warnings
from rasp.tools.repl_model_input import repl_spelling
from tests.cli_helpers import run

WORDS = ["the", "cat", "a dog"]
JOINED = "text is split into characters: write the tokens as a JSON list, "


@pytest.mark.parametrize(
    ("text", "vocab", "cli", "repl"),
    [
        ("thecat", WORDS, """--input '["the","cat"]'""", """:residual ["the", "cat"]"""),
        ("cata dog", WORDS, """--input '["cat","a dog"]'""", """:residual ["cat", "a dog"]"""),
        ("1020", [10, 20], "--input '[10,20]'", ":residual [10, 20]"),
    ],
)
def test_words_typed_together_are_listed_as_the_tokens(
    text: str, vocab: list[Any], cli: str, repl: str
) -> None:
    assert input_hint(list(text), vocab, cli_input) == JOINED + cli
    assert input_hint(list(text), vocab, repl_spelling(":residual")) == JOINED + repl


@pytest.mark.parametrize(
    ("text", "vocab", "hint"),
    [
        ('"abc"', ["a", "b", "c"], "the quotes are characters too: --input 'abc'"),
        (
            '"thecat"',
            WORDS,
            "the quotes are characters too, and " + JOINED + """--input '["the","cat"]'""",
        ),
        ('"ab"', ["a", "b", '"'], ""),  # a quote is a token: the input may mean it
    ],
)
def test_an_input_in_quotes_is_told_that_they_are_characters(
    text: str, vocab: list[Any], hint: str
) -> None:
    # `--input '"abc"'` (a JSON string, not a list): the model refused `"` and said no more
    assert input_hint(list(text), vocab, cli_input) == hint


@pytest.mark.parametrize(
    ("text", "vocab"),
    [
        ("abab", ["a", "b", "ab"]),  # four readings: no one of them is the fix
        ("thecats", WORDS),  # no reading
        ("abz", ["a", "b", "c"]),  # a vocabulary of characters: nothing run together
    ],
)
def test_no_reading_or_several_give_no_words_hint(text: str, vocab: list[Any]) -> None:
    assert input_hint(list(text), vocab, cli_input) == ""


def test_run_model_names_the_words_of_a_too_long_input(
    capsys: pytest.CaptureFixture[str], reverse_file: Path, tmp_path: Path
) -> None:
    pytest.importorskip("transformer")
    model = tmp_path / "words.safetensors"
    argv = ["compile", str(reverse_file), "--vocab", '["the","cat","a dog"]', "--max-len", "4"]
    code, _, err = run(capsys, *argv, "-o", str(model), "--quiet")
    assert code == 0, err
    code, _, err = run(capsys, "run", "--model", str(model), "--input", "thecat")
    assert code == 2
    assert err.splitlines()[-1] == (
        "rasp run: error: argument --input: the input has 6 tokens; this model was compiled "
        f"for at most 4 ({model}); " + JOINED + """--input '["the","cat"]'"""
    )


@pytest.mark.parametrize(
    ("value", "shown"), [("", '""'), ("a b", '"a b"'), (" ", '" "'), ("a", '"a"')]
)
def test_a_constant_string_output_is_quoted(value: str, shown: str) -> None:
    program = _program("reverse = aggregate(select(indices, length - indices - 1, ==), tokens);")
    warnings = probe_warnings(program, [value], 3, "reverse")
    assert warnings == [
        f"the output `reverse` is {shown} at every position of all 3 inputs tried: the model "
        "computes a constant (does the vocabulary hold the tokens the program looks for?)"
    ]


def test_a_constant_number_is_written_as_before() -> None:
    program = _program('n = selector_width(select(tokens, "a", ==));')
    (warning,) = probe_warnings(program, ["b", "c"], 3, "n")
    assert warning.startswith("the output `n` is 0 at every position")


def _program(text: str) -> Any:
    """The s-op a one-statement program assigns."""
    interp = Interpreter()
    interp.exec_program(parse(text + "\n", "<test>"))
    return interp.get(interp.last_assigned)


@pytest.mark.parametrize(
    ("source", "failed"),
    [
        ("y = tokens + 1;", 'can only concatenate str (not "int") to str'),
        ("y = tokens > 5;", "'>' not supported between instances of 'str' and 'int'"),
    ],
)
def test_compile_of_number_tokens_read_as_strings_hints_tokens_int(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: str, failed: str
) -> None:
    # `rasp run` hinted tokens_int for this mistake; `rasp compile` of the same program did not
    program = tmp_path / "plus.rasp"
    program.write_text(source + "\n", encoding="utf-8")
    argv = ["compile", str(program), "--vocab", "[1,2,3]", "--max-len", "3"]
    code, _, err = run(capsys, *argv, "-o", str(tmp_path / "plus.safetensors"))
    assert code == 1
    assert err == (
        f"{program}:1:5: error: '{source[4:-1]}' fails on every input of length 1..3: {failed}\n"
        f"    {source}\n"
        "        ^~~~~~~~~~\n"
        "hint: the interpreter raises an error here for every input, so there is nothing to "
        'compile; it fails where tokens = "1" (a string); tokens gives each token as a string: '
        "tokens_int (or tokens_float) reads them as numbers\n"
    )
    # letters are no numbers' text: no such hint
    code, _, err = run(capsys, *argv[:3], "abc", *argv[4:], "-o", str(tmp_path / "x.safetensors"))
    assert code == 1 and 'where tokens = "a" (a string)\n' in err

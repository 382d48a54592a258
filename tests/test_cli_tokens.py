"""How the command line reads tokens (--input, --vocab): JSON lists, text split into
characters, and the refusals of text that was meant otherwise (a Python set, separators, a comma
between words, curly quotes, bytes that are not UTF-8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rasp.tools.arguments import UsageError, check_vocab, parse_tokens
from tests.cli_helpers import run

REVERSE = """\
flip = select(indices, length - indices - 1, ==);
reverse = aggregate(flip, tokens);
"""


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("hello", ["h", "e", "l", "l", "o"]),
        ('["the","cat"]', ["the", "cat"]),
        ("[3, 1, 2]", [3, 1, 2]),
        ("[1.5, true]", [1.5, True]),
        (" [1] ", [1]),
        ("a b", ["a", " ", "b"]),
        ("", []),
        # bracket strings (Dyck inputs) that are not a non-empty JSON list of atoms: characters
        ("[()]", ["[", "(", ")", "]"]),
        ("[(])", ["[", "(", "]", ")"]),
        ("[]", ["[", "]"]),
        ("[[]]", ["[", "[", "]", "]"]),
    ],
)
def test_parse_tokens(text: str, tokens: list[Any]) -> None:
    assert parse_tokens(text) == tokens


@pytest.mark.parametrize("text", ["{1,2}", "{1, 2, 3}", '("a", "b")', " {'x','y'} "])
def test_a_python_set_or_tuple_is_no_character_list(text: str) -> None:
    # tracr's `vocab={1, 2}` written on the command line was five tokens: {, 1, ",", 2, }
    with pytest.raises(UsageError, match="looks like a Python (set|tuple); write the tokens"):
        parse_tokens(text)
    assert parse_tokens("{}()") == ["{", "}", "(", ")"]  # Dyck brackets are characters still
    assert parse_tokens("(,)") == ["(", ",", ")"]


def test_separators_read_as_tokens_are_explained(capsys: pytest.CaptureFixture[str]) -> None:
    # a comma between words is refused before (check_vocab_commas); spaces reach check_vocab
    code, _, err = run(capsys, "compile", "p.rasp", "--vocab", "a b c", "--max-len", "3", "-o", "m")
    assert code == 2
    assert (
        "argument --vocab 'a b c': lists the token \" \" twice: text that is not a JSON list" in err
    )
    assert "or a JSON list such as '[1, 2, 3]'" in err
    code, _, err = run(capsys, "compile", "p.rasp", "--vocab", "a,b,c", "--max-len", "3", "-o", "m")
    assert code == 2
    assert 'write the tokens as a JSON list, --vocab \'["a","b","c"]\'' in err


@pytest.mark.parametrize("command", ["compile", "verify"])
def test_a_vocab_with_a_space_between_characters_is_refused(
    capsys: pytest.CaptureFixture[str], program: Any, tmp_path: Path, command: str
) -> None:
    # `--vocab 'a b'` compiled the vocabulary a, " ", b without a word: a model that accepts a
    # space no input meant (`rasp show` then says `vocab: a " " b`)
    out_path = tmp_path / "m.safetensors"
    more = ["-o", str(out_path)] if command == "compile" else []
    args = [command, program(REVERSE), "--max-len", "3", *more]
    code, out, err = run(capsys, *args, "--vocab", "a b")
    assert (code, out) == (2, "")
    assert (
        "argument --vocab 'a b': 'a b' is text, split into characters, the space too: a space "
        """separates no tokens; write the tokens as a JSON list, --vocab '["a","b"]' (or, to keep """
        """the space as a token, --vocab '["a"," ","b"]')"""
    ) in err
    assert not out_path.exists()
    # said as a JSON list, or at either end of the text, a space is a token as asked
    for vocab in ('["a", " ", "b"]', "ab "):
        assert run(capsys, *args, "--vocab", vocab)[0] == 0


@pytest.mark.parametrize("command", ["run", "compile"])
def test_tokens_that_are_not_text_are_refused(
    capsys: pytest.CaptureFixture[str], program: Any, tmp_path: Path, command: str
) -> None:
    # A shell argument in Latin-1 (byte 0xff) reaches Python as the surrogate "\udcff": as a
    # token it printed back as the raw byte (invalid UTF-8 in --json), or, under a strict UTF-8
    # stdout, was an internal UnicodeEncodeError; compile wrote it into the model's vocabulary.
    # JSON's "\udcff" alone is no character either.
    flag = "--input" if command == "run" else "--vocab"
    more = [] if command == "run" else ["--max-len", "3", "-o", str(tmp_path / "m.safetensors")]
    code, out, err = run(capsys, command, program(REVERSE), flag, "a\udcff", *more)
    assert (code, out) == (2, "")
    assert f"argument {flag}: byte 0xff (character 2) is not UTF-8 text" in err
    code, out, err = run(capsys, command, program(REVERSE), flag, '["a", "\\udcff"]', *more)
    assert (code, out) == (2, "")
    assert 'the token "\\udcff"' in err and "holds a lone surrogate" in err
    assert not (tmp_path / "m.safetensors").exists()
    # a surrogate pair in JSON is the one character it spells
    assert parse_tokens('["\\ud83d\\ude00"]') == ["\U0001f600"]


def test_a_json_list_in_curly_quotes_asks_for_straight_ones() -> None:
    # pasted from a document: "write strings in double quotes" read as already done
    with pytest.raises(UsageError, match="write strings in straight double quotes"):
        parse_tokens("[\u201ca\u201d, \u201cb\u201d]")
    with pytest.raises(UsageError, match="write strings in double quotes"):
        parse_tokens("[a, b]")


def test_a_vocab_written_with_separators_says_each_character_is_a_token() -> None:
    # `--vocab "a, b, c"`: the repeated ", " were refused without saying why they were tokens
    with pytest.raises(UsageError, match="each character is a token, separators too: write abc"):
        check_vocab(parse_tokens("a, b, c"))
    with pytest.raises(UsageError) as info:
        check_vocab(parse_tokens("aba"))  # a plain repeat keeps its short message
    assert str(info.value) == "lists the token a twice; list each token once"

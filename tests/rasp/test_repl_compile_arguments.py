"""The REPL's `:compile` arguments: a vocabulary or input given quoted, as a list, with commas or
spaces, repeated or past Python's digit limit, is read (or refused) as the CLI reads it."""

from __future__ import annotations

import sys

import pytest

from rasp.tools.arguments import parse_tokens
from rasp.tools.repl import ReplSession
from tests.rasp.test_repl_compiled import _compiled

pytest.importorskip("compiler")
pytest.importorskip("transformer")


def test_a_quoted_vocab_or_input_is_its_characters() -> None:
    # :help writes VOCAB "abc", as RASP writes strings: the quotes are not tokens
    session = _compiled(':compile r "hel" 5')
    state = session.compiled.current
    assert state is not None and state.vocab == ("h", "e", "l") and state.max_len == 5
    assert session.feed(':residual "hel"').splitlines()[0] == (
        'r("hel") in the compiled model and in the interpreter'
    )
    # a space at the end is a token (between two characters it is refused, as --vocab 'a b' is)
    assert session.feed(':compile r "ab " 3').endswith('vocab "ab ", max_len 3')
    assert session.feed(':compile r "" 3') == "error: VOCAB is empty; give at least one token"
    assert session.feed(':residual ""') == "error: INPUT is empty; give at least one token"


def test_an_unterminated_string_is_refused() -> None:
    # `:compile r "abc 5` compiled the vocab `"`, a, b, c (and `abc"` likewise): a double quote
    # outside a whole string is refused in the language's words for it
    session = _compiled(":compile r hel 5")
    tail = 'a string ends with " and cannot contain " (a double-quote token goes in a JSON list: '
    for command, what, text in [
        (':compile r "abc 5', "VOCAB", '"abc 5'),
        (':compile r "a b 5', "VOCAB", '"a b 5'),
        (':compile r abc" 5', "VOCAB", 'abc"'),
        (':residual "ab', "INPUT", '"ab'),
        (':residual a"b', "INPUT", 'a"b'),
        (':draw "ab -o x.png', "INPUT", '"ab'),
    ]:
        printed = session.feed(command)
        assert printed.startswith(f"error: {what}: unterminated string in {text!r}; {tail}")
    state = session.compiled.current
    assert state is not None and state.vocab == ("h", "e", "l")  # the refusals changed nothing
    # a double-quote token is written in a JSON list, and shown so (it was `""a"`)
    assert session.feed(':compile r ["\\"", "a"] 3').endswith('vocab ["\\"", "a"], max_len 3')
    assert session.feed(':residual ["\\"", "a"]').startswith('r(["\\"", "a"]) in the compiled')


def test_a_repeated_vocab_token_is_refused_as_the_cli_refuses_it() -> None:
    # `:compile r aab` compiled the vocab "ab" without a word, where `rasp compile --vocab aab`
    # refuses it: the REPL now says what the CLI says
    from rasp.tools.arguments import UsageError, check_vocab

    session = _compiled(":compile r hel 5")
    for vocab, token in [("aab", "a"), ('"aba"', "a"), ("[1, 2, 1]", "1"), ('["1", "1"]', '"1"')]:
        with pytest.raises(UsageError) as cli:
            check_vocab(parse_tokens(vocab.strip('"')))
        assert session.feed(f":compile r {vocab} 5") == f"error: VOCAB: {cli.value}"
        assert f"the token {token} twice" in str(cli.value)
    state = session.compiled.current
    assert state is not None and state.vocab == ("h", "e", "l")  # the refusals changed nothing
    # 1, 1.0 and true are three tokens; the default vocab is the example's distinct tokens
    assert session.feed(":compile r [1, 1.0, true] 3").endswith("vocab [1, 1.0, true], max_len 3")
    # ... and says so: `:compile depth` over "helo" gave a model of no head, unremarked
    assert session.feed(":compile r").endswith(
        'vocab "helo" (the running example\'s tokens), max_len 8'
    )


def test_a_number_past_pythons_digit_limit_is_refused() -> None:
    # int() of 5,000 digits raised ValueError: an internal error that ended the session
    nines = "9" * 5000
    session = _compiled(":compile r hel 5")
    limit = f"more than Python reads ({sys.get_int_max_str_digits():,})"
    assert session.feed(f":verify {nines}") == f"error: K has 5,000 digits, {limit}"
    assert session.feed(f":compile r abc {nines}") == f"error: MAX_LEN has 5,000 digits, {limit}"
    assert session.feed(f":compile r abc 4 {nines}") == (
        f"error: MAX_PARAMS has 5,000 digits, {limit}"
    )
    assert session.feed("1 + 1;").endswith("2")  # the session goes on


def test_a_comma_between_vocab_words_is_refused_as_the_cli_refuses_it() -> None:
    session = _compiled(":compile r hel 5")
    for vocab in ("ab,c", '"ab,c"'):
        assert session.feed(f":compile r {vocab} 5") == (
            "error: VOCAB: 'ab,c' is text, split into characters, the comma too: a comma "
            'separates no tokens; write the tokens as a JSON list, VOCAB ["ab","c"] (or, to '
            'keep the comma as a token, VOCAB ["a","b",",","c"])'
        )
    state = session.compiled.current
    assert state is not None and state.vocab == ("h", "e", "l")  # the refusals changed nothing
    assert session.feed(':compile r ["ab", "c"] 3').endswith('vocab ["ab", "c"], max_len 3')


def test_a_space_between_vocab_characters_is_refused_as_the_cli_refuses_it() -> None:
    session = _compiled(":compile r hel 5")
    assert session.feed(':compile r "a b" 5') == (
        "error: VOCAB: 'a b' is text, split into characters, the space too: a space separates "
        'no tokens; write the tokens as a JSON list, VOCAB ["a","b"] (or, to keep the space as '
        'a token, VOCAB ["a"," ","b"])'
    )
    assert session.feed(':compile r ["a", " "] 3').endswith('vocab "a ", max_len 3')


def test_a_list_or_dict_token_of_the_running_example_is_no_default_vocab() -> None:
    # RASP takes `set example [[1], [2]]`; :compile's default VOCAB from it was an internal
    # error (unhashable type: 'list') that ended the session
    session = ReplSession()
    session.feed("t = tokens;")
    for example, token in [("[[1], [2]]", "[1] is a list"), ('[{"a": 1}]', "{'a': 1} is a dict")]:
        session.feed(f"set example {example}")
        assert session.feed(":compile t") == (
            f"error: the running example's token {token}, which no model takes (tokens are "
            "strings, numbers or booleans); give VOCAB: :compile t VOCAB"
        )
    assert session.compiled.current is None
    assert session.feed(":compile t ab 2").endswith('vocab "ab", max_len 2')  # it goes on

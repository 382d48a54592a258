"""What the REPL shows and accepts as values: unnamed s-ops in lists shown by their expression,
s-ops, selectors and functions refused as example tokens, numbers past Python's digit limit, deep
and shared lists."""

from __future__ import annotations

import pytest

from rasp.tools.repl import ReplSession


def test_an_unnamed_sop_in_a_list_is_shown_by_its_expression() -> None:
    # (once `MapSOp#11`, a class name and an id; the original names it after its expression)
    session = ReplSession()
    session.feed("examples off")
    out = session.feed(
        'x = [tokens == "a", select(indices, indices, ==), '
        "aggregate(select(indices, length - indices - 1, ==), tokens)];"
    )
    assert out.splitlines()[1:4] == [
        '\t\t     s-op: (tokens == "a")',
        "\t\t     selector: select(indices, indices, ==)",
        "\t\t     s-op: aggregate(select(indices, length - in...",
    ]
    # a function's result is named after the call, not after the expression in its body, as the
    # original names it: the arguments by value, joined by " , "
    session.feed("def inc(a) { return a + 1; }")
    out = session.feed('y = [inc(indices), count(tokens, "a")];')
    assert out.splitlines()[1:3] == [
        "\t\t     s-op: inc(indices)",
        '\t\t     s-op: count(tokens , "a")',
    ]
    session.feed('def pick(s, v) { return s == v; } w = "b";')
    out = session.feed("z = [pick(tokens, w), pick(indices, [1, 2]), pick(indices, range(9))];")
    assert out.splitlines()[1:4] == [
        '\t\t     s-op: pick(tokens , "b")',
        "\t\t     s-op: pick(indices , [1, 2])",
        "\t\t     s-op: pick(indices , (list))",
    ]


def test_an_sop_in_a_list_or_dict_must_run_on_the_example() -> None:
    # The display evaluates it; a failure there was an unlocated "error: ..." and bound the name.
    session = ReplSession()
    for text in ('b = {"k": tokens_int * 2};', "b = [[1, tokens_int]];"):
        out = session.feed(text).splitlines()
        assert out[0].startswith("<repl>:1:1: error: cannot read the input as tokens_int")
        assert "b" not in session.interpreter.names()
    assert session.feed('b = [[indices], {"n": length}];').startswith("     list: b =  [")


def test_an_applied_selector_is_refused_as_an_operand_or_example() -> None:
    # `w and w` was "internal error: ValueError: The truth value of an array ... is ambiguous"
    session = ReplSession()
    session.feed('w = select(indices, indices, <)("ab");')
    out = session.feed("w and w;").splitlines()
    assert out[0] == (
        "<repl>:1:1: error: Cannot apply and to evaluated selector: {0: [0, 0], 1: [1, 0]}"
    )
    assert out[-1].startswith("hint: an applied selector is a value for display")
    out = session.feed("set example [w]").splitlines()
    assert out[0].startswith("<repl>:1:13: error: an example cannot hold an evaluated selector")
    assert session.settings.seq_example == "hello"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("set example [indices]", "<repl>:1:13: error: an example cannot hold an s-op: indices"),
        ("set example [1, [f]]", "<repl>:1:13: error: an example cannot hold a function: "),
        ("draw(indices, [s]);", "<repl>:1:1: error: an example cannot hold a selector: s"),
        ("indices([indices]);", "<repl>:1:1: error: an input token cannot be an s-op: indices"),
        ('s([{"k": f}]);', "<repl>:1:1: error: an input token cannot be a function: "),
    ],
)
def test_an_sop_selector_or_function_is_no_input_token(text: str, message: str) -> None:
    # they were taken as tokens shown by our classes' reprs (IndicesSOp(name='indices'), a
    # RaspFunction with its AST), and :compile on such an example was an internal error that
    # ended the session (Object of type RaspFunction is not JSON serializable)
    session = ReplSession()
    session.feed("def f(a) { return a; }")
    session.feed("s = select(indices, indices, <);")
    out = session.feed(text).splitlines()
    assert out[0].startswith(message)
    assert out[-1] == "hint: an input token is a string, number or bool, or a list or dict of them"
    assert session.settings.seq_example == "hello"
    assert not any(word in "\n".join(out) for word in ("SOp(", "RaspFunction", "Select("))


def test_a_dict_examples_values_are_no_tokens() -> None:
    # its tokens are its keys, as in the original, so its values may be anything (4ccf671
    # refused set example {"a": tokens}); they show by name, never by our classes' reprs
    session = ReplSession()
    session.feed("def f(a) { return a; }")
    assert session.feed('set example {"a": tokens, "b": f, "c": [indices]}') == ""
    out = session.feed("tokens;")
    assert "tokens({'a': tokens, 'b': function f(a), 'c': [indices]}) = [a, b, c]" in out
    assert "SOp(" not in out and "RaspFunction(" not in out
    assert "error" not in session.feed('draw(tokens, {"x": f});')
    assert session.feed('tokens({"a": indices});') == "\t =  [a] (strings)"
    # a dict as a token is shown whole, values too: still refused
    out = session.feed('set example [{"k": f}]').splitlines()
    assert out[0].startswith("<repl>:1:13: error: an example cannot hold a function: ")
    assert "tokens({'a': tokens" in session.feed("tokens;")


def test_a_loop_doubling_a_shared_list_is_checked_in_linear_time() -> None:
    # each list was walked once per reference: 40 rounds of `l = [l, l];` never finished
    session = ReplSession()
    session.feed("l = [1];")
    assert session.feed("for i in range(40) { l = [l, indices]; l = [l, l]; }") == ""
    assert session.feed("len(l);") == "    value: out =  2"


def test_an_int_past_pythons_digit_limit_is_shown_and_the_session_goes_on() -> None:
    """`2 ^ 20000` has 6,021 digits, more than Python's `str` converts by default: the REPL ended
    with `internal error: ValueError` on showing it."""
    import decimal

    session = ReplSession()
    big = str(decimal.Decimal(2**20000))
    assert session.feed("x = 2 ^ 20000;") == f"    value: x =  {big}"
    assert big in session.feed("l = [2 ^ 20000];")
    assert big in session.feed("y = indices + 2 ^ 20000;")
    session.feed("full seq display on")
    assert big in session.feed("y;")
    assert session.feed("z = 3;") == "    value: z =  3"


def test_an_input_token_past_pythons_digit_limit_is_read_as_text_or_refused_located() -> None:
    """A token of 6,021 digits: tokens_str read it with `str` (ValueError), and the error for
    tokens_float, which writes the token, raised ValueError again: an internal error."""
    import decimal

    session = ReplSession()
    big = str(decimal.Decimal(2**20000))
    session.feed("set example [2 ^ 20000, 1]")
    assert f"[{big}, 1] (strings)" in session.feed("tokens_str;")
    printed = session.feed("tokens_float;")
    assert printed.startswith("<repl>:1:1: error: cannot read the input as tokens_float: float() ")
    assert "the token a 6021-digit number at position 0" in printed


def test_a_list_5000_deep_is_shown_not_an_internal_error() -> None:
    # (shown on rasp.deep_stack's thread, as it was built: on the caller's stack the display
    # raised a RecursionError, a bug of ours to the user)
    session = ReplSession()
    out = session.feed("x = " + "[" * 5000 + "1" + "]" * 5000 + ";")
    assert out.startswith("     list: x =  [") and "error" not in out
    assert session.interpreter.get("x") is not None

"""`rasp.nodes.is_one_term`: whether a label reads as one term inside other text (a name, a call,
an index) or is an operation that needs brackets there. A pattern of `name(.*)` took
`f(x) + g(y)` for one call, so an unnamed s-op of that text was shown unbracketed
(`round(indices) + round(length)("hello")` in the REPL)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.named_text import MessageNames
from rasp.nodes import is_one_term
from rasp.tools.repl import ReplSession

# (text, whether it is one term) of generated expressions
Text = tuple[str, bool]

_NAMES = st.sampled_from(["x", "v2", "_map_17", "tokens", "lib.make_sort", "d"])
_LITERALS = st.sampled_from(["1", "2.5", '"a"', '")"', "'(['", '"\\")"', '"]"', "True"])


def _term(inner: st.SearchStrategy[Text]) -> st.SearchStrategy[Text]:
    """A name with calls, indexes and attributes after it: one term, whatever its arguments."""
    call = st.lists(inner, max_size=3).map(lambda args: "(" + ", ".join(a for a, _ in args) + ")")
    index = inner.map(lambda a: f"[{a[0]}]")
    attribute = _NAMES.map(lambda n: f".{n}")
    postfix = st.lists(st.one_of(call, index, attribute), max_size=3).map("".join)
    return st.tuples(_NAMES, postfix).map(lambda t: (t[0] + t[1], True))


def _binary(inner: st.SearchStrategy[Text]) -> st.SearchStrategy[Text]:
    """Two operands and an operator, each operand often a call (`f(x) + g(y)`)."""
    side = st.one_of(_term(inner), inner)
    operator = st.sampled_from([" + ", " - ", " == ", " and ", "<", "*", " in "])
    return st.tuples(side, operator, side).map(lambda t: (t[0][0] + t[1] + t[2][0], False))


def _operation(inner: st.SearchStrategy[Text]) -> st.SearchStrategy[Text]:
    """Text that is not one term: an operation, a bracketed group."""
    ternary = st.tuples(inner, inner, inner).map(lambda t: f"{t[0][0]} if {t[1][0]} else {t[2][0]}")
    unary = st.one_of(
        inner.map(lambda a: f"not {a[0]}"),
        inner.map(lambda a: f"-{a[0]}"),
        inner.map(lambda a: f"({a[0]})"),
        ternary,
    ).map(lambda text: (text, False))
    return st.one_of(_binary(inner), unary)


def _leaf() -> st.SearchStrategy[Text]:
    return st.one_of(_NAMES.map(lambda n: (n, True)), _LITERALS.map(lambda t: (t, False)))


_EXPRESSIONS: st.SearchStrategy[Text] = st.recursive(
    _leaf(), lambda inner: st.one_of(_term(inner), _operation(inner)), max_leaves=12
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_term(_EXPRESSIONS), _binary(_EXPRESSIONS), _EXPRESSIONS))
def test_generated_expressions(expression: Text) -> None:
    text, one_term = expression
    assert is_one_term(text) == one_term, text


def test_two_calls_joined_by_an_operator_are_not_one_term() -> None:
    for text in ("f(x) + g(y)", "round(v2) < round(v3)", 'f(")") + g(y)', "d[x] - d[y]"):
        assert not is_one_term(text), text
    for text in ("f(x)[0]", "d[x][y]", 'f(")", "(")', "lib.make_sort(x).y", "f(g(x), h(y))"):
        assert is_one_term(text), text
    for text in ("f(x", "f(x]", 'f(")', "f(x))"):  # (cut or wrong: bracketed, to be safe)
        assert not is_one_term(text), text


def test_a_state_label_of_two_calls_is_bracketed() -> None:
    texts = {"_map_9": "round(v2) + round(v3)"}
    names = MessageNames(lambda label: None, texts.get)
    assert names.inline("query (_map_9=0)") == "query ((round(v2) + round(v3))=0)"


def test_the_repl_brackets_an_unnamed_sum_of_calls() -> None:
    session = ReplSession()
    shown = session.feed("l = [round(indices) + round(length)];")
    assert "s-op: (round(indices) + round(length))\n" in shown + "\n"
    assert '(round(indices) + round(length))("hello") = [5, 6, 7, 8, 9]' in shown

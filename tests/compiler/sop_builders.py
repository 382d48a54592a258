"""Small RASP programs built directly with `rasp.sops` constructors (no parser needed)."""

from __future__ import annotations

from rasp import sops as S

EQ, LT, LEQ = S.Comparison.EQ, S.Comparison.LT, S.Comparison.LEQ


def tokens() -> S.TokensSOp:
    return S.TokensSOp(name="tokens")


def mapped(fn, *inputs: S.SOp, name: str | None = None, text: str = "map") -> S.MapSOp:
    return S.MapSOp(fn=fn, inputs=tuple(inputs), text=text, name=name)


def reverse() -> S.SOp:
    indices, length = S.IndicesSOp(name="indices"), S.LengthSOp(name="length")
    opp = mapped(lambda n, i: n - i - 1, length, indices, name="opp", text="length - indices - 1")
    flip = S.Select(keys=indices, queries=opp, comparison=EQ, name="flip")
    return S.AggregateSOp(selector=flip, sop=tokens(), default="", name="reverse")


def hist() -> S.SOp:
    t = tokens()
    return S.SelectorWidthSOp(selector=S.Select(keys=t, queries=t, comparison=EQ), name="hist")


def sort_unique() -> S.SOp:
    """The paper's sort for distinct keys: 2 attention layers."""
    t, indices = tokens(), S.IndicesSOp(name="indices")
    smaller = S.Select(keys=t, queries=t, comparison=LT, name="smaller")
    target = S.SelectorWidthSOp(selector=smaller, name="target_pos")
    return S.AggregateSOp(
        selector=S.Select(keys=target, queries=indices, comparison=EQ),
        sop=t,
        default="",
        name="sort",
    )


def sort_stable() -> S.SOp:
    """The library's sort: ties broken by position (a disjunction over two query s-ops)."""
    t, indices = tokens(), S.IndicesSOp(name="indices")
    earlier = S.SelectOr(
        left=S.Select(keys=t, queries=t, comparison=LT),
        right=S.SelectAnd(
            left=S.Select(keys=t, queries=t, comparison=EQ),
            right=S.Select(keys=indices, queries=indices, comparison=LT),
        ),
    )
    target = S.SelectorWidthSOp(selector=earlier, name="target_pos")
    return S.AggregateSOp(
        selector=S.Select(keys=target, queries=indices, comparison=EQ),
        sop=t,
        default="",
        name="sort",
    )


def frac_prevs(letter: str = "a") -> S.SOp:
    t, indices = tokens(), S.IndicesSOp(name="indices")
    is_letter = mapped(
        lambda x: int(x == letter),
        t,
        name="is_a",
        text=f"indicator(tokens == {letter!r})",
    )
    prevs = S.Select(keys=indices, queries=indices, comparison=LEQ)
    return S.AggregateSOp(selector=prevs, sop=is_letter, default=0, name="frac_prevs")


def dyck1() -> S.SOp:
    t, indices = tokens(), S.IndicesSOp(name="indices")
    up_to_self = S.Select(keys=indices, queries=indices, comparison=LEQ, name="up_to_self")
    opens = S.AggregateSOp(selector=up_to_self, sop=mapped(lambda x: int(x == "("), t), default=0)
    closes = S.AggregateSOp(selector=up_to_self, sop=mapped(lambda x: int(x == ")"), t), default=0)
    n_opens = mapped(lambda i, f: (i + 1) * f, indices, opens, name="n_opens")
    n_closes = mapped(lambda i, f: (i + 1) * f, indices, closes, name="n_closes")
    balance = mapped(lambda a, b: a - b, n_opens, n_closes, name="balance")
    bad = S.AggregateSOp(
        selector=up_to_self,
        sop=mapped(lambda b: int(b < 0), balance),
        default=0,
        name="prev_imbalances",
    )
    # As the paper writes it: `"F" if prev_imbalances > 0 else ("T" if balance == 0 else "P")`.
    broken = mapped(lambda p: p > 0, bad, text="prev_imbalances > 0")
    open_or_balanced = mapped(
        lambda b: "T" if b == 0 else "P", balance, text='"T" if balance == 0 else "P"'
    )
    return mapped(lambda f, tp: "F" if f else tp, broken, open_or_balanced, name="dyck1")


def means_of_length() -> S.SOp:
    """Means of s-ops that hold one whole number per length: each mean is that number."""
    t, indices, length = tokens(), S.IndicesSOp(name="indices"), S.LengthSOp(name="length")
    same = S.AggregateSOp(
        selector=S.Select(keys=t, queries=t, comparison=EQ), sop=length, name="same_len"
    )
    double = mapped(lambda n: 2 * n, length, name="double", text="2 * length")
    prefix = S.AggregateSOp(
        selector=S.Select(keys=indices, queries=indices, comparison=LEQ), sop=double, name="prefix"
    )
    return mapped(lambda a, b: a + b, same, prefix, name="sum", text="same_len + prefix")


def widths_of_one_key() -> S.SOp:
    """Widths of selectors that pick at most one key (an `and` with a select of index 0, a
    select of the previous index), and a map of both."""
    t, indices = tokens(), S.IndicesSOp(name="indices")
    first = S.Select(keys=indices, queries=S.ConstSOp(value=0), comparison=EQ)
    a_first = S.SelectorWidthSOp(
        selector=S.SelectAnd(
            left=first, right=S.Select(keys=t, queries=S.ConstSOp(value="a"), comparison=EQ)
        ),
        name="a_first",
    )
    previous = mapped(lambda i: i - 1, indices, name="previous", text="indices - 1")
    prev_same = S.SelectorWidthSOp(
        selector=S.SelectAnd(
            left=S.Select(keys=indices, queries=previous, comparison=EQ),
            right=S.Select(keys=t, queries=t, comparison=EQ),
        ),
        name="prev_same",
    )
    return mapped(lambda a, b: a + b, a_first, prev_same, name="both", text="a_first + prev_same")

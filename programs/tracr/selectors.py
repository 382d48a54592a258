"""tracr-style programs that combine selectors (`&`, `|`, `~`, which tracr's own compiler refuses
when the two selects read different s-ops) and use predicates that are not comparisons.
Outputs for `rasp compile selectors.py:NAME --vocab abc ...`.

    window_size     positions within 1 of mine (an interval predicate)     "abcd" -> [2, 3, 3, 2]
    window_a_share  fraction of "a" in that window (numerical mean)        "aab" -> [1.0, 0.667, 0.5]
    a_or_b_seen     earlier-or-here "a" or "b" tokens                      "cab" -> [0, 1, 2]
    not_me          every other position                                   "abc" -> [2, 2, 2]
    here_or_same    positions before me, or holding my token               "aba" -> [2, 2, 3]
    never           a selector that selects nothing: the default           "ab" -> [None, None]
    odd_from_first  the first token at odd positions, else None            "abc" -> [None, a, None]
"""

from rasp import tracr as rasp

_window = rasp.Select(rasp.indices, rasp.indices, lambda k, q: abs(k - q) <= 1)
window_size = rasp.SelectorWidth(_window).named("window_size")
window_a_share = rasp.numerical(
    rasp.Aggregate(_window, rasp.numerical(rasp.tokens == "a"), default=0)
).named("window_a_share")

_upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
_is_a = rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "a")
_is_b = rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "b")
a_or_b_seen = rasp.SelectorWidth((_is_a | _is_b) & _upto).named("a_or_b_seen")

not_me = rasp.SelectorWidth(~rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)).named(
    "not_me"
)

_before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
_same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
here_or_same = rasp.SelectorWidth(rasp.SelectorOr(_before, _same)).named("here_or_same")

never = rasp.Aggregate(
    rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.FALSE), rasp.tokens
).named("never")

odd_from_first = rasp.Aggregate(
    rasp.Select(rasp.Full(0), rasp.indices, lambda k, q: q % 2 == 1 and k == 0)
    & rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == 0),
    rasp.tokens,
).named("odd_from_first")

"""tracr-style programs over strings: Python lambdas as maps and as select predicates, None where
nothing is selected, selector combinations. Each name is an output for `rasp compile text.py:NAME`.

    shift_right     the previous token (None at the start)         "abc" -> [None, a, b]
    bigram          previous token + this token                      "abc" -> [None, ab, bc]
    palindrome      does the input read the same backwards           "aba" -> [True, True, True]
    first_token     the first token, everywhere                      "cab" -> [c, c, c]
    vowel_share     fraction of vowels so far (numerical mean)        "abe" -> [True, 0.5, 0.667]
    same_as_first   is this token the first one                       "aba" -> [True, False, True]
    repeats_before  how many earlier positions hold my token          "abaa" -> [0, 0, 1, 2]
    others_before   how many earlier positions hold another token     "aab" -> [0, 0, 2]
    last_token      the last token, everywhere                        "abc" -> [c, c, c]
    upper_if_after_a  the token upper-cased when an "a" precedes it   "bab" -> [b, a, B]
"""

from rasp import tracr as rasp

shift_right = rasp.Aggregate(
    rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), rasp.tokens
).named("shift_right")

bigram = rasp.SequenceMap(lambda prev, tok: prev + tok, shift_right, rasp.tokens).named("bigram")

_length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
_mirror = rasp.SequenceMap(lambda n, i: n - 1 - i, _length, rasp.indices).named("mirror")
_backwards = rasp.Aggregate(
    rasp.Select(rasp.indices, _mirror, rasp.Comparison.EQ), rasp.tokens
).named("backwards")
_differs = rasp.numerical(rasp.SequenceMap(lambda a, b: a != b, rasp.tokens, _backwards))
_any_differs = rasp.numerical(
    rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE), _differs, default=0
    )
).named("any_differs")
palindrome = rasp.Map(lambda share: share == 0, _any_differs).named("palindrome")

first_token = rasp.Aggregate(
    rasp.Select(rasp.indices, rasp.Full(0), rasp.Comparison.EQ), rasp.tokens
).named("first_token")

vowel_share = rasp.numerical(
    rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
        rasp.numerical(rasp.Map(lambda t: t in "aeiou", rasp.tokens)),
        default=0,
    )
).named("vowel_share")

same_as_first = rasp.SequenceMap(lambda t, f: t == f, rasp.tokens, first_token).named(
    "same_as_first"
)

_earlier = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
_same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
repeats_before = rasp.SelectorWidth(_earlier & _same).named("repeats_before")

_other = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.NEQ)
others_before = rasp.SelectorWidth(_earlier & _other).named("others_before")

last_token = rasp.Aggregate(
    rasp.Select(rasp.indices, _length - 1, rasp.Comparison.EQ), rasp.tokens
).named("last_token")

_seen_a = rasp.SelectorWidth(
    rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k == "a") & _earlier
).named("seen_a")
upper_if_after_a = rasp.SequenceMap(
    lambda tok, n: tok.upper() if n > 0 else tok, rasp.tokens, _seen_a
).named("upper_if_after_a")

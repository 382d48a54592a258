"""tracr's library of programs (`tracr.compiler.lib`), written here against `rasp.tracr`.

The names, arguments and values are those of tracr's library, so a program that imports it
(`from tracr.compiler import lib`) runs unchanged under `--tracr-compat`. The programs compile
exactly with `compiler.compile_sop` (tests/from_tracr/), including the ones tracr's own compiler refuses
or gets wrong at larger lengths.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rasp import tracr as rasp


def make_length() -> rasp.SOp:
    """The input length at every position: the width of a selector that selects everything.

    make_length()("abcd") == [4, 4, 4, 4]
    """
    everything = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)
    return rasp.SelectorWidth(everything.named("all_true_selector")).named("length")


length = make_length()


def make_reverse(sop: rasp.SOp) -> rasp.SOp:
    """`sop` read backwards: position i takes the value at length - 1 - i.

    make_reverse(rasp.tokens)("Hello") == ["o", "l", "l", "e", "H"]
    """
    mirrored = (length - rasp.indices).named("opp_idx")
    mirrored = (mirrored - 1).named("opp_idx-1")
    flip = rasp.Select(rasp.indices, mirrored, rasp.Comparison.EQ).named("reverse_selector")
    return rasp.Aggregate(flip, sop).named("reverse")


def make_hist() -> rasp.SOp:
    """How many times each position's token occurs in the input.

    make_hist()("abac") == [2, 1, 2, 1]
    """
    same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ).named("same_tok")
    return rasp.SelectorWidth(same).named("hist")


def make_frac_prevs(bools: rasp.SOp) -> rasp.SOp:
    """The fraction of positions up to here where `bools` holds (a numerical mean).

    make_frac_prevs(rasp.tokens == "x")("xax") == [True, 0.5, 0.666...]  (one value: itself)
    """
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    mean = rasp.Aggregate(upto, rasp.numerical(bools), default=0)
    return rasp.numerical(mean).named("frac_prevs")


def make_pair_balance(sop: rasp.SOp, open_token: str, close_token: str) -> rasp.SOp:
    """The fraction of open tokens minus the fraction of close tokens, up to each position.

    make_pair_balance(rasp.tokens, "(", ")")("(()") == [1.0, 1.0, 0.333...]
    """
    opens = rasp.numerical(sop == open_token).named("bools_open")
    opens = rasp.numerical(make_frac_prevs(opens)).named("opens")
    closes = rasp.numerical(sop == close_token).named("bools_close")
    closes = rasp.numerical(make_frac_prevs(closes)).named("closes")
    balance = rasp.LinearSequenceMap(opens, closes, 1, -1)
    return rasp.numerical(balance).named("pair_balance")


def make_shuffle_dyck(pairs: list[str]) -> rasp.SOp:
    """True at every position iff each bracket pair in `pairs` is balanced in the whole input
    (the pairs may interleave: shuffle-Dyck).

    make_shuffle_dyck(["()", "{}"])("({)}") == [True, True, True, True]
    """
    if not pairs or any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"pairs must be two-character strings such as '()', got {pairs!r}")
    balances = [
        make_pair_balance(rasp.tokens, pair[0], pair[1]).named(f"balance_{pair}") for pair in pairs
    ]
    negative = balances[0] < 0
    for balance in balances[1:]:
        negative = negative | (balance < 0)
    negative = rasp.numerical(rasp.Map(lambda x: x, negative)).named("any_negative")
    everywhere = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
    ever_negative = rasp.Aggregate(everywhere.named("select_all"), negative, default=0)
    ever_negative = rasp.numerical(ever_negative).named("has_neg")
    zero = balances[0] == 0
    for balance in balances[1:]:
        zero = zero & (balance == 0)
    last = rasp.Select(rasp.indices, length - 1, rasp.Comparison.EQ).named("select_last")
    ends_at_zero = rasp.Aggregate(last, zero).named("last_zero")
    never_negative = (~ever_negative).named("not_has_neg")
    return (ends_at_zero & never_negative).named("shuffle_dyck")


def make_shuffle_dyck2() -> rasp.SOp:
    """Shuffle-Dyck over `()` and `{}`."""
    return make_shuffle_dyck(pairs=["()", "{}"]).named("shuffle_dyck2")


def make_sort_unique(vals: rasp.SOp, keys: rasp.SOp) -> rasp.SOp:
    """`vals` ordered by `keys`, which must all differ: each position moves to the number of keys
    smaller than its own.

    make_sort_unique(rasp.tokens, rasp.tokens)([2, 4, 3, 1]) == [1, 2, 3, 4]
    """
    smaller = rasp.Select(keys, keys, rasp.Comparison.LT).named("smaller")
    target = rasp.SelectorWidth(smaller).named("target_pos")
    to_target = rasp.Select(target, rasp.indices, rasp.Comparison.EQ)
    return rasp.Aggregate(to_target, vals).named("sort")


def make_sort(vals: rasp.SOp, keys: rasp.SOp, *, max_seq_len: int, min_key: float) -> rasp.SOp:
    """`vals` ordered by numerical `keys` that may repeat: ties are broken by position, by adding
    `min_key * index / max_seq_len` to each key (tracr's method; keys must differ by more).

    make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1)([2, 4, 1, 2]) == [1, 2, 2, 4]
    """
    unique = rasp.SequenceMap(lambda x, i: x + min_key * i / max_seq_len, keys, rasp.indices)
    return make_sort_unique(vals, unique)


def make_sort_freq(max_seq_len: int) -> rasp.SOp:
    """The tokens ordered by how often they occur, most frequent first (ties in input order).

    make_sort_freq(5)([2, 4, 2, 1]) == [2, 2, 4, 1]
    """
    rarity = -1 * make_hist().named("hist")
    return make_sort(rasp.tokens, rarity, max_seq_len=max_seq_len, min_key=1).named("sort_freq")


def shift_by(offset: int, /, sop: rasp.SOp) -> rasp.SOp:
    """`sop` moved `offset` positions to the right; the first `offset` positions are None."""
    back = rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + offset)
    return rasp.Aggregate(back, sop, default=None).named(f"shift_by({offset})")


def detect_pattern(sop: rasp.SOp, pattern: Sequence[rasp.Value]) -> rasp.SOp:
    """True where `pattern` ends at this position in `sop`; None while it cannot fit yet.

    detect_pattern(rasp.tokens, "abc")("abcabc") == [None, None, True, False, False, True]
    """
    if len(pattern) < 1:
        raise ValueError(f"Length of `pattern` must be at least 1. Got {pattern}")
    # found[i]: the i-th element from the end of the pattern was at position j - i.
    found = []
    for back, element in enumerate(reversed(pattern)):
        here = sop == element
        found.append(shift_by(back, here) if back else here)
    detected = found.pop()
    while found:
        detected = detected & found.pop()
    return detected.named(f"detect_pattern({pattern})")


def make_count_less_freq(n: int) -> rasp.SOp:
    """How many positions hold a token that occurs at most `n` times (the same at every position).

    make_count_less_freq(2)(["a", "a", "a", "b", "b", "c"]) == [3, 3, 3, 3, 3, 3]
    """
    hist = make_hist().named("hist")
    rare = rasp.Select(hist, hist, lambda k, q: k <= n).named("select_less")
    return rasp.SelectorWidth(rare).named("count_less_freq")


def make_count(sop: rasp.SOp, token: rasp.Value) -> rasp.SOp:
    """How many positions of `sop` hold `token` (the same at every position).

    make_count(rasp.tokens, "a")(["c", "a", "b", "c"]) == [1, 1, 1, 1]
    """
    holds = rasp.Select(sop, sop, lambda k, q: k == token)
    return rasp.SelectorWidth(holds).named(f"count_{token}")


def make_nary_sequencemap(f: Callable[..., Any], *sops: rasp.SOp) -> rasp.SOp:
    """`f` applied to the values of several s-ops at each position: the values are first packed
    into tuples by binary SequenceMaps, then `f` is mapped over the tuples (as tracr does)."""
    packed, *rest = sops
    for sop in rest:
        packed = rasp.SequenceMap(
            lambda x, y: (*x, y) if isinstance(x, tuple) else (x, y), packed, sop
        )
    return rasp.Map(lambda args: f(*args), packed)

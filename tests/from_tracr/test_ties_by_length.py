"""Seeded probes of the per-position facts `compiler.ranks.ties_never_averaged` reads
(`ValueFacts.at_position`: a value's values at one position over every length): a sort whose keys
repeat copies where every repeat pairs a position that holds no number at any length, so the
facts must list every value the interpreter gives there. The values come from copies whose source
position depends on the length (`i + 1`, `n - 1 - i`, `i + n % 2`, `i if n <= k`: a default at the
last or first positions, or at some lengths only), copies of copies, copies chosen by a token (one
relation per length), a None a SequenceMap of indices and length puts beside copied tokens,
selectors whose length part decides where they are empty, and causal compiles. Each accepted model
must equal the interpreter on every input up to its max length. Of these seeds 10 take the proof
(the copies of `test_ties_fuzz` read no length); with `at_position` reading the length that
ends at the position only, 14 disagree, skipping that length 5; reading the longest length only,
none: the ties beside numbers at some lengths below catch that one (two of the three cases) and
the other two (one case each). (Seeds searched: 0 to 149 here, 600 of a like generator besides.)"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.tracr import lib

ORDERS = [rasp.Comparison.LT, rasp.Comparison.LEQ, rasp.Comparison.GT, rasp.Comparison.GEQ]
INDEX_FNS = {  # g(i, m): positions that share g may share a key
    "i % m": lambda i, m: i % m,
    "i // m": lambda i, m: i // m,
    "min(i, m)": lambda i, m: min(i, m),
    "abs(i - m)": lambda i, m: abs(i - m),
    "1 if i == 0 else i": lambda i, m: 1 if i == 0 else i,
    "0 if i < m else i": lambda i, m: 0 if i < m else i,
}
SOURCES = {  # h(i, n, k): the position query i copies at length n (none where out of range)
    "i + 1": lambda i, n, k: i + 1,
    "i - k": lambda i, n, k: i - k,
    "i + k": lambda i, n, k: i + k,
    "n - 1 - i": lambda i, n, k: n - 1 - i,
    "i + n % 2": lambda i, n, k: i + n % 2,
    "i - n % k": lambda i, n, k: i - (n % k),
    "n - k + i": lambda i, n, k: n - k + i,
    "i if i < n - k": lambda i, n, k: i if i < n - k else -1,
    "i if i >= k": lambda i, n, k: i if i >= k else -1,
    "k - 1 - i": lambda i, n, k: k - 1 - i,
    "i - k if n > k": lambda i, n, k: i - k if n > k else i,
    "i if n <= k": lambda i, n, k: i if n <= k else -1,
    "0 if i == 0": lambda i, n, k: i if i == 0 else -1,
}
DEFAULTS = [None, None, None, "x", 0, True]
KINDS = ["copy", "copy", "copy", "by token", "copy of copy", "shift", "map none", "and", "and not"]


def _by_length(h: Any, k: int) -> rasp.SOp:
    return rasp.SequenceMap(lambda i, n: h(i, n, k), rasp.indices, lib.make_length())


def _values(rng: random.Random, k: int) -> tuple[str, rasp.SOp]:
    kind, default = rng.choice(KINDS), rng.choice(DEFAULTS)
    if kind == "shift":
        return f"shift_by({k})", lib.shift_by(k, rasp.tokens)
    name = rng.choice(sorted(SOURCES))
    h = SOURCES[name]
    if kind == "map none":  # a positional None beside copied tokens
        none = rasp.SequenceMap(
            lambda i, n: None if not 0 <= h(i, n, k) < n else 1, rasp.indices, lib.make_length()
        )
        own = rasp.Aggregate(
            rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ), rasp.tokens
        )
        return f"map none [{name}, k={k}]", rasp.SequenceMap(lambda x, z: x, own, none)
    if kind in ("and", "and not"):  # the length part decides where the selector is empty
        part = rasp.Select(lib.make_length(), rasp.indices, lambda n, q: 0 <= h(q, n, k) < n)
        own = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.EQ)
        sel = rasp.SelectorAnd(own, part if kind == "and" else rasp.SelectorNot(part))
        return f"{kind} [{name}, k={k}, {default!r}]", rasp.Aggregate(
            sel, rasp.tokens, default=default
        )
    source = rasp.tokens if rng.random() < 0.7 else rasp.Map(lambda t: t * 2 + 1, rasp.tokens)
    copy = rasp.Select(rasp.indices, _by_length(h, k), rasp.Comparison.EQ)
    values = rasp.Aggregate(copy, source, default=default)
    name = f"copy [{name}, k={k}, {default!r}]"
    if kind == "copy of copy":
        again = rng.choice(sorted(SOURCES))
        outer = rasp.Select(rasp.indices, _by_length(SOURCES[again], k), rasp.Comparison.EQ)
        values = rasp.Aggregate(outer, values, default=None)
        name += f" of copy [{again}]"
    if kind == "by token":  # keys chosen by a token: the facts hold one set per length
        by_token = rasp.Select(rasp.indices, rasp.tokens, rasp.Comparison.EQ)
        values = rasp.Aggregate(by_token, values, default=None)
        name += " chosen by token"
    if rng.random() < 0.3:
        values = rasp.Map(lambda x: x + 1 if type(x) is int else x, values)
        name += " + 1"
    return name, values


def _case(seed: int) -> tuple[str, Any, list[int], int, bool]:
    rng = random.Random(seed)
    vocab = rng.sample([0, 1, 2, 3, 5], rng.randint(2, 3))
    m, k, max_len = rng.randint(1, 3), rng.randint(1, 3), rng.randint(3, 6)
    index_name = rng.choice(sorted(INDEX_FNS))
    g = INDEX_FNS[index_name]
    if rng.random() < 0.25:  # keys of the position and the length alone
        index_name = "(n - 1 - i) % (m + 1)"
        keys = rasp.SequenceMap(
            lambda i, n: (n - 1 - i) % (m + 1) * 10, rasp.indices, lib.make_length()
        )
    else:
        keys = rasp.SequenceMap(lambda t, i: t * 10 + g(i, m), rasp.tokens, rasp.indices)
    keys = rasp.numerical(keys)
    values_name, values = _values(rng, k)
    order = rng.choice(ORDERS)
    rank = rasp.SelectorWidth(rasp.Select(keys, keys, order))
    pick = rng.random()
    if pick < 0.6:
        queries, q_name = rasp.indices, "i"
    elif pick < 0.8:
        queries = rasp.SequenceMap(lambda i, n: n - 1 - i, rasp.indices, lib.make_length())
        q_name = "n - 1 - i"
    else:
        queries, q_name = rasp.Map(lambda i: i + 1, rasp.indices), "i + 1"
    program: Any = rasp.Aggregate(rasp.Select(rank, queries, rasp.Comparison.EQ), values)
    if rng.random() < 0.3:
        program = rasp.Map(lambda v: "N" if v is None else str(v), program)
    causal = rng.random() < 0.3
    name = (
        f"seed {seed}: keys {index_name} (m={m}), values {values_name}, {order.name}, "
        f"queries {q_name}, causal={causal}"
    )
    return name, program, vocab, max_len, causal


def _agrees(name: str, program: Any, model: Any, vocab: list, max_len: int) -> int:
    """The model equals the interpreter on every input up to `max_len` where it answers."""
    inputs = [list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]
    answered = 0
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        try:
            want = program(xs)
        except Exception:  # noqa: BLE001 (a mean over None or a string: no value to match)
            continue
        answered += 1
        assert len(got) == len(want) and all(map(_same, got, want)), (name, xs, got, want)
    return answered


def _same(got: Any, want: Any) -> bool:
    """As `rasp verify` takes a tracr value: the int 1 or 0 of one selected True or False too."""
    if type(got) is int and isinstance(want, bool):
        return got == int(want)
    return same_value(got, want)


# 8 to 67: the proof taken (67 causal); 13 to 135: a mutation of `at_position` disagrees
SEEDS = [8, 9, 10, 16, 31, 36, 40, 61, 66, 67]
SEEDS += [13, 18, 19, 41, 56, 58, 76, 79, 82, 85, 90, 103, 109, 114, 119, 123, 134, 135]


@pytest.mark.parametrize("seed", SEEDS)
def test_sorts_beside_values_that_vary_with_length_agree(seed: int) -> None:
    name, program, vocab, max_len, causal = _case(seed)
    try:
        model = compile_sop(program, vocab, max_len, causal=causal)
    except CompileError:
        return  # refused (a mean over mixed kinds, a later key under causal): nothing promised
    _agrees(name, program, model, vocab, max_len)


@pytest.mark.parametrize(
    "source",
    [
        # numbers at lengths 1..3 only: an `at_position` reading the longest length misses them
        pytest.param(lambda i, n: i if n <= 3 else -1, id="i if n <= 3"),
        # None at the last position only: one reading the length ending there sees None alone
        pytest.param(lambda i, n: i + 1, id="i + 1"),
        # numbers at the first and the last position: one skipping the length ending at the
        # position sees None alone at 1
        pytest.param(lambda i, n: i if i in (0, n - 1) else -1, id="first and last"),
    ],
)
def test_a_tie_beside_numbers_at_some_lengths_stays_a_mean(source: Any) -> None:
    """Keys `0 if i < 2 else i` tie at 0 and 1 alone, whose values are copies of the tokens at
    `source(i, n)` (None where none is selected): numbers at both on inputs of some length,
    which tracr averages, so the facts at 0 and 1 must hold those numbers and the sort stays a
    mean (or is refused)."""
    vocab, max_len = [1, 2], 5
    keys = rasp.numerical(rasp.Map(lambda i: 0 if i < 2 else i, rasp.indices))
    copy = rasp.Select(
        rasp.indices, _by_length(lambda i, n, k: source(i, n), 0), rasp.Comparison.EQ
    )
    values = rasp.Aggregate(copy, rasp.tokens)
    rank = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LT))
    program = rasp.Aggregate(rasp.Select(rank, rasp.indices, rasp.Comparison.EQ), values)
    averaged = []  # inputs where tracr averages the tie at 0 and 1
    for xs in ([1, 2], [1, 1, 2], [1, 2, 1, 1]):
        try:
            averaged += [xs] if program(xs)[0] == 1.5 else []
        except ValueError:  # a None in the tie
            pass
    assert averaged
    model = compile_sop(program, vocab, max_len)
    assert _agrees("tie", program, model, vocab, max_len) >= 6


def test_a_causal_sort_whose_ties_only_the_last_query_selects() -> None:
    """Keys `min(i, m)` tie at every position from m on, where the values are None past m; the
    query at N - 1 alone selects the tie, and only at the longest length (a query of index -1
    elsewhere selects nothing). Every head selects earlier keys only, so a causal compile takes
    it, and copies."""
    vocab, max_len, m = [1, 2, 5], 5, 2
    keys = rasp.numerical(rasp.Map(lambda i: min(i, m), rasp.indices))
    up_to_m = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q and q <= m)
    values = rasp.Aggregate(up_to_m, rasp.tokens)
    rank = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LT))
    queries = rasp.Map(lambda i: i if i < m else (m if i == max_len - 1 else -1), rasp.indices)
    program = rasp.Aggregate(rasp.Select(rank, queries, rasp.Comparison.EQ), values)
    with pytest.raises(Exception, match="supported for aggregation"):
        program([1, 2, 5, 1, 2])  # the tie at 2..4: a token and two Nones averaged
    for causal in (False, True):
        model = compile_sop(program, vocab, max_len, causal=causal)
        assert sorted(map(repr, model.metadata["output"]["values"])) == ["1", "2", "5", "None"]
        assert _agrees(f"causal={causal}", program, model, vocab, max_len) == 120

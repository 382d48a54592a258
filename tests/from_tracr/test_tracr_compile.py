"""Every tracr-style program of the corpus compiles into an exact, certified model, at N = 5, 10 and
40 (40 in the slow tier): the model gives tracr's recorded values on every recorded input it
accepts, and the values of the compiled graph (`compiler.resolve` of the lowered program, what
`rasp verify` checks against) on every input up to length 5 (vocabularies of at most 4 tokens) or
on seeded random inputs up to N.

tracr's value and the model's are compared as values: numbers within 1e-6 (a mean of bools that
selects one value is tracr's True and the model's 1, which Python calls equal), None as None.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from functools import cache
from typing import Any

import pytest
from corpus import CASES, Case, recorded
from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.resolve import resolve
from rasp import sops
from rasp import tracr as rasp
from rasp.errors import CompileError, RaspError
from rasp.tools.pyprogram import PythonProgram, load_python_program
from rasp.tools.verify import same_value

pytestmark = pytest.mark.exactness


def tracr_equal(got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return math.isclose(float(got), float(want), rel_tol=1e-6, abs_tol=1e-6)
    return bool(got == want) and type(got) is type(want)


@cache
def _program(target: str) -> PythonProgram:
    return load_python_program(target)


def _inputs(case: Case, max_len: int, samples: int = 300) -> list[list[Any]]:
    vocab = list(case.vocab)
    if len(vocab) ** 5 <= 1100:
        exhaustive = min(5, max_len)
        out = [
            list(t) for n in range(1, exhaustive + 1) for t in itertools.product(vocab, repeat=n)
        ]
    else:
        out = [list(t) for n in (1, 2) for t in itertools.product(vocab, repeat=n)][:300]
    rng = random.Random(zlib.crc32(f"{case.key}/{max_len}".encode()))
    out += [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(samples)]
    return out


def check(case: Case, max_len: int) -> None:
    loaded = _program(case.target)
    model = compile_sop(loaded.program, list(case.vocab), max_len, name=case.name)
    # tracr's own values, on the recorded inputs the model accepts.
    rows = [(xs, want) for xs, want in recorded()[case.key]["rows"] if len(xs) <= max_len]
    rows = [(xs, want) for xs, want in rows if not isinstance(want, dict)]
    for (xs, want), got in zip(rows, run_compiled(model, [xs for xs, _ in rows]), strict=True):
        assert all(tracr_equal(g, w) for g, w in zip(got, want, strict=True)), (xs, got, want)
    # The compiled graph's values (what `rasp verify` compares with), on many more inputs.
    graph = resolve(loaded.sop, list(case.vocab), max_len)
    inputs, wants = [], []
    for xs in _inputs(case, max_len):
        try:
            value = sops.evaluate(graph, xs)
        except RaspError:
            continue  # tracr raises here too: there is no value to match
        assert isinstance(value, sops.SeqValue)
        inputs.append(xs)
        wants.append(value.values)
    for xs, want, got in zip(inputs, wants, run_compiled(model, inputs), strict=True):
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (xs, got, want)
        tracr = loaded.program(xs)
        assert all(tracr_equal(g, w) for g, w in zip(got, tracr, strict=True)), (xs, got, tracr)


# The compiler's limits these programs meet (each refused with a located reason, never wrong).
# (numbers.py:centered, a numerical output closer together than float32 resolves, compiles since
# the one-hot output fallback.)
REFUSED: dict[tuple[str, int], str] = {}
TOO_SLOW: dict[tuple[str, int], str] = {}  # (sort_freq at N = 40 was, before orders by digits)


def _cases(max_len: int) -> list[object]:
    out: list[object] = []
    for case in CASES:
        marks = []
        if (case.key, max_len) in REFUSED:
            marks.append(pytest.mark.xfail(reason=REFUSED[case.key, max_len], strict=True))
        if (case.key, max_len) in TOO_SLOW:
            marks.append(pytest.mark.skip(reason=TOO_SLOW[case.key, max_len]))
        out.append(pytest.param(case, marks=marks, id=case.key))
    return out


@pytest.mark.parametrize("case", _cases(5))
def test_compiles_exactly_at_5(case: Case) -> None:
    check(case, 5)


@pytest.mark.parametrize("case", _cases(10))
def test_compiles_exactly_at_10(case: Case) -> None:
    check(case, 10)


@pytest.mark.slow
@pytest.mark.parametrize("case", _cases(40))
def test_compiles_exactly_at_40(case: Case) -> None:
    check(case, 40)


def test_a_select_of_one_sop_with_itself_checks_it_once() -> None:
    # tracr's sort: Select(keys, keys, LT) over a map that may be None. One check node on both
    # sides (the key's, which raises first) is one reading: 28K parameters at N = 10, where two
    # copies made 47K (tracr's own model: 36K).
    from rasp import tracr as rasp
    from rasp.tracr import lib
    from rasp.tracr.lower import to_sops

    program = lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=10, min_key=1)
    checks = [n for n in sops.walk(to_sops(program)) if getattr(n, "text", "").endswith("None")]
    assert [n.text for n in checks] == ["key is not None"]
    assert compile_sop(program, [1, 2, 3], 10).param_count() < 36_000

    keys = rasp.Map(lambda x: None if x == 2 else x, rasp.tokens)
    lowered = to_sops(
        rasp.numerical(rasp.Aggregate(rasp.Select(keys, keys, rasp.Comparison.LT), keys))
    )
    with pytest.raises(RaspError, match="key is None"):
        sops.evaluate(lowered, [1, 2])


def test_a_key_of_many_readings_is_refused_located_not_crashed() -> None:
    # A predicate select over (token, index) tuples that no form but the conjunction rebuilds (the
    # same token elsewhere): one atom per query row, so its key reads 2N... readings. At N = 32
    # its 2^96 key states overflowed numpy's int64 count and then its 64 axes: a ValueError
    # traceback, where it is refused with the head and the counts.
    from rasp import tracr as rasp

    pairs = rasp.SequenceMap(lambda t, i: (t, i), rasp.tokens, rasp.indices)
    elsewhere = rasp.Select(pairs, pairs, lambda k, q: k[0] == q[0] and k[1] != q[1])
    with pytest.raises(RaspError, match=r"79,228,162,514,264,337,593,543,950,336 key states"):
        compile_sop(rasp.SelectorWidth(elsewhere), list("abc"), 32)


@pytest.mark.parametrize("max_len", [16, 32])
def test_thresholds_within_classes_are_two_selects(max_len: int) -> None:
    # InterpBench's first occurrence of each token: `k[0] == q[0] and k[1] <= q[1]` over (token,
    # index) pairs. Its rows are a chain within each token's class: `==` on the token's class and
    # `<=` on the index's level, where the conjunction of one atom per row (3N atoms) was refused
    # from N = 16 on (at N = 9 the tuples' text still sorts by index: an interval).
    from rasp import tracr as rasp

    pairs = rasp.SequenceMap(lambda t, i: (t, i), rasp.tokens, rasp.indices)
    same_before = rasp.Select(pairs, pairs, lambda k, q: k[0] == q[0] and k[1] <= q[1])
    seen = rasp.SelectorWidth(same_before)
    first = rasp.SequenceMap(lambda n, t: t if n == 1 else None, seen, rasp.tokens)
    model = compile_sop(first, list("abc"), max_len)
    assert model.param_count() < 100_000
    rng = random.Random(max_len)
    inputs = [[rng.choice("abc") for _ in range(rng.randint(1, max_len))] for _ in range(60)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == first(tokens)


def test_a_mean_over_the_querys_own_class_is_one_value() -> None:
    # InterpBench's word count by length: the mean of word_length over the keys of the query's
    # word_length. tracr's Select reads each side through `key is not None`, a one-to-one map of
    # word_length, so the keys of one class still hold one word_length: at N = 64 this was a
    # one-hot of every mean (72M parameters, 6.5 minutes to compile).
    from rasp import tracr as rasp

    words = ["apple", "pear", "banana", "kiwi", "fig", "cherry", "plum", "melon"]
    word_length = rasp.Map(lambda x: len(x), rasp.tokens)
    same_length = rasp.Select(word_length, word_length, rasp.Comparison.EQ)
    count = rasp.Aggregate(same_length, word_length, default=None)
    model = compile_sop(count, words, 64)
    assert model.param_count() < 5_000
    rng = random.Random(64)
    inputs = [[rng.choice(words) for _ in range(rng.randint(1, 64))] for _ in range(60)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert all(tracr_equal(g, w) for g, w in zip(got, count(tokens), strict=True))


def test_make_length_is_the_length() -> None:
    # tracr has no `length` its compiler takes, so tracr programs count every key with
    # make_length(). Lowered as a width, the forms that read `length` did not apply: the fraction
    # of keys smaller than the query's token, `SelectorWidth(Select(tokens, tokens, LT)) /
    # make_length()`, was a table over (count, length) with a one-hot output, 33,338 parameters at
    # N = 16 and 3,497,495 at N = 32, where `/ rasp.length` is one mean per query value (512).
    from rasp import tracr as rasp
    from rasp.tracr import lib
    from rasp.tracr.lower import to_sops

    length = lib.make_length()
    assert isinstance(to_sops(length), sops.LengthSOp)
    smaller = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT))
    fraction = rasp.numerical(smaller / length)
    model = compile_sop(fraction, list("abcd"), 16)
    assert model.param_count() < 1_000
    rng = random.Random(16)
    inputs = [[rng.choice("abcd") for _ in range(rng.randint(1, 16))] for _ in range(60)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert all(tracr_equal(g, w) for g, w in zip(got, fraction(tokens), strict=True))

    # A side that may be None is not the length: tracr's Comparison.TRUE raises there.
    maybe_none = rasp.Map(lambda t: None if t == "b" else t, rasp.tokens, simplify=False)
    width = rasp.SelectorWidth(rasp.Select(maybe_none, maybe_none, rasp.Comparison.TRUE))
    assert not isinstance(to_sops(width), sops.LengthSOp)
    with pytest.raises(RaspError, match="None"):
        sops.evaluate(to_sops(width), ["a", "b"])


@pytest.mark.parametrize(
    "make_selector",
    [
        lambda rasp: rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ),
        lambda rasp: rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
    ],
    ids=["prefix", "own_token"],
)
def test_a_default_never_given_is_no_output_value(make_selector: Any) -> None:
    # tracr's Aggregate defaults to None. Over a selector where every query selects a key (a
    # prefix, or the query's own token) None is never given, but it was kept as a stand-in value:
    # a numerical output became a one-hot of every mean, 545,481 parameters at N = 32 where
    # default=0 gives 151.
    from rasp import tracr as rasp

    mean = rasp.Aggregate(make_selector(rasp), rasp.tokens)
    model = compile_sop(mean, [0, 2], 32)
    assert model.param_count() < 2_000
    rng = random.Random(32)
    inputs = [[rng.choice([0, 2]) for _ in range(rng.randint(1, 32))] for _ in range(60)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert all(tracr_equal(g, w) for g, w in zip(got, mean(tokens), strict=True))


def test_a_constant_of_another_length_is_read_only_where_tracr_zips_it() -> None:
    # ConstantSOp(check_length=False) keeps its own length on a shorter input, as in tracr. A
    # Select over it then has the constant's keys: tracr's SelectorWidth counts 3 keys on a 1-token
    # input ([2, 2, 2] for [5]), where the model counted the input's one key ([1]), silently. The
    # compiled program now raises there (no promise); zipped with an s-op of the input, the
    # constant is read as before.
    from rasp import tracr as rasp

    const = rasp.ConstantSOp([0, 2, 1], check_length=False)
    width = rasp.SelectorWidth(rasp.Select(const, rasp.indices, lambda k, q: k <= 1))
    assert width([5]) == [2]
    lowered = to_sops_of(width)
    for xs in ([5], [5, 5]):
        with pytest.raises(RaspError, match="constant of length 3"):
            sops.evaluate(lowered, xs)
    assert list(sops.evaluate(lowered, [5, 5, 5]).values) == width([5, 5, 5])
    for program in (const, rasp.Map(lambda x: x + 1, const)):
        with pytest.raises(RaspError, match="constant of length 3"):
            sops.evaluate(to_sops_of(program), [5, 5])

    zipped = const + rasp.indices
    model = compile_sop(zipped, [5], 3)
    inputs = [[5] * n for n in (1, 2, 3)]
    assert run_compiled(model, inputs) == [zipped(xs) for xs in inputs] == [[0], [0, 3], [0, 3, 3]]

    # A ConstantSelector's rows are its own on any input: checked whatever check_length says.
    fixed = rasp.ConstantSelector([[True, False], [True, True]], check_length=False)
    assert rasp.SelectorWidth(fixed)([5]) == [1, 2]
    with pytest.raises(RaspError, match="Constant len 2"):
        sops.evaluate(to_sops_of(rasp.SelectorWidth(fixed)), [5])


@pytest.mark.parametrize("encoding", ["numerical", "categorical"])
def test_a_mean_over_none_raises_as_in_tracr(encoding: str) -> None:
    # tracr's Aggregate of several values with a None among them is a ValueError. The resolved
    # graph averaged None's stand-in number there (0 and None gave -0.5), so the model promised
    # such means and listed them among its output values (-0.75 .. -0.25 here, 1,770 parameters
    # where 950 do); now it raises, and the output values are tracr's.
    from rasp import tracr as rasp

    maybe_none = rasp.Map(lambda t: None if t == 2 else t, rasp.tokens)
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    mean = getattr(rasp, encoding)(rasp.Aggregate(upto, maybe_none, default=0))
    graph = resolve(to_sops_of(mean), [0, 1, 2], 4)
    valid = []
    for n in range(1, 5):
        for xs in map(list, itertools.product([0, 1, 2], repeat=n)):
            if 2 in xs and set(xs) != {2}:  # a prefix mixing None with a number: tracr raises
                with pytest.raises(ValueError):
                    mean(xs)
                with pytest.raises(RaspError, match="None among them"):
                    sops.evaluate(graph, xs)
            elif 2 not in xs:
                got = sops.evaluate(graph, xs)
                assert isinstance(got, sops.SeqValue)
                assert all(tracr_equal(g, w) for g, w in zip(got.values, mean(xs), strict=True))
                valid.append(xs)
    model = compile_sop(mean, [0, 1, 2], 4)
    values = model.metadata["output"]["values"]
    assert values == [0, 0.25, 0.333333333333, 0.5, 0.666666666667, 0.75, 1, None]
    for xs, got in zip(valid, run_compiled(model, valid), strict=True):
        assert all(tracr_equal(g, w) for g, w in zip(got, mean(xs), strict=True)), xs


def test_a_mean_of_numbers_past_their_largest_by_rounding_is_not_taken_for_one_over_none() -> None:
    # three 0.1s average to 0.10000000000000002, above every listed number: the map back took it
    # for a mean over None's stand-in and raised where tracr gives a value
    from rasp import tracr as rasp

    tenth = rasp.Map(lambda t: None if t == 2 else 0.1, rasp.tokens)
    upto = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LEQ)
    mean = rasp.numerical(rasp.Aggregate(upto, tenth, default=0))
    graph = resolve(to_sops_of(mean), [0, 1, 2], 4)
    got = sops.evaluate(graph, [0, 0, 0])
    assert isinstance(got, sops.SeqValue)
    assert all(tracr_equal(g, w) for g, w in zip(got.values, mean([0, 0, 0]), strict=True))
    assert mean([0, 0, 0])[0] > 0.1
    with pytest.raises(RaspError, match="None among them"):
        sops.evaluate(graph, [0, 2])


def test_a_none_the_analysis_cannot_rule_out_is_not_averaged() -> None:
    # A fuzzed program (vocab [0, 1], N = 4): v1 is never None (every query selects keys 0 and 1)
    # but the analysis cannot see it, so v5's means over v1's None stand-in were listed, and the
    # map read two of them, 0.0 and -3.7e-17, as float64 rounding apart: refused. tracr raises on
    # such means, so the compiled graph does too and lists none of them.
    from rasp import tracr as rasp

    v1 = rasp.categorical(
        rasp.Aggregate(
            rasp.Select(rasp.indices, rasp.tokens, lambda k, q: k <= 1), rasp.tokens, default=None
        )
    )
    v5 = rasp.categorical(
        rasp.Aggregate(rasp.Select(rasp.indices, v1, lambda k, q: k % 2 == q % 2), v1, default=None)
    )
    program = rasp.Map(lambda x: x == 0, v5)
    model = compile_sop(program, [0, 1], 4)
    inputs = [list(t) for n in range(1, 5) for t in itertools.product([0, 1], repeat=n)]
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert all(tracr_equal(g, w) for g, w in zip(got, program(xs), strict=True)), xs


def to_sops_of(program: Any) -> sops.Node:
    from rasp.tracr.lower import to_sops

    return to_sops(program)


def test_a_sort_copies_equal_numbers_of_two_types_as_one_token() -> None:
    # make_sort copies its values through string stand-ins (compiler.ranks.copy_numbers). 1 and
    # 1.0 had one stand-in each, though the values' numerical reading cannot tell them apart:
    # the stand-in map was refused as giving '\x011' and '\x010' for equal numbers (random
    # tracr program 4586). They share one now; a model promises numbers (same_value).
    from rasp import tracr as rasp
    from rasp.tracr import lib

    vals = rasp.numerical(
        rasp.Map(lambda t: 1 if t == "a" else (1.0 if t == "b" else 2), rasp.tokens)
    )
    keys = rasp.numerical(rasp.Map(lambda t: {"a": 3, "b": 1, "c": 2}[t], rasp.tokens))
    program = lib.make_sort(vals, keys, max_seq_len=5, min_key=1)
    lowered = resolve(to_sops_of(program), list("abc"), 5)
    stand_ins = [
        node.fn
        for node in sops.walk(lowered)
        if isinstance(node, sops.MapSOp) and type(node.fn).__name__ == "_Tokens"
    ]
    assert len(stand_ins) == 1 and stand_ins[0](1) == stand_ins[0](1.0) != stand_ins[0](2)
    model = compile_sop(program, list("abc"), 5)
    inputs = [list(t) for n in range(1, 6) for t in itertools.product("abc", repeat=n)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = list(program(tokens))
        assert all(map(same_value, got, want)), (tokens, got, want)


@pytest.mark.parametrize("encoding", ["categorical", "numerical"])
def test_a_plain_output_maps_floats_are_tracrs_but_for_twins(encoding: str) -> None:
    """tracr computes one number in several ways (0.1 * 3 is 0.30000000000000004, and 0.3 for
    "b"): a model reads such twins as one number. Other floats are tracr's to the last digit where
    nothing is resolved (docs/tracr.md says 12 digits for every program; that holds where a predicate
    select or a mean is resolved)."""
    from rasp import tracr as rasp

    third = rasp.Map(lambda t: 0.1 * 3 if t == "a" else (0.3 if t == "b" else 1 / 3), rasp.tokens)
    program = rasp.numerical(third) if encoding == "numerical" else rasp.categorical(third)
    model = compile_sop(program, list("abc"), 3)
    assert run_compiled(model, [list("abc")]) == [[0.3, 0.3, 1 / 3]]


def test_a_value_no_model_holds_is_the_one_error_at_its_map() -> None:
    """A map of a resolved program giving a dict was reported twice at the map: as the value no
    model holds and as failing on every input (its values unknown to the analysis)."""
    from rasp import tracr as rasp
    from rasp.errors import CompileError

    widths = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT))
    program = rasp.Map(lambda w: {w: 1}, widths)
    with pytest.raises(CompileError) as caught:
        compile_sop(program, list("ab"), 3)
    messages = [d.message for d in caught.value.diagnostics]
    assert len(messages) == 1 and " gives {0: 1} for 0;" in messages[0], messages


def test_a_string_starting_with_the_tuple_mark_is_refused_located() -> None:
    """Tuples travel as strings starting with "\\x00" (rasp.tracr.boxes.box); a token, a map's
    string or a Full's fill starting with it was read as the tuple its text spells, certified:
    the type name of the token "\\x00(1, 2)" was "tuple" (tracr: "str"), and a map giving that
    string for "a" and the tuple (1, 2) for "b" counted them as one value."""
    from rasp import tracr as rasp
    from rasp.errors import CompileError

    marked = "\x00(1, 2)"
    kind = rasp.Map(lambda x: type(x).__name__, rasp.tokens)
    with pytest.raises(CompileError) as caught:
        compile_sop(kind, [marked, "a"], 3)
    assert "vocabulary token '\\x00(1, 2)'" in str(caught.value)
    made = rasp.Map(lambda x: marked if x == "a" else (1, 2), rasp.tokens)
    both = rasp.SelectorWidth(rasp.Select(made, made, rasp.Comparison.EQ))
    filled = rasp.SequenceMap(lambda a, b: type(a).__name__, rasp.Full(marked), rasp.tokens)
    for program in (rasp.Map(lambda v: type(v).__name__, made, simplify=False), both, filled):
        with pytest.raises(CompileError) as caught:
            compile_sop(program, list("ab"), 3)
        messages = [d.message for d in caught.value.diagnostics]
        assert any("'\\x00(1, 2)'" in m and "tuple" in m for m in messages), messages


def test_a_graph_built_on_a_lowered_tracr_program_is_a_tracr_program() -> None:
    """`is_lowered` knew only the root `to_sops` returned: a `rasp.sops` node over a lowered graph
    compiled the vocabulary token "\\x00(1, 2)" (its map saw the tuple (1, 2): type name "tuple"),
    and its tuple output was not recorded as such (`output.tuples`)."""
    from rasp import tracr as rasp
    from rasp.errors import CompileError
    from rasp.tracr.lower import is_lowered, to_sops

    kind = to_sops(rasp.Map(lambda x: type(x).__name__, rasp.tokens))
    on_top = sops.MapSOp(fn=lambda x: x, inputs=(kind,), loose=True)
    assert is_lowered(kind) and is_lowered(on_top)
    with pytest.raises(CompileError) as caught:
        compile_sop(on_top, ["\x00(1, 2)", "a"], 3)
    assert "vocabulary token '\\x00(1, 2)'" in str(caught.value)
    pairs = to_sops(rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices))
    model = compile_sop(sops.MapSOp(fn=lambda x: x, inputs=(pairs,), loose=True), list("ab"), 3)
    assert model.metadata["output"]["tuples"] is True
    assert not is_lowered(sops.MapSOp(fn=lambda x: x, inputs=(sops.TokensSOp(),)))


def test_two_sops_compared_with_an_operator_are_refused_with_the_tracr_spelling() -> None:
    # tracr's `a == b` compares each value of a with the s-op b: the values are s-op objects
    with pytest.raises(CompileError, match=r"gives an s-op \(Map\)") as err:
        compile_sop(rasp.tokens == rasp.indices, list("ab"), 3)
    assert "SequenceMap" in (err.value.diagnostics[0].hint or "")


def test_an_output_with_none_is_typed_as_its_other_values() -> None:
    """detect_abc is None until "abc" fits, then True or False: the interpreter labels it
    `(bools)`, as the format says `output.type` is, but the file said `strings` (None made the
    values look mixed) and `rasp show` printed `(categorical, strings)`."""
    from programs.tracr.library import detect_abc

    model = compile_sop(detect_abc, list("abc"), 4)
    assert model.metadata["output"]["type"] == "bools"
    assert None in model.metadata["output"]["values"]

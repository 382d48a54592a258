"""A tracr mean that selects one bool gives the bool itself (`True`), not 1: the program's functions
that read such a mean see the bool in a compiled model too, or the compile is refused where a model
cannot tell the bool from a number it also gives (compiler.bool_means)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from runtime_helpers import run_compiled

import transformer
from compiler import compile_sop
from compiler.resolve import resolve
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tools.verify import plan_inputs, verify
from rasp.tracr.lower import to_sops


def _inputs(vocab: Any, max_len: int) -> list[list[Any]]:
    return [list(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]


def _agrees(program: rasp.SOp, vocab: Any, max_len: int, *, types: bool = True) -> None:
    """The model gives `program`'s values on every input (`types`: of the same types too)."""
    model = compile_sop(program, list(vocab), max_len)
    inputs = _inputs(vocab, max_len)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        assert got == want, xs
        assert not types or [type(v) for v in got] == [type(v) for v in want], xs


def _verifies(program: rasp.SOp, vocab: list[Any], max_len: int = 3) -> None:
    """`rasp verify` passes the compiled model on every input up to `max_len`, against the
    resolved graph and the program as written."""
    model = compile_sop(program, vocab, max_len)
    runtime = transformer.from_tensors(model.weights, model.metadata)
    plan = plan_inputs(vocab, max_len, exhaustive_len=max_len, samples=0)
    lowered = to_sops(program)
    report = verify(resolve(lowered, vocab, max_len), runtime, plan, guard=lowered)
    assert report.failures == 0 and report.checked > 0


def _before_first() -> rasp.SOp:
    """The share of positions before each one that are the first: one selected bool at position 1."""
    is_first = rasp.Map(lambda i: i == 0, rasp.indices)
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    return rasp.Aggregate(before, is_first, default=None)


def test_a_function_of_one_selected_bool_reads_the_bool() -> None:
    label = rasp.Map(lambda v: str(v), _before_first())
    assert label(list("abc")) == [None, "True", "0.5"]
    # the model gave "1" at position 1 (certified), where tracr gives "True"
    _agrees(label, "ab", 4)


def test_a_predicate_on_one_selected_bool_reads_the_bool() -> None:
    share = rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT),
        rasp.Map(lambda t: t == "a", rasp.tokens),
    )
    program = rasp.SelectorWidth(rasp.Select(share, rasp.indices, lambda k, q: k is True))
    assert program(list("aa")) == [1, 1]
    # the model gave [0, 0] (certified); a model cannot tell True from the mean 1.0 of two Trues
    with pytest.raises(CompileError, match="same number"):
        compile_sop(program, list("ab"), 4)


def test_an_int_default_a_function_tells_from_the_bool_is_refused() -> None:
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    frac = rasp.numerical(rasp.Aggregate(upto, rasp.tokens == "a", default=0))
    shown = rasp.Map(lambda x: f"{x}", frac)
    assert shown(list("ab")) == ["0", "True"]
    with pytest.raises(CompileError, match="its default, or a selected int") as err:
        compile_sop(shown, list("ab"), 4)
    assert err.value.diagnostics[0].span is not None
    # a function that gives one result for 0 and False compiles, and agrees
    _agrees(rasp.Map(lambda x: x > 0.4, frac), "ab", 4)
    # as the output, one selected True is 1 (equal; docs/language.md, section 9)
    _agrees(frac, "ab", 4, types=False)


def test_a_mean_of_bools_and_ints_reads_each_as_tracr_gives_it() -> None:
    before = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1 or k == q - 3)
    # ints other than 0 and 1 are no bool's: read as themselves
    mixed = rasp.Map(lambda t: True if t == "a" else 3, rasp.tokens)
    _agrees(rasp.Map(lambda v: v == 3, rasp.Aggregate(before, mixed)), "ab", 4)
    # an int 1 selected alone is 1, one True is True: a model cannot tell them apart
    ones = rasp.Map(lambda t: True if t == "a" else 1, rasp.tokens)
    with pytest.raises(CompileError, match="its default, or a selected int"):
        compile_sop(rasp.Map(lambda v: str(v), rasp.Aggregate(before, ones)), list("ab"), 4)


def test_verify_compares_with_the_program_as_written_too() -> None:
    """`rasp verify` of a tracr program compares the model with the resolved graph it compiled,
    and with the program as written: a rewrite that lost a value's type (one selected True read
    as 1, as resolve once did) is a failure, not "model == interpreter"."""
    written = rasp.Map(lambda v: str(v), rasp.Map(lambda i: i == 0, rasp.indices), simplify=False)
    rewrite = rasp.Map(lambda v: str(int(v)), rasp.Map(lambda i: i == 0, rasp.indices))
    model = compile_sop(rewrite, list("ab"), 3)
    runtime = transformer.from_tensors(model.weights, model.metadata)
    plan = plan_inputs("ab", 3, exhaustive_len=3, samples=0)
    report = verify(to_sops(rewrite), runtime, plan, guard=to_sops(written))
    assert report.failures == report.checked > 0
    assert report.first_failure is not None and report.first_failure.interpreter[0] == "True"
    # the model's 1 for a mean's single True is the written value (docs/language.md, section 9)
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    frac = rasp.numerical(rasp.Aggregate(upto, rasp.tokens == "a", default=0))
    frac_model = compile_sop(frac, list("ab"), 3)
    frac_runtime = transformer.from_tensors(frac_model.weights, frac_model.metadata)
    lowered = to_sops(frac)
    resolved = resolve(lowered, list("ab"), 3)
    report = verify(resolved, frac_runtime, plan, guard=lowered)
    assert report.failures == 0 and report.checked == 14


def test_a_function_telling_1_from_1_0_in_a_sorts_copy_is_refused() -> None:
    # tracr's make_sort copies each value; the model copies 1 and 1.0 as one token (one number),
    # so `str` of the copy gave "1.0" where tracr gives "1" (certified)
    from rasp.tracr import lib

    values = rasp.Map(lambda t: 1 if t == 2 else (1.0 if t == 3 else 5), rasp.tokens)
    ordered = lib.make_sort(values, rasp.tokens, max_seq_len=3, min_key=1)
    shown = rasp.Map(lambda v: str(v), ordered, simplify=False)
    assert shown([3, 2]) == ["1", "1.0"]
    with pytest.raises(CompileError, match="a sort's copy of values that hold both"):
        compile_sop(shown, [1, 2, 3], 3)
    # a function that gives one result for both compiles, and agrees
    _agrees(rasp.Map(lambda v: v > 2, ordered, simplify=False), [1, 2, 3], 3)


def test_more_combinations_than_the_check_reads_are_refused(monkeypatch: Any) -> None:
    """The check reads every combination where a reading can differ, or refuses: a check cut
    short (it read the first 100,000 of all the combinations) proves nothing about the rest."""
    from compiler import bool_means

    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    frac = rasp.numerical(rasp.Aggregate(upto, rasp.tokens == "a", default=0))
    both = rasp.SequenceMap(lambda x, i: x > 0.4 and i > 0, frac, rasp.indices)
    _agrees(both, "ab", 4)  # (only frac's 0 and 1 are read both ways: a handful of combinations)
    monkeypatch.setattr(bool_means, "MAX_AMBIGUOUS_CHECKS", 3)
    with pytest.raises(CompileError, match="more than the 3 the compiler checks"):
        compile_sop(both, list("ab"), 4)


def test_the_written_program_accepts_only_the_int_form_of_a_bool() -> None:
    """A model gives a mean of one selected True as 1 (docs/language.md, section 9), of several
    Trues as 1.0: only the int stands for the bool. A float 1.0 where tracr gives True, or True
    where it gives 1, prints differently in tracr and is a failure."""
    from rasp.tools.verify import _as_written

    assert _as_written(1, True) and _as_written(0, False) and _as_written(True, True)
    assert not _as_written(1.0, True)
    assert not _as_written(0.0, False)
    assert not _as_written(True, 1)
    assert not _as_written(2, True)
    assert _as_written(0.5, 0.5) and _as_written("a", "a")


@pytest.mark.parametrize("default", [None, "x", 0.5])
def test_one_selected_true_beside_a_float_1_comes_out_as_the_int(default: Any) -> None:
    """Over tokens {1.0, True} a mean gives 1.0 (several selected, or one 1.0) and True (one True
    selected): one number to a model, whose output wrote the float for both, so the model gave
    1.0 where tracr gives True (certified; `rasp verify` found it wrong). The int 1 stands for
    both (docs/language.md, section 9)."""
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    program = rasp.Aggregate(before, rasp.tokens, default=default)
    # DeepMind tracr's values (rasp.evaluate):
    assert program([True, True]) == [default, True]
    assert program([True, 1.0, 1.0]) == [default, True, 1.0]
    vocab = [1.0, True]
    model = compile_sop(program, vocab, 3)
    inputs = _inputs(vocab, 3)
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = program(xs)
        for g, w in zip(got, want, strict=True):
            assert g == w, xs
            assert type(g) is type(w) or type(g) is int or type(w) is not bool, (xs, g, w)


def test_a_grid_output_gives_one_selected_bool_as_the_int() -> None:
    """A mean of bools whose output is decoded on a grid of sixths gave a whole number that may be
    either an int or a float at a position (one selected bool, or a mean of several) as the
    float: 0.0 where tracr gives False (1.0 for True), which `rasp verify` fails (it takes the
    int 0 for False, and for a mean's 0.0). Certified; mixed_encodings_campaign seed 760010
    --extra, #104, through tracr's make_shuffle_dyck."""
    prefix = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    is_3 = rasp.Map(lambda x: x == 3, rasp.tokens)
    whole = rasp.numerical(rasp.Aggregate(prefix, is_3, default=0)) == 1
    late = ~rasp.Select(rasp.tokens, rasp.length, rasp.Comparison.LT)  # the keys of token 3
    program = rasp.Aggregate(late, whole, default=2)
    assert program([3]) == [True] and program([0.5, 3]) == [False, False]
    _verifies(program, [0.5, 3, "b"])


@pytest.mark.parametrize("token", ["a", "c"])
def test_a_sort_by_token_keys_copies_one_selected_bool_as_the_int(token: str) -> None:
    """tracr's make_sort by keys read from the tokens (the hist) copies each value to its rank;
    the compiler writes that copy with numbers as string tokens (compiler.ranks), one token for
    the int 0 (a mean of one selected False) and the float 0.0, which it turned back into the
    float: 0.0 where tracr gives False (1.0 for True), certified, failing `rasp verify` on every
    input. Found by tracr_lib_campaign.py seed 780102 --deep (#6); "c" is never in the input."""
    from rasp.tracr import lib

    frac = lib.make_frac_prevs(rasp.tokens == token)
    program = lib.make_sort(frac, lib.make_hist(), max_seq_len=3, min_key=1)
    assert program(["b"]) == [False] and program(["a"]) == [token == "a"]
    _verifies(program, ["a", "b"])


def test_a_function_of_a_sorted_bool_mean_that_tells_false_from_0_0_is_refused() -> None:
    """After a sort by token keys, one selected False and a mean's 0.0 are one number to the
    copy. A reader of the copy was checked against the twins 0 and 0.0 with its plain function,
    not as it reads the copy (the int 0 as False): `x is False` compiled, certified, and gave True
    for a mean's 0.0 (7 of 14 inputs wrong under `rasp verify`). tracr_lib_campaign.py seed
    780102, minimised."""
    from rasp.tracr import lib

    frac = lib.make_frac_prevs(rasp.tokens == "a")
    sorted_frac = lib.make_sort(frac, lib.make_hist(), max_seq_len=3, min_key=1)
    program = rasp.Map(lambda x: x is False, sorted_frac)
    assert program(["b"]) == [True] and program(["b", "b"]) == [True, False]
    with pytest.raises(CompileError, match="gives True for False but False for 0.0"):
        compile_sop(program, ["a", "b"], 3)
    # a reader that gives one result for both still compiles (checked in full above)
    compile_sop(rasp.Map(lambda x: x == 0, sorted_frac), ["a", "b"], 3)

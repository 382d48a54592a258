"""Select sides that read a copy of a number computed from means (compiler.copy_sides), and a
head's one-hot of a few values read by a select or a side table (compiler.snap_one_hot): the last builds of
compiler.side_build, tried where nothing else is proved. Each program is the reduction of a
fuzz seed, refused before; each now compiles and agrees with the interpreter.

`COPY` (defs 2044002): y copies x = c + v2 * v2, whose one-hot x's step MLP writes with its
rounding (two dimensions: 1.6e-5) and the copy's softmax passes on (1.7e-4); the select reads
y's one-hot at a score scale that makes a score error of 0.05, and the width's relu has margin 3
against 3.32 at N = 5. Copied as one number, y is snapped onto its values by a step over that
number (the integer band): exact. `TWO_VALUED` (mixed 2070323): v3 is a table over m's one-hot
(False where a key differs, 0.0 where none), which m's head writes with error; clamped, the
table still rounds (1e-5), and the disjunction's width terms fail (margin 3 against 3.13 at
N = 11). Snapped first, m's one-hot is exact, and so is the table. `CAUSAL_COPY` (texts --causal
2113205): the same for a copy of four values read by a disjunction's joint table;
`SORTED_BY_NOISY` (mixed --causal 2110407): for a sort key that a step MLP writes with error."""

from __future__ import annotations

import pytest

from compiler import compile_sop
from compiler.copy_sides import side_copies
from compiler.graph import build_graph
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source
from rasp.sops import SOp
from tests.compiler.loose_sums import count_every_weight
from tests.compiler.test_compile import all_inputs, check_inputs

COPY = """c = count(tokens, "1");
v2 = c + {0: -1, 1: 2, 2: 0}[c % 3];
x = c + v2 * v2;
y = load_from_location(x, 2);
res = selector_width(select(y, y, ==) and select(indices, indices, <));"""
TWO_VALUED = """m = aggregate(select(tokens_int, tokens_int, !=), False, 0.0);
v3 = m if tokens == "2" else tokens_int;
res = selector_width(select(tokens_int, v3, !=) or select(indices, v3, !=));"""
# texts --causal 2113205: a's one-hot (a copy of "0", "1", "2" or "x"), which its head writes with
# error, read by a disjunction's joint table: the mean's output snap has margin 0.0167 against
# 0.0301 at N = 6; each column of a's one-hot snapped first, the joint is exact
CAUSAL_COPY = """a = aggregate((select_from_first(tokens, "1") or not select(indices + 1, indices, !=))
    and select(indices, indices, <=), tokens, "x");
c = selector_width(select(tokens == "1", True, ==) and select(indices, indices, <=));
res = aggregate((select(a, "a", <=) or not select(tokens, tokens, ==))
    and select(indices, indices, <=), c, -1);"""
# mixed --causal 2110407: sort_back's `earlier` over v0, a width plus a mean, whose one-hot a step
# MLP writes with the width's 1/(w+1) rounding: a score error of 0.111, a term's relu margin of 3
# against 4.05 at N = 6; v0's one-hot (and the width's) snapped first
SORTED_BY_NOISY = """def sort_back(seq, key) {
    earlier = (select(key, key, <) or (select(key, key, ==) and select(indices, indices, <)))
        and select(indices, indices, <=);
    return aggregate(select(indices, selector_width(earlier), ==)
        and select(indices, indices, <=), seq);
}
p = aggregate(select(indices, 0, !=) and select(indices, indices, <=), indices, False);
v0 = selector_width((select(sort_back(indices, tokens), 0.0, >=) or select(indices + 1, indices, <))
    and select(indices, indices, <=))
    + aggregate(select(p, 1, >=) and select(indices, indices, <=), indices, 1.0);
res = selector_width((select(v0, v0, <) or (select(v0, v0, ==) and select(indices, indices, <)))
    and select(indices, indices, <=));"""
# COPY over numbers around 300,000: y's copy errs by 0.16 where its values are 1 apart
TOO_LARGE = COPY.replace("x = c + v2", "x = 300000 + c + v2")


def _root(text: str) -> SOp:
    root = load_source(Source("<test>", text)).get("res")
    assert isinstance(root, SOp)
    return root


def test_a_select_side_copied_from_means_compiles_and_agrees() -> None:
    root = _root(COPY)
    model = compile_sop(root, list("012"), 5)
    assert model.metadata["certificate"]["ok"]
    inputs = all_inputs(list("012"), 5)
    assert check_inputs(model, root, inputs) == len(inputs)


def _no_snaps(monkeypatch: pytest.MonkeyPatch) -> None:
    # (aggregates: the copy-snaps build, compiler.copy_snaps, which snaps x before y copies it)
    for module in ("side_tables", "selectors", "joint_readings", "aggregates"):
        monkeypatch.setattr(f"compiler.{module}.snapped", lambda built, reading: reading)


def test_the_copy_is_snapped_by_either_build_and_refused_without_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # copied as a number first (y one number, no snap MLP); without that build, the one-hot
    # snap build proves it too; without either, the default's refusal
    root = _root(COPY)
    model = compile_sop(root, list("012"), 5)
    assert "y" in model.metadata["residual"]
    monkeypatch.setattr("compiler.side_build.side_copies", lambda graph: frozenset())
    model = compile_sop(root, list("012"), 5)
    assert any(label.startswith("y~snap") for label in model.metadata["residual"])
    _no_snaps(monkeypatch)
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list("012"), 5)
    assert "relu decision" in refused.value.diagnostics[0].message


def test_a_table_over_a_two_valued_mean_snapped_first_compiles_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = _root(TWO_VALUED)
    # since the output sums count the units that can be on, it is proved without the snap
    # (10,535 parameters in 2 layers, where the snap made 11,375 in 3); with every weight
    # counted, the bound before, it needs the snap
    plain = compile_sop(root, list("012"), 11)
    assert not any("~snap" in label for label in plain.metadata["residual"])
    assert plain.param_count() <= 11_375
    count_every_weight(monkeypatch)
    model = compile_sop(root, list("012"), 11)
    assert model.metadata["certificate"]["ok"]
    assert any(label.startswith("m~snap") for label in model.metadata["residual"])
    # the interpreter runs only inputs where no query selects two keys: every one up to length
    # 3 and each constant input
    inputs = all_inputs(list("012"), 3) + [[t] * n for t in "012" for n in range(4, 12)]
    assert check_inputs(model, root, inputs) == 3 + 9 + 3 + 3 * 8


def test_a_copy_of_a_few_values_snapped_first_compiles_and_agrees() -> None:
    root = _root(CAUSAL_COPY)
    model = compile_sop(root, list("012"), 6, causal=True)
    assert model.metadata["certificate"]["ok"]
    assert any(label.startswith("a~snap") for label in model.metadata["residual"])
    # the interpreter runs 130 of them (the others average two strings)
    assert check_inputs(model, root, all_inputs(list("012"), 6)) == 130


def test_a_sort_key_from_a_width_and_a_mean_snapped_first_compiles_and_agrees() -> None:
    root = _root(SORTED_BY_NOISY)
    model = compile_sop(root, list("abc"), 6, causal=True)
    assert model.metadata["certificate"]["ok"]
    assert any(label.startswith("v0~snap") for label in model.metadata["residual"])
    inputs = all_inputs(list("abc"), 6)
    assert check_inputs(model, root, inputs) == len(inputs)


@pytest.mark.parametrize(
    ("text", "n", "causal", "decision"),
    [
        (TWO_VALUED, 11, False, "relu decision"),
        (CAUSAL_COPY, 6, True, "snap decision"),
        (SORTED_BY_NOISY, 6, True, "relu decision"),
    ],
    ids=["two_valued", "causal_copy", "sorted_by_noisy"],
)
def test_without_the_snap_it_is_refused(
    monkeypatch: pytest.MonkeyPatch, text: str, n: int, causal: bool, decision: str
) -> None:
    _no_snaps(monkeypatch)
    count_every_weight(monkeypatch)  # (TWO_VALUED is proved without the snap otherwise)
    # nor with the s-ops of the position alone folded, the last build (SORTED_BY_NOISY's v0 is
    # one: compiler.position_folds proves it without the snap, tests/compiler/
    # test_position_folds.py)
    monkeypatch.setattr("compiler.driver.positions_instead", lambda kept, *rest: kept)
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(text), list("012"), n, causal=causal)
    assert decision in refused.value.diagnostics[0].message


def test_a_copy_too_noisy_to_snap_is_still_refused_located() -> None:
    with pytest.raises(CompileError) as refused:
        compile_sop(_root(TOO_LARGE), list("012"), 5)
    first, *rest = refused.value.diagnostics
    assert first.span is not None and first.span.line == 5
    assert any("also tried with select sides copied as numbers" in d.message for d in rest)


def test_the_copies_a_select_reads() -> None:
    # y itself, and the copy z under a map of it; not the count's width, nor an unread copy
    text = COPY.replace("res = ", "z = load_from_location(c, 1);\nw = shift(c, 1, 0);\nres = ")
    text = text.replace("select(y, y, ==)", "select(y, z + 1, ==)")
    assert side_copies(build_graph(_root(text))) == {"y", "z"}

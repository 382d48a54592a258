"""`decode_checkpoints` gives the model's values typed as the interpreter's (int, float, bool, str,
None), so that a checkpoint compares with the interpreter by `==` and by type.

It gave a one-hot's label text (`"False"`, `"1"` for both the int and the str) and every number
as a float (a count 2 as 2.0).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from rasp.tools.residual_types import NO_VALUE, reach_value
from rasp.tools.residuals import decode_checkpoints
from rasp.tools.verify import nodes_by_name

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = [
    ("reverse", list("abc"), "abca"),
    ("hist", list("abc"), "abca"),
    ("sort", list("abc"), "cabb"),
    ("double_hist", list("abc"), "abcaa"),
    ("frac_prevs", list("xab"), "xabx"),  # it counts "x"
    ("induction", list("abc"), "abcab"),
    ("length", list("abc"), "abca"),
    ("most_freq", list("abc"), "abca"),
    ("dyck1", ["(", ")"], "(())"),
]


def _checkpoints(file: str, vocab: list[Any], tokens: list[Any]) -> list[Any]:
    interp = load_file(ROOT / "programs" / f"{file}.rasp")
    sop = interp.get(interp.last_assigned or "")
    compiled = compile_sop(sop, vocab, 5)
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    return decode_checkpoints(model, tokens, nodes_by_name(sop))


@pytest.mark.parametrize(("file", "vocab", "tokens"), LIBRARY, ids=[f for f, _, _ in LIBRARY])
def test_every_checked_value_is_the_interpreters_with_its_type(
    file: str, vocab: list[Any], tokens: str
) -> None:
    checked = 0
    for point in _checkpoints(file, vocab, list(tokens)):
        for var in point.variables:
            if var.interpreter is None:
                continue
            assert var.wrong == (), (file, point.where, var.name)
            assert list(var.model) == list(var.interpreter), (file, point.where, var.name)
            for got, want in zip(var.model, var.interpreter, strict=True):
                # a dim that holds a whole number as an int and as a float (dyck1's default 0
                # beside its means; frac_prevs' first position, the one key's int 1, beside 1.0
                # of several) cannot tell them apart: it takes the interpreter's type where equal
                # (it gave the float, and this test let dyck1's 0 and frac_prevs' 0 and 1 pass)
                assert type(got) is type(want), (file, point.where, var.name, got)
            checked += 1
    assert checked > 0


def test_a_whole_number_the_dim_holds_both_ways_is_a_float_where_the_interpreter_differs() -> None:
    from rasp.tools.residual_types import typed

    class Dim:
        dims = (0,)
        values = None

    listed = {0: [(0.0, 0), (0.0, 0.0), (1.0, 1), (1.0, 1.0), (0.5, 0.5)]}
    got = typed(Dim(), [0.0, 1.0, 1.0, 0.5], None, listed, 1e-4, [0, 1.0, 2, 0.5])
    assert [(v, type(v)) for v in got] == [(0, int), (1.0, float), (1.0, float), (0.5, float)]
    # without the interpreter's values (it fails on the input) the float, as decoded
    assert [type(v) for v in typed(Dim(), [1.0], None, listed, 1e-4)] == [float]


def test_one_text_two_types() -> None:
    # tokens are the ints 1, 2; `reverse` holds the program's tokens, the strs "1", "2": both
    # groups label their columns `:1`, `:2`
    points = _checkpoints("reverse", [1, 2], [1, 2, 2])
    embedded = {v.name: v.model for v in points[0].variables}
    assert embedded["tokens"] == (1, 2, 2) and type(embedded["tokens"][0]) is int
    last = {v.name: v.model for v in points[-1].variables}
    assert last["reverse"] == ("2", "2", "1") and type(last["reverse"][0]) is str


def test_no_column_hot_is_no_value_not_none() -> None:
    assert str(NO_VALUE) == "?" and NO_VALUE is not None and NO_VALUE != None  # noqa: E711


@pytest.mark.parametrize(
    ("label", "value"),
    [("1", 1), ("-2", -2), ("1.0", 1.0), ("0.5", 0.5), ("True", True), ("None", None)]
    + [("'a'", "a"), ('"it\'s"', "it's"), ("'1'", "1"), ("('a', 1)", "('a', 1)")],
)
def test_reach_labels_read_back_typed(label: str, value: Any) -> None:
    found = reach_value(label)
    assert (type(found), found) == (type(value), value)

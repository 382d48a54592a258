"""Residual labels are unique: a value's text is `str(value)` unless an s-op's values would share
one (`1` and `"1"`), then its strings are JSON (`rasp.residual_labels`, docs/format.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import compile_sop
from rasp.atoms import atom_key
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.residual_labels import quoted, value_texts
from rasp.tools.inspect import format_summary, group_residual
from rasp.tools.residuals import ResidualVariable, _labels, residual_variables

REVERSE = "y = aggregate(select(indices, length - indices - 1, ==), tokens_asis);\n"

ATOMS = st.one_of(
    st.integers(-3, 12),
    st.floats(allow_nan=False, width=32),
    st.booleans(),
    st.none(),
    st.sampled_from(["1", "1.0", "True", "None", "x", "a:b", "a b", '"', '"1"', "", ":", "(1,)"]),
    st.text(max_size=3),
)


def _distinct(values: list[Any]) -> list[Any]:
    return list({atom_key(v): v for v in values}.values())


def _numbers(a: Any, b: Any) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))


@settings(max_examples=300, deadline=None)
@given(st.lists(ATOMS, max_size=8).map(_distinct))
@example([1, "1.0"])  # (found by a run of another seed)
def test_every_text_is_unique_and_read_back_as_its_own_value(values: list[Any]) -> None:
    texts = value_texts(values)
    assert len(set(texts)) == len(texts), texts
    mode = quoted(texts)
    variable = ResidualVariable("y", tuple(range(len(texts))), texts, mode)
    for text, value in zip(texts, values):
        assert _labels(text, value, mode), (text, value)
        assert variable.agrees(text, value), (text, value)
        for other in values:
            if other is not value and _labels(text, other, mode):
                # the label's one leniency: a number read by value in a column whose text spells
                # it (1 in 1.0's; also in the string "1.0"'s beside 1, whose text, unquoted as
                # nothing collides, is a number's) ...
                assert _numbers(other, other) and float(text) == other, (text, value, other)
            if other is not value:
                # ... which the variable uses only where the value has no column of its own
                assert not variable.agrees(text, other), (text, value, other)


def test_a_number_beside_its_equal_of_another_type_reads_as_its_own_column() -> None:
    # `res` holds 1.0, 1 and 2, each in a column of its own (the output tells 1 from 1.0):
    # a model that wrote `res:1` where the interpreter gives 1.0 agreed, as 1 == 1.0
    text = (
        'x = 1 if tokens == "a" else (1.0 if tokens == "b" else 2);\n'
        "y = aggregate(select(indices, 0, ==), x);\n"
    )
    res = residual_variables(_compile(text, ["a", "b", "c"], 3)["residual"])["y"]
    assert sorted(res.values or ()) == ["1", "1.0", "2"]
    assert res.agrees("1.0", 1.0) and res.agrees("1", 1) and res.agrees("2", 2.0)
    assert not res.agrees("1", 1.0) and not res.agrees("1.0", 1)
    # a value with no column of its own is read by value, as the compiler labels it canonically
    assert ResidualVariable("z", (0,), ("1",)).agrees("1", 1.0)


def test_texts_are_str_where_they_are_already_unique() -> None:
    assert value_texts(["a", "b", 1, 1.0, True, None]) == ("a", "b", "1", "1.0", "True", "None")
    assert value_texts([1, "1", 2, "x"]) == ("1", '"1"', "2", '"x"')
    assert value_texts([True, "True"]) == ("True", '"True"')
    assert value_texts([None, "None"]) == ("None", '"None"')
    # a string starting with a quote would read as JSON: its s-op's strings are JSON
    assert value_texts(['"1"', "a"]) == ('"\\"1\\""', '"a"')


def _compile(text: str, vocab: list[Any], n: int) -> dict[str, Any]:
    sop = load_source(Source("<test>", text)).get("y")
    return compile_sop(sop, vocab, n, name="y").metadata


def test_a_mixed_vocabulary_labels_every_dimension_apart() -> None:
    meta = _compile(REVERSE, [1, "1", 2, "x"], 4)
    residual = meta["residual"]
    assert len(set(residual)) == len(residual), residual
    assert residual[3:7] == ["tokens:1", 'tokens:"1"', "tokens:2", 'tokens:"x"']
    assert [label for label in residual if label.startswith("y:")] == [
        "y:1",
        "y:2",
        'y:"1"',
        'y:"x"',
    ]
    lines = [group.describe() for group in group_residual(residual)]
    assert 'tokens: 1 "1" 2 "x"' in lines
    assert 'y: 1 2 "1" "x"' in lines
    tokens = residual_variables(residual)["tokens"]
    assert tokens.quoted
    assert not tokens.agrees('"1"', 1) and not tokens.agrees("1", "1")
    assert tokens.agrees('"1"', "1") and tokens.agrees("1", 1)


def test_a_plain_variable_reads_as_before() -> None:
    var = ResidualVariable("t", (0, 1), ("a", "b"))
    assert var.agrees("a", "a") and not var.agrees("a", "b")
    # a file written before the rule: a string token `"a` (not JSON) is read as written
    old = residual_variables(["one", "bos", "pad", 'tokens:"a', "tokens:b"])["tokens"]
    assert not old.quoted and old.agrees('"a', '"a')


@settings(max_examples=6, deadline=None)
# bools beside numbers are refused (a model reads True as 1): value_texts covers them above
@given(st.lists(ATOMS.filter(lambda v: v is not None and not isinstance(v, bool)), max_size=3))
def test_compiled_labels_are_unique_for_mixed_vocabularies(tokens: list[Any]) -> None:
    vocab = _distinct([1, "1", *tokens])
    meta = _compile(REVERSE, vocab, 2)
    residual = meta["residual"]
    assert len(set(residual)) == len(residual), residual
    summary = "\n".join(g.describe() for g in group_residual(residual))
    assert summary.count("tokens:") == 1
    tokens = residual_variables(residual)["tokens"]
    for text, token in zip(tokens.values or (), vocab):
        assert tokens.agrees(text, token), (text, token)


def test_the_show_table_lists_a_quoted_group(tmp_path: Any) -> None:
    pytest.importorskip("transformer")
    from rasp.tools.cli import main

    program = tmp_path / "p.rasp"
    program.write_text(REVERSE)
    model = tmp_path / "p.safetensors"
    vocab = json.dumps([1, "1", 2, "x"])
    assert (
        main(["compile", str(program), "--vocab", vocab, "--max-len", "3", "-o", str(model)]) == 0
    )
    from rasp.tools.inspect import summarize
    from rasp.tools.model_file import read_model_file

    text = format_summary(summarize(read_model_file(str(model))))
    assert 'tokens: 1 "1" 2 "x"' in text


def test_a_tracr_label_spelling_a_derived_name_is_renamed() -> None:
    """`.named("indices^2")` was the numerical-addressing dimension's own label: the certifier
    refused the model (its head "writes the 'indices^2' dimension, which the embedding wrote")."""
    from rasp import tracr as rasp

    ones = rasp.numerical(rasp.Map(lambda x: 1 if x == "a" else 0, rasp.tokens))
    prefix = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    mean = rasp.numerical(rasp.Aggregate(prefix, ones, default=0)).named("indices^2")
    flip = rasp.Select(rasp.indices, rasp.length - rasp.indices - 1, rasp.Comparison.EQ)
    rev = rasp.Aggregate(flip, rasp.tokens).named("rev")
    out = rasp.SequenceMap(lambda x, y: (x > 0.4, y), mean, rev).named("out")
    residual = compile_sop(out, ["a", "b"], 3).metadata["residual"]
    assert len(set(residual)) == len(residual), residual
    assert residual.count("indices^2") == 1 and "indices_2" in residual


def test_a_tracr_label_with_a_dot_extending_no_name_is_kept() -> None:
    """Only a label that extends another name changes: `re.v` is kept, so a file compiled from it
    before still rebuilds the same reach (`rasp verify --model`)."""
    from rasp import tracr as rasp

    flip = rasp.Select(rasp.indices, rasp.length - rasp.indices - 1, rasp.Comparison.EQ)
    out = rasp.Aggregate(flip, rasp.tokens).named("re.v")
    meta = compile_sop(out, ["a", "b"], 3).metadata
    assert "re.v:a" in meta["residual"] and meta["output"]["name"] == "re.v"


def test_show_notes_a_file_whose_labels_repeat() -> None:
    from rasp.tools.inspect import _repeated_label

    old = ["one", "bos", "pad", "tokens:1", "tokens:1", "tokens:x", "y", "y:1"]
    assert _repeated_label(group_residual(old)) == "tokens:1"
    new = ["one", "bos", "pad", "tokens:1", 'tokens:"1"', 'tokens:"x"', "y", "y:1"]
    assert _repeated_label(group_residual(new)) is None


def test_the_decoded_residual_shows_the_interpreter_as_the_labels_do() -> None:
    """`:residual` and verify's diagnosis print the model's value beside the interpreter's as the
    labels write them: in a quoted variable the string "1" is `"1"` on both sides, the int 1 is
    `1`."""
    pytest.importorskip("transformer")
    from rasp.tools.model_steps import in_memory_model, nodes_by_residual_name
    from rasp.tools.repl_residual import _checkpoint_rows
    from rasp.tools.residuals import decode_checkpoints

    vocab = [1, "1", 2, "x"]
    sop = load_source(Source("<test>", REVERSE)).get("y")
    compiled = compile_sop(sop, vocab, 3, name="y")
    model = in_memory_model(compiled)
    nodes = nodes_by_residual_name(sop, vocab, 3, compiled.metadata)
    points = decode_checkpoints(model, ["1", "x"], nodes)
    decoded = {v.name: v for point in points for v in point.variables}
    # the values themselves (decode_checkpoints types them), shown as the labels write them
    assert decoded["y"].quoted and decoded["y"].model == ("x", "1")
    assert not any(v.wrong for point in points for v in point.variables)
    rows = [r for r in _checkpoint_rows(points, compiled.metadata) if isinstance(r, tuple)]
    assert ("y", '["x", "1"]', '["x", "1"]') in [(n, a, b) for _, n, a, b in rows]


def test_a_divergence_shows_a_quoted_variable_s_interpreter_string_quoted() -> None:
    from rasp.tools.verify_text import _value_text

    assert _value_text("1", quoted=True) == '"1"' and _value_text(1, quoted=True) == "1"
    assert _value_text("1") == "1"


@pytest.mark.parametrize("name", ["one", "bos", "pad", "tokens"])
def test_a_variable_named_as_a_special_dimension_is_renamed(name: str) -> None:
    flip = "aggregate(select(indices, length - indices - 1, ==), tokens)"
    text = f"{name} = {flip};\ny = aggregate(select(indices, 0, ==), {name});\n"
    residual = _compile(text, ["a", "b"], 3)["residual"]
    assert len(set(residual)) == len(residual), residual
    assert f"{name}_2:a" in residual

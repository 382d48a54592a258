"""Typed residual values: the file's `residual_values`, `sop_hook` matching a value by type as
RASP compares values, and `residual_dim` reading a label back.

A label's text cannot tell the int 1 from the str "1" (an s-op of strings alone writes `x:1`):
sop_hook took the str "1" for the int token 1 and "False" for the bool False, patching a value
the program never holds at that dim.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from transformer import ModelFormatError, ModelInputError

ROOT = Path(__file__).resolve().parents[2]


def _compiled(source: str, name: str, vocab: list[Any], tmp_path: Path) -> Any:
    path = tmp_path / "p.rasp"
    path.write_text(source)
    return compile_sop(load_file(path).get(name), vocab, 4)


@pytest.fixture(scope="module")
def numbers() -> Any:
    # tokens are the ints 1, 2; `reverse` holds them as the program reads them: the strs "1", "2"
    program = load_file(ROOT / "programs" / "reverse.rasp").get("reverse")
    return compile_sop(program, [1, 2], 4)


def test_the_file_records_each_columns_typed_value(numbers: Any) -> None:
    meta = numbers.metadata
    typed = dict(zip(meta["residual"], meta["residual_values"], strict=True))
    assert typed["tokens:1"] == [1] and typed["reverse:1"] == ["1"]  # one text, two values
    assert typed["one"] is None and typed["length"] is None  # not a one-hot column
    model = transformer.from_tensors(numbers.weights, meta)
    values = model.meta.residual_values
    assert values is not None and values[model.residual_labels.index("tokens:1")] == (1,)
    assert type(values[model.residual_labels.index("reverse:1")][0]) is str


def test_sop_hook_matches_a_value_by_type(numbers: Any) -> None:
    model = transformer.from_tensors(numbers.weights, numbers.metadata)
    with pytest.raises(ModelInputError) as err:
        model.sop_hook("tokens", "1", position=0)
    assert str(err.value) == (
        "tokens has no value '1' in the model; its values are 1, 2; 1 is the int, not the str '1'"
    )
    with pytest.raises(ModelInputError, match="its values are '1', '2'; '1' is the str, not the"):
        model.sop_hook("reverse", 1, position=0)
    # the int token 2 at position 0 is the input that starts with 2
    hook = model.sop_hook("tokens", 2, position=0)
    assert model.run_hooked([[1, 1, 2]], [hook]) == model.run([[2, 1, 2]])
    assert model.sop_hook("reverse", "2", position=0)[1].numbers[-1] == 1.0


def test_equal_values_of_another_type_match_as_rasp_compares(numbers: Any) -> None:
    # RASP's `==` is Python's: 1.0 == 1 == True, so each names the int column where it is alone
    model = transformer.from_tensors(numbers.weights, numbers.metadata)
    want = model.sop_hook("tokens", 1, position=0)[1].numbers
    assert model.sop_hook("tokens", 1.0, position=0)[1].numbers == want
    assert model.sop_hook("tokens", True, position=0)[1].numbers == want


def test_a_value_equal_to_several_columns_is_ambiguous(tmp_path: Path) -> None:
    program = load_file(ROOT / "programs" / "reverse.rasp").get("reverse")
    compiled = compile_sop(program, [1, "1", True], 3)
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    labels = model.residual_labels
    for value, label in ((1, "tokens:1"), ("1", 'tokens:"1"'), (True, "tokens:True")):
        dims, numbers = model.sop_hook("tokens", value, position=0)[1].dims, None
        numbers = model.sop_hook("tokens", value, position=0)[1].numbers
        assert labels[dims[numbers.index(1.0)]] == label
    with pytest.raises(ModelInputError) as err:
        model.sop_hook("tokens", 1.0)
    assert str(err.value) == (
        "tokens has several values equal to 1.0 (1, True), one column each; give the value of "
        "the column meant, with its type"
    )


def test_bools_are_not_their_text(tmp_path: Path) -> None:
    source = 'flag = tokens == "a";\nfirst = aggregate(select(indices, 0, ==), flag);'
    compiled = _compiled(source, "first", ["a", "b"], tmp_path)
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    labels = model.residual_labels
    assert [label for label in labels if label.startswith("first:")] == [
        "first:False",
        "first:True",
        "first:0",  # the aggregate's default, where no key is selected
    ]
    with pytest.raises(ModelInputError, match="False is the bool, not the str 'False'"):
        model.sop_hook("first", "False")
    hook = model.sop_hook("first", False, position=1)
    assert model.run_hooked(["aa"], [hook]) == [[True, False]]

    def hot(value: Any) -> str:
        patch = model.sop_hook("first", value)[1]
        return labels[patch.dims[patch.numbers.index(1.0)]]

    # 0 == False in RASP, but the int 0 has a column of its own: the value's own type first
    assert (hot(False), hot(0), hot(True), hot(1)) == (
        "first:False",
        "first:0",
        "first:True",
        "first:True",
    )
    with pytest.raises(ModelInputError, match=r"several values equal to 0.0 \(False, 0\)"):
        hot(0.0)


def test_a_file_without_typed_values_loads_and_matches_by_text(numbers: Any) -> None:
    meta = copy.deepcopy(numbers.metadata)
    del meta["residual_values"]  # as compilers before 2026-12-06 wrote it
    model = transformer.from_tensors(numbers.weights, meta)
    assert model.meta.residual_values is None
    assert model.sop_hook("tokens", "1", position=0)[1].numbers[:2] == (1.0, 0.0)  # by text
    assert model.residual_dim("tokens:1").typed is False


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda v: v[:-1], "must be a list of"),
        (lambda v: [["2"] if e == ["1"] else e for e in v], r'holds \["2"\] for residual dim'),
        (lambda v: [[1, 2] if e == [1] else e for e in v], r"holds \[1, 2\]"),
        (lambda v: [[1] if i == 0 else e for i, e in enumerate(v)], r'dim 0 \("one"\)'),
    ],
)
def test_a_malformed_field_is_refused(numbers: Any, edit: Any, message: str) -> None:
    meta = copy.deepcopy(numbers.metadata)
    meta["residual_values"] = edit(meta["residual_values"])
    with pytest.raises(ModelFormatError, match=message):
        transformer.from_tensors(numbers.weights, meta)


def test_a_label_reads_back_as_variable_value_and_writer() -> None:
    program = load_file(ROOT / "programs" / "sort.rasp").get("sorted")
    model = transformer.from_tensors(*_parts(compile_sop(program, list("abc"), 5)))
    dim = model.residual_dim("tokens:a")
    assert (dim.index, dim.group, dim.variable, dim.value, dim.typed) == (
        3,
        "tokens",
        "tokens",
        "a",
        True,
    )
    assert dim.categorical and dim.written_by == ("embedding",)
    assert dim.hook == "blocks.0.hook_resid_pre"
    part = model.residual_dim("target_position.int")
    assert (part.variable, part.categorical, part.value) == ("target_position", False, None)
    assert part.written_by == ("layer 1 mlp",) and part.hook == "blocks.1.hook_resid_post"
    assert model.residual_dim("target_position.frac1").written_by == ("layer 0 head 1",)
    assert model.residual_dim("indices^2").variable == "indices"
    assert model.residual_dim(0).variable is None  # `one`
    out = model.residual_dim("sorted:0")  # the aggregate's default, the int 0
    assert out.value == 0 and type(out.value) is int and out.written_by == ("layer 2 head 0",)
    with pytest.raises(ModelInputError, match="no residual dimension is labelled 'tokens:d'"):
        model.residual_dim("tokens:d")
    with pytest.raises(ModelInputError, match="out of range"):
        model.residual_dim(99)


def test_a_group_or_variable_reads_back_as_all_its_dims() -> None:
    # `residual_dim("sorted")` was refused with "did you mean sorted:c": a variable's dims were
    # found by filtering every label by hand
    program = load_file(ROOT / "programs" / "sort.rasp").get("sorted")
    model = transformer.from_tensors(*_parts(compile_sop(program, list("abc"), 5)))
    out = model.residual_dims("sorted")
    assert [(d.label, d.value) for d in out] == [
        ("sorted:0", 0),
        ("sorted:a", "a"),
        ("sorted:b", "b"),
        ("sorted:c", "c"),
    ]
    assert {d.hook for d in out} == {"blocks.2.hook_resid_mid"}
    parts = [d.label for d in model.residual_dims("target_position")]  # a variable, no group
    assert parts[0] == "target_position.frac0" and parts[-1] == "target_position.sq"
    assert [d.label for d in model.residual_dims("indices")] == ["indices"]  # the group first
    with pytest.raises(ModelInputError, match=r"names several \(sorted:0, sorted:a, sorted:b, "):
        model.residual_dim("sorted")
    with pytest.raises(ModelInputError, match="residual_dims\\('sorted'\\) gives them all"):
        model.residual_dim("sorted")
    with pytest.raises(ModelInputError, match="did you mean target_position"):
        model.residual_dims("target_positon")


def _parts(compiled: Any) -> tuple[Any, Any]:
    return compiled.weights, compiled.metadata


@pytest.mark.parametrize(
    ("group", "variable"),
    [
        ("x.frac", "x"),
        ("x.x2.int", "x"),  # a scaled sum's parts (compiler/squares.py)
        ("target_position.frac1", "target_position"),
        ("w.pick3", "w"),
        ("indices^2", "indices"),
        ("indices~_select_5", "indices"),
        ("re.v", "re.v"),  # a tracr name keeps a dot that derives nothing
        ("_selector_width_1.frac", "_selector_width_1"),
    ],
)
def test_a_group_names_its_variable(group: str, variable: str) -> None:
    from transformer.residual_dims import variable_of

    assert variable_of(group) == variable

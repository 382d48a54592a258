"""The certificate checks where the walk starts and ends against the program: the embedding writes,
at every token id and real position, the values the reach records for the readings only it writes
(compiler/certify_embed.py), and a one-hot output's listed values are the output reading's.

Each edit below re-checked as proved before those checks (the blocks were compared with the
program, the embedding only measured): `recheck` now refuses it, naming the token or position,
the reading and both values, and so does `rasp verify`'s certificate line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from compiler import compile_sop
from compiler.certificate import Certificate
from compiler.certify import recheck
from compiler.model import CompiledModel
from compiler.reach import Reach
from rasp.errors import Source
from rasp.interpreter import load_file as load_program
from rasp.interpreter import load_source
from rasp.tools.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _library(name: str, vocab: str, max_len: int) -> CompiledModel:
    interp = load_program(ROOT / "programs" / f"{name}.rasp")
    out = interp.last_assigned
    assert out is not None
    return compile_sop(interp.get(out), list(vocab), max_len, name=out)


def _text(text: str, vocab: list[str], max_len: int) -> CompiledModel:
    return compile_sop(load_source(Source("<test>", text)).get("res"), vocab, max_len)


def _recheck(
    model: CompiledModel, edit: dict[str, np.ndarray] | None = None, metadata: Any = None
) -> Certificate:
    """The certificate of the model's weights with `edit` replacing some, against its metadata
    read back as a file gives it (JSON)."""
    meta = json.loads(json.dumps(model.metadata if metadata is None else metadata))
    return recheck({**model.weights, **(edit or {})}, meta)


def _rows(model: CompiledModel, name: str, to: int, source: int) -> dict[str, np.ndarray]:
    """The weights' `name` with row `to` replaced by row `source` (swapped with it: `swap`)."""
    w = model.weights[name].copy()
    w[to] = model.weights[name][source]
    return {name: w}


def _swap(model: CompiledModel, name: str, a: int, b: int) -> dict[str, np.ndarray]:
    w = model.weights[name].copy()
    w[[a, b]] = w[[b, a]]
    return {name: w}


def _refused(cert: Certificate) -> str:
    assert not cert.ok and len(cert.errors) == 1, cert
    return cert.errors[0]


@pytest.fixture(scope="module")
def sort() -> CompiledModel:
    return _library("sort", "abc", 6)  # tokens (one-hot), indices (a vector: i, i * i)


def test_the_compiled_models_re_check(sort: CompiledModel) -> None:
    # (so that the refusals below are the edits', not the files')
    assert _recheck(sort).ok
    inputs = Reach.from_json(sort.metadata["reach"]).inputs
    assert inputs is not None and {i.by.value for i in inputs} == {"token", "position"}


def test_swapped_token_rows_are_refused(sort: CompiledModel) -> None:
    reason = _refused(_recheck(sort, _swap(sort, "embed.W_E", 0, 1)))
    assert reason == (
        "the embedding writes tokens = 'b' for token 'a' (id 0), where the program has tokens = 'a'"
    )


def test_swapped_rows_of_a_view_of_the_token_are_refused() -> None:
    # dyck1 reads only a number of the token (+1 for "(", -1 for ")"), not the token itself
    model = _library("dyck1", "()x", 6)
    assert _recheck(model).ok
    reason = _refused(_recheck(model, _swap(model, "embed.W_E", 0, 1)))
    assert reason == (
        "the embedding writes _map_5 = -1 for token '(' (id 0), where the program has _map_5 = 1"
    )


def test_a_changed_position_row_is_refused(sort: CompiledModel) -> None:
    # position 3 made a copy of position 2: a valid index, the wrong one
    reason = _refused(_recheck(sort, _rows(sort, "pos_embed.W_pos", 3, 2)))
    assert reason == (
        "the embedding writes indices = 1 for position 3 (index 2), where the program has "
        "indices = 2"
    )


def test_a_changed_row_of_a_map_of_the_position_is_refused() -> None:
    # induction embeds a map of the position beside `indices` in W_pos: the column
    # `indices~_select_4:1` (index > 0, the keys its rank counts; an `indices + 1` one-hot until
    # its index was read as a number by matching)
    model = _library("induction", "abc", 5)
    assert _recheck(model).ok
    w_pos = model.weights["pos_embed.W_pos"].copy()
    col = model.metadata["residual"].index("indices~_select_4:1")
    assert w_pos[4, col] == 1.0
    w_pos[4, col] = 0.0  # position 4 (index 3) reads as index 0 there
    reason = _refused(_recheck(model, {"pos_embed.W_pos": w_pos}))
    assert reason == (
        "the embedding writes indices~_select_4 = 0 for position 4 (index 3), where the program "
        "has indices~_select_4 = 1"
    )


def test_the_one_dimension_is_checked(sort: CompiledModel) -> None:
    w_e = sort.weights["embed.W_E"].copy()
    w_e[1, sort.metadata["residual"].index("one")] = 0.5
    reason = _refused(_recheck(sort, {"embed.W_E": w_e}))
    assert reason == (
        "the embedding writes 'one' = 0.5 for token 'b' (id 1) at position 1; at a real "
        "position it is 1"
    )


@pytest.mark.parametrize("label", ["one", "bos", "pad"])
def test_a_residual_without_a_special_label_is_not_proved(sort: CompiledModel, label: str) -> None:
    # a hand-edited label: `rasp verify --model` crashed (ValueError: 'one' is not in list)
    edited = json.loads(json.dumps(sort.metadata))
    edited["residual"][edited["residual"].index(label)] = "renamed"
    assert _refused(_recheck(sort, metadata=edited)) == (
        f"the file's residual labels no {label!r} dimension"
    )


def test_dimensions_a_sum_of_token_and_position_reads_are_pinned() -> None:
    # `tokens_int + indices` reads the token's and the position's dimensions in one number: it
    # is a function of neither alone, so the compiler records each dimension it reads
    model = _text(
        "res = selector_width(select(tokens_int + indices, tokens_int + indices, ==));",
        ["0", "1", "2"],
        5,
    )
    reach = Reach.from_json(model.metadata["reach"])
    assert reach.inputs is not None
    pinned = {reach.readings[i.reading].name for i in reach.inputs}
    assert {"tokens:1", "tokens:2", "indices"} <= pinned
    assert _recheck(model).ok
    reason = _refused(_recheck(model, _swap(model, "embed.W_E", 1, 2)))
    assert reason == (
        "the embedding writes tokens:1 = 0 for token '1' (id 1), where the program has tokens:1 = 1"
    )
    # without its records the reading's dimensions are pinned by nothing
    bare = json.loads(json.dumps(model.metadata))
    bare["reach"]["inputs"] = []
    reason = _refused(_recheck(model, metadata=bare))
    assert "reads residual dimension" in reason and "no record of the embedding pins" in reason


def test_a_reach_without_the_record_is_not_proved(sort: CompiledModel) -> None:
    older = json.loads(json.dumps(sort.metadata))
    del older["reach"]["inputs"]  # as an older compiler wrote it
    reason = _refused(_recheck(sort, metadata=older))
    assert "does not record what the embedding holds" in reason and "recompile" in reason


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda r: r["readings"][0].update(terms=[[[99999, 1.0]]]), "residual dimension 99999"),
        (lambda r: r["readings"][0].update(terms=[[[-1, 1.0]]]), "residual dimension -1"),
        (lambda r: r["mlps"][0].update(out=10**6), "names reading 1000000"),
        (lambda r: r["heads"][0]["values"][0].update(out=[-3]), "residual dimension -3"),
        (lambda r: r.update(output=len(r["readings"])), "the output names reading"),
    ],
)
def test_a_reach_naming_what_does_not_exist_is_malformed(
    sort: CompiledModel, edit: Any, says: str
) -> None:
    # a reading's dimension past d_model raised IndexError in the embedding check (an internal
    # error in rasp verify); a negative one wrapped round in numpy
    meta = json.loads(json.dumps(sort.metadata))
    edit(meta["reach"])
    cert = _recheck(sort, metadata=meta)
    assert not cert.ok and "the file's reach is malformed" in cert.errors[0]
    assert says in cert.errors[0]


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["mlps"][0]["points"][0].pop(1),  # ValueError: shapes (7,1) (8,1)
        lambda r: r["inputs"][1].update(reading=0),  # ValueError: zip() argument 2 is shorter
        lambda r: r["heads"][1]["values"][0]["columns"].__setitem__(1, 10**30),  # OverflowError
        lambda r: r["heads"][1]["atoms"][0]["shape"].__setitem__(1, 10**30),  # OverflowError
        lambda r: r["heads"][0].update(head=1.5),  # IndexError
    ],
)
def test_a_reach_the_walk_cannot_read_is_malformed_not_a_crash(edit: Any) -> None:
    # hand edits the reader's own checks let through: `rasp verify --model` (with or without
    # --no-rebuild: it proves the weights against the file's reach too) ended in an internal error
    model = _library("reverse", "abc", 8)
    meta = json.loads(json.dumps(model.metadata))
    edit(meta["reach"])
    cert = _recheck(model, metadata=meta)
    assert not cert.ok and cert.errors[0].startswith("the file's reach is malformed ("), cert


def test_an_edited_output_list_is_refused(sort: CompiledModel) -> None:
    # the argmax is right, but the file would decode its column as another value
    edited = json.loads(json.dumps(sort.metadata))
    values = edited["output"]["values"]
    assert values[1:3] == ["a", "b"]  # (column 0 is the aggregate's default, 0)
    values[1], values[2] = values[2], values[1]
    reason = _refused(_recheck(sort, metadata=edited))
    assert reason == (
        "the file decodes logit column 1 of the output 'sorted' as 'b', where the program's "
        "value is 'a'"
    )


def test_swapped_unembedding_columns_are_refused(sort: CompiledModel) -> None:
    # (the decoder check reads column k as value k: this held before, and is kept)
    w_u = sort.weights["unembed.W_U"].copy()
    w_u[:, [0, 1]] = w_u[:, [1, 0]]
    cert = _recheck(sort, {"unembed.W_U": w_u})
    assert not cert.ok and [c.sublayer for c in cert.failures()] == ["decoder"]


def _edit_file(path: Path, out: Path, tensors: dict[str, Any], meta: Any = None) -> None:
    with safe_open(str(path), "np") as f:
        header = f.metadata()
    if meta is not None:
        header = {**header, "rasp_forge": json.dumps(meta)}
    save_file({**load_file(str(path)), **tensors}, str(out), metadata=header)


@pytest.mark.parametrize("edit", ["token rows", "output list"])
def test_verify_says_the_certificate_is_not_proved(
    edit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = str(ROOT / "programs" / "sort.rasp")
    args = ["--vocab", "abc", "--max-len", "5"]
    model = tmp_path / "sort.safetensors"
    assert main(["compile", program, *args, "-o", str(model)]) == 0
    edited = tmp_path / "edited.safetensors"
    with safe_open(str(model), "np") as f:
        meta = json.loads(f.metadata()["rasp_forge"])
    if edit == "token rows":
        w_e = load_file(str(model))["embed.W_E"].copy()
        w_e[[0, 1]] = w_e[[1, 0]]
        _edit_file(model, edited, {"embed.W_E": w_e})
        reason = "the embedding writes tokens = 'b' for token 'a' (id 0)"
    else:
        meta["output"]["values"][1:3] = meta["output"]["values"][2:0:-1]  # 'a', 'b' swapped
        _edit_file(model, edited, {}, meta)
        reason = "the file decodes logit column 1 of the output 'sorted' as 'b'"
    capsys.readouterr()
    code = main(["verify", program, *args, "--model", str(edited)])
    text = "".join(capsys.readouterr())
    assert code == 1
    line = next(x for x in text.splitlines() if x.strip().startswith("certificate:"))
    assert "NOT proved" in line and reason in line and "(re-checked from the weights)" in line
    # the file's own certificate said proved; an edited output list is no edit of the weights
    assert "the file's weights or metadata do not match it" in text


def test_decode_reads_each_row_as_the_first_value_that_holds() -> None:
    from compiler.certify_embed import decode
    from compiler.reach import Reading

    # dims 1..3; value 0 stands for dim 1 or 2 (a view), value 1 for dim 3, value 2 for none
    view = Reading("v", True, (((1, 1.0), (2, 1.0)), ((3, 1.0),), ()), (), ("x", "y", "z"))
    rows = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0], [1, 1, 0], [0.5, 0, 0], [0, 0, -1]])
    columns = {d: rows[:, d - 1].astype(float) for d in (1, 2, 3)}
    assert decode(view, columns, 0) == [0.0, 1.0, 2.0, None, None, None]
    number = Reading("n", False, (((0, -1.0), (1, 2.0), (3, 0.5)),), (0.0,), ("0",))
    assert decode(number, columns, 0) == [-1.0, -0.5, -1.0, 1.0, 0.0, -1.5]
    pair = Reading("i", False, (((1, 0.0), (2, 0.0)), ((1, 1.0), (2, 1.0))), (), ("0", "1"), True)
    assert decode(pair, {1: np.array([0.0, 1.0, 1.0]), 2: np.array([0.0, 1.0, 2.0])}, 0) == [
        0.0,
        1.0,
        None,
    ]

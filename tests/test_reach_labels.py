"""A file's reach compared with the rebuilt one by residual label where the two residuals are laid
out otherwise (rasp.tools.reach_labels): an earlier compiler's file of the same program is equal,
a reach that means something else is not, and labels that cannot name dimensions one to one leave
the comparison by position."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rasp.tools.cli import main
from rasp.tools.reach_labels import by_label
from rasp.tools.rebuild import rebuild_reach

ROOT = Path(__file__).resolve().parents[1]
LENGTH = str(ROOT / "programs" / "length.rasp")
ONE_HOT = ["tokens:a", "tokens:b", "tokens:c"]


@pytest.fixture(scope="module")
def length_meta(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("labels") / "length.safetensors"
    args = ["compile", "-q", LENGTH, "--vocab", "abc", "--max-len", "4", "-o", str(path)]
    assert main(args) == 0
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    meta: dict[str, Any] = json.loads(json.loads(data[8 : 8 + size])["__metadata__"]["rasp_forge"])
    return meta


def as_before_12_05(meta: dict[str, Any]) -> dict[str, Any]:
    """The metadata as compilers before 2026-12-05 wrote it: the token one-hot laid out after
    one, bos and pad (dimensions 3..5), read by nothing, every later dimension 3 further on."""
    old = copy.deepcopy(meta)
    assert old["residual"][:3] == ["one", "bos", "pad"] and "tokens:a" not in old["residual"]
    old["residual"][3:3] = ONE_HOT

    def moved(d: int) -> int:
        return d + len(ONE_HOT) if d >= 3 else d

    for reading in old["reach"]["readings"]:
        reading["terms"] = [[[moved(d), c] for d, c in terms] for terms in reading["terms"]]
    for head in old["reach"]["heads"]:
        for value in head["values"]:
            value["out"] = [moved(d) for d in value["out"]]
    return old


def test_an_earlier_compilers_layout_rebuilds_equal_by_label(length_meta: dict[str, Any]) -> None:
    old = as_before_12_05(length_meta)
    assert old["reach"] != length_meta["reach"]  # by position it differs: `_map_2` at 6, not 3
    rebuild = rebuild_reach(old, "old.safetensors")
    assert rebuild.ok is True, rebuild.line
    assert rebuild.line == (
        "rebuilt from the recorded program: equal to the file's with its residual dimensions "
        "matched by label (laid out otherwise; the file also lays out tokens:a, tokens:b, "
        "tokens:c, which its reach does not read)"
    )
    same = rebuild_reach(length_meta, "new.safetensors")
    assert same.ok is True and same.line == "rebuilt from the recorded program: equal to the file's"


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        # the MLP's output at first_share = 0.25: 1, not 4
        (
            lambda m: m["reach"]["mlps"][0].update(outputs=[1.0, 3.0, 2.0, 1.0]),
            "layer 0 mlp (`seq_length`), outputs[0] is 1.0 in the file, 4.0 rebuilt",
        ),
        # the head writes the one-hot's first dimension, not first_share's
        (
            lambda m: m["reach"]["heads"][0]["values"][0].update(out=[3]),
            'layer 0 head 0 (`first_share`), values[0].out[0] is "tokens:a" in the file, '
            '"first_share" rebuilt',
        ),
        # seq_length read through another dimension
        (
            lambda m: m["residual"].__setitem__(m["residual"].index("seq_length"), "seq"),
            'reading `seq_length`, terms[0][0][0] is "seq" in the file, "seq_length" rebuilt',
        ),
    ],
)
def test_a_reach_that_differs_by_label_is_not_proved_and_named(
    length_meta: dict[str, Any], edit: Any, says: str
) -> None:
    old = as_before_12_05(length_meta)
    edit(old)
    rebuild = rebuild_reach(old, "old.safetensors")
    assert rebuild.ok is False
    assert rebuild.line.startswith(
        "NOT proved: old.safetensors: the file's reach differs from the one the recorded program "
        f"compiles to, its residual dimensions matched by label: {says} (edited after compiling, "
        "or written by an earlier compiler: compile the program again)"
    ), rebuild.line


def test_labels_that_name_no_dimension_one_to_one_leave_the_comparison_by_position(
    length_meta: dict[str, Any],
) -> None:
    old = as_before_12_05(length_meta)
    old["residual"][4] = "tokens:a"  # two dimensions of one label: a renaming that merges them
    rebuild = rebuild_reach(old, "old.safetensors")
    assert rebuild.ok is False
    assert "its residual dimensions matched by label" not in rebuild.line
    assert "reading `_map_2`, terms[0][0][0] is 6 in the file, 3 rebuilt" in rebuild.line


def test_by_label_names_dimensions_and_refuses_what_it_cannot_name() -> None:
    reach = {
        "readings": [{"terms": [[[2, 1.0], [0, -1.0]]]}],
        "heads": [{"values": [{"out": [1, 2]}]}],
        "mlps": [{"points": [[0.5]]}],
    }
    residual = ["one", "bos", "x"]
    labelled = by_label(reach, residual)
    assert labelled is not None
    # in the order written (a copy's columns index its out dims)
    assert labelled["readings"][0]["terms"] == [[["x", 1.0], ["one", -1.0]]]
    assert labelled["heads"][0]["values"][0]["out"] == ["bos", "x"]
    assert labelled["mlps"] is reach["mlps"]
    assert reach["readings"][0]["terms"] == [[[2, 1.0], [0, -1.0]]]  # not edited in place
    assert by_label(reach, ["one", "one", "x"]) is None
    assert by_label(reach, ["one", "bos"]) is None  # dimension 2 unnamed
    assert by_label(reach, "one bos x") is None
    assert by_label([], residual) is None
    assert by_label({"readings": []}, residual) is None  # no heads: not a reach
    for bad in ([[[True, 1.0]]], [[[2]]], [[-1, 1.0]], None):
        edited = {**reach, "readings": [{"terms": bad}]}
        assert by_label(edited, residual) is None, bad

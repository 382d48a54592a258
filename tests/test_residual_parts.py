"""`rasp.tools.residual_parts`: a variable the residual stream holds only in parts is decoded
through the readings of it the file's reach records, at the checkpoint that completes them, so a
fault in one of its parts is located there (verify named such variables unchecked, and blamed the
first whole variable after them). Without a reach it is still named unchecked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rasp.sops import MapSOp, SOp, TokensSOp
from rasp.tools.residual_parts import PartsReading, ReadingKind, parts_readings
from rasp.tools.residual_types import NO_VALUE
from rasp.tools.residuals import decode_checkpoints
from rasp.tools.verify import Divergence, diagnose, nodes_by_name

LABELS = ["one", "bos", "tokens:a", "tokens:b", "w.frac0", "w.part0", "w.part1", "w.int", "w.sq"]
# w (2 for "a", 1 for "b") is part0 + part1 (1 and w - 1); `w.int` and `w.sq` hold w and (w - 1)^2
READINGS = [
    {"name": "w.frac0", "categorical": False, "terms": [[[4, 1.0]]], "labels": ["0.5"]},
    {"name": "w", "categorical": False, "terms": [[[5, 1.0], [6, 1.0]]], "labels": ["1", "2"]},
    {"name": "w.int", "categorical": False, "terms": [[[7, 1.0]]], "labels": ["1", "2"]},
    {
        "name": "w.int",
        "categorical": False,
        "vector": True,
        "terms": [[[7, 1.0], [8, 0.0]], [[7, 2.0], [8, 1.0]]],
        "labels": ["1", "2"],
    },
]
HOOKS = [
    ("blocks.0.hook_resid_pre", {}),
    ("blocks.0.hook_resid_mid", {4: lambda w: 0.5}),
    ("blocks.0.hook_resid_post", {5: lambda w: 1.0, 6: lambda w: w - 1.0}),
    ("blocks.1.hook_resid_mid", {}),
    ("blocks.1.hook_resid_post", {7: lambda w: float(w), 8: lambda w: (w - 1.0) ** 2}),
]


def _program() -> SOp:
    return MapSOp(
        fn=lambda t: 2 if t == "a" else 1, inputs=(TokensSOp(name="tokens"),), text="w", name="w"
    )


def _meta(reach: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "residual": LABELS,
        "layers": [
            {
                "attn": [{"head": 0, "name": "w.part0", "op": "w (term 0)"}],
                "mlp": [
                    {"name": "w.part0", "op": "w (term 0)"},
                    {"name": "w.part1", "op": "w (term 1)"},
                ],
            },
            {
                "attn": [],
                "mlp": [
                    {"name": "w.int", "op": "w as a whole number (matched)"},
                    {"name": "w.sq", "op": "the square of w (matched)"},
                ],
            },
        ],
        "output": {"name": "w"},
    }
    if reach:
        meta["reach"] = {"readings": READINGS}
    return meta


class PartsModel:
    """Writes w's parts at their sublayers; `corrupt` = (dim, value) added from that dim's hook on."""

    def __init__(self, meta: dict[str, Any], corrupt: tuple[int, float] | None = None) -> None:
        self.meta, self.corrupt = meta, corrupt

    def encode(self, inputs: Sequence[Sequence[Any]]) -> tuple[list[list[Any]], list[int]]:
        return [list(x) for x in inputs], [len(x) for x in inputs]

    def run_with_cache(self, ids: list[list[Any]]) -> tuple[None, dict[str, np.ndarray]]:
        tokens = ids[0]
        resid = np.zeros((1, len(tokens) + 1, len(LABELS)))
        resid[0, :, 0] = 1.0
        resid[0, 0, 1] = 1.0  # `bos` at BOS, as a compiled model's embedding writes it
        for p, t in enumerate(tokens):
            resid[0, p + 1, LABELS.index(f"tokens:{t}")] = 1.0
        cache = {}
        for hook, writes in HOOKS:
            for dim, value in writes.items():
                for p, t in enumerate(tokens):
                    resid[0, p + 1, dim] = value(2 if t == "a" else 1)
                    if self.corrupt is not None and self.corrupt[0] == dim:
                        resid[0, p + 1, dim] += self.corrupt[1]
            cache[hook] = resid.copy()
        return None, cache

    def run(self, inputs: Sequence[Sequence[Any]]) -> list[list[Any]]:
        return [[2 if t == "a" else 1 for t in tokens] for tokens in inputs]


def test_the_readings_of_a_variable_held_in_parts() -> None:
    found = parts_readings(_meta(), ["w"])["w"]
    # the numerical `w.int` is one MLP part's output (offsets where the steps split): not w's value;
    # the vector one lists w's values; `w.frac0` is a width's 1/(w+1)
    assert [(r.name, r.kind) for r in found] == [
        ("w", ReadingKind.NUMBER),
        ("w.int", ReadingKind.VECTOR),
    ]
    assert parts_readings(_meta(reach=False), ["w"]) == {}
    scaled = {"name": "w.x2.int", "vector": True, "terms": [[[7, 2.0]]], "labels": ["1"]}
    assert parts_readings({"reach": {"readings": [scaled]}}, ["w"])["w"][0].name == "w.x2.int"
    vector = PartsReading("w.int", "w", ReadingKind.VECTOR, (((7, 1.0),), ((7, 2.0),)), ("1", "2"))
    row = np.zeros((2, 9))
    row[:, 7] = [2.0, 1.5]
    assert vector.decode(row) == ["2", None]
    assert vector.agrees("2", 2) and vector.agrees("2", 2.0) and not vector.agrees(None, 2)


def test_a_faithful_model_agrees_at_every_reading() -> None:
    sop = _program()
    points = decode_checkpoints(PartsModel(_meta()), list("ab"), nodes_by_name(sop))
    rows = {p.where: {v.name: (v.model, v.wrong) for v in p.variables} for p in points}
    assert "w" not in rows["after layer 0 attn"]
    assert rows["after layer 0 mlp"]["w"] == ((2.0, 1.0), ())
    assert "w.int" not in rows["after layer 0 mlp"]
    assert rows["after layer 1 mlp"]["w.int"] == ((2, 1), ())  # the ints, as the interpreter's
    assert all(type(v) is int for v in rows["after layer 1 mlp"]["w.int"][0])
    assert all(p.in_parts == () for p in points)
    assert diagnose(sop, PartsModel(_meta()), list("ab"), nodes_by_name(sop)) is None


def test_a_wrong_part_is_located_at_its_reading() -> None:
    sop, nodes = _program(), nodes_by_name(_program())
    # part1 +3 at layer 0's MLP: the sum w is wrong there (not only at the later square)
    div = diagnose(sop, PartsModel(_meta(), (6, 3.0)), list("ab"), nodes)
    assert div == Divergence("w", 0, "mlp", 0, 5.0, 2, None, started_at="layer 0 attn")
    # the square off by 0.5 at layer 1's MLP: the vector reading holds none of w's values
    div = diagnose(sop, PartsModel(_meta(), (8, 0.5)), list("ab"), nodes)
    assert div == Divergence("w.int", 1, "mlp", 0, NO_VALUE, 2, "w as a whole number (matched)")


def test_without_a_reach_the_variable_is_named_unchecked() -> None:
    sop = _program()
    model = PartsModel(_meta(reach=False), (6, 3.0))
    points = decode_checkpoints(model, list("ab"), nodes_by_name(sop))
    assert [p.in_parts for p in points if p.in_parts] == [("w",), ("w",)]  # parts, then .int/.sq
    assert all("w" not in {v.name for v in p.variables} for p in points)


def test_a_categorical_reading_of_1_and_1_0_reads_each_as_its_own_value() -> None:
    # a model decoding `1` where the interpreter gives 1.0 agreed: 1 == 1.0 was read by value
    one_hot = ((2, 1.0),), ((3, 1.0),)
    reading = PartsReading("w", "w", ReadingKind.CATEGORICAL, one_hot, ("1", "1.0"))
    assert reading.agrees("1", 1) and reading.agrees("1.0", 1.0)
    assert not reading.agrees("1", 1.0) and not reading.agrees("1.0", 1)
    # where the value has no label of its own, it is read by value (1.0 labelled canonically)
    assert PartsReading("w", "w", ReadingKind.CATEGORICAL, one_hot[:1], ("1",)).agrees("1", 1.0)

"""A label the compiler gave an unnamed s-op (`_map_1`) is told by what it computes wherever a
message or table prints it: the certificate line, `rasp show`'s certificate table and the size
prediction's widest part (rasp.named_text; they printed the bare label)."""

from __future__ import annotations

from typing import Any

from compiler.budget import predict
from compiler.model import Sketch
from rasp.tools.certificate_text import summary_line, table_lines


def _check(sublayer: str, block: str, op: str, kind: str, where: str) -> dict[str, Any]:
    return {
        "sublayer": sublayer,
        "block": block,
        "op": op,
        "kind": kind,
        "margin": 3.0,
        "bound": 1.01,
        "ratio": 2.97,
        "where": where,
    }


CERTIFICATE = {
    "ok": True,
    "errors": [],
    "checks": [
        {
            **_check("layer 0 mlp", "_map_1", "indices < tokens_int", "relu", "unit 0 at (x=1)"),
            "ratio": 2.99,
        },
        _check(
            "layer 1 mlp",
            "res",
            "indices < tokens_int < length",
            "relu",
            "unit 0 at (_map_1=True, length.frac=0.5)",
        ),
        {**_check("decoder", "res", "unembed", "argmax", "output True"), "ratio": "inf"},
    ],
}


def test_the_certificate_line_tells_a_generated_label_in_the_weakest_state() -> None:
    # (as the program text it stands for, short: it was `... at (_map_1=True, ...): margin 3 vs
    # float32 error bound 1.01; _map_1: indices < tokens_int)`)
    line = summary_line(CERTIFICATE)
    assert "at ((indices < tokens_int)=True, length.frac=0.5): margin 3" in line, line
    assert "_map_1" not in line, line


def test_show_tells_the_generated_labels_of_its_certificate_table() -> None:
    lines = table_lines(CERTIFICATE)
    assert lines[-1] == "unnamed s-ops (the compiler's labels): _map_1 = indices < tokens_int"
    named = {**CERTIFICATE, "checks": CERTIFICATE["checks"][1:]}
    assert not table_lines(named)[-1].startswith("unnamed")


def test_the_size_predictions_widest_part_tells_a_generated_label() -> None:
    def sketch(n: int) -> Sketch:
        config = {
            "d_model": 3 + n * n,
            "d_vocab": 5,
            "d_vocab_out": 2,
            "n_ctx": n + 1,
            "n_layers": 0,
            "layers": [],
        }
        residual = ("one", "bos", "pad", *(f"_map_1:{v}" for v in range(n * n)))
        return Sketch(config, residual, (), texts=(("_map_1", "indices * length"),))

    predicted = predict(sketch, 100)
    assert predicted is not None
    assert "the widest part is '_map_1' (indices * length) in the residual" in predicted.describe()

"""The reach is no longer the certificate's trust root: `rasp verify --model` rebuilds it from the
program the file records, with the file's compile options, and requires it to equal the file's.

Before, a file whose reach and weights were edited together re-checked as proved while it computed
something other than its program: `reverse` with the output reading's labels swapped (and the
output entry and its digest to match), or with one copy's columns swapped in the reach and in
W_O, decoded `abc` as `cab`, certified.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import transformer
from compiler.reach import decoding_digest
from rasp.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]
REVERSE = str(ROOT / "programs" / "reverse.rasp")


def _compiled(tmp_path: Path, *options: str) -> Path:
    path = tmp_path / "reverse.safetensors"
    args = ["compile", REVERSE, "--vocab", "abc", "--max-len", "6", "-o", str(path), *options]
    assert main(args) == 0
    return path


def _rewrite(path: Path, edit_meta: Any, edit_weights: Any = None) -> Path:
    """A copy of the model file at `path` with its metadata (and weights) edited."""
    with safe_open(str(path), "np") as f:
        meta = json.loads(f.metadata()["rasp_forge"])
    weights = load_file(str(path))
    edit_meta(meta)
    if edit_weights is not None:
        edit_weights(weights)
    edited = path.with_name("edited.safetensors")
    save_file(weights, str(edited), metadata={"rasp_forge": json.dumps(meta)})
    return edited


def _verify(path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> dict[str, Any]:
    """`rasp verify --model path --json`'s certificate entry (few inputs: only it matters)."""
    capsys.readouterr()
    args = ["verify", "--model", str(path), "--exhaustive-len", "1", "--samples", "0", "--json"]
    main([*args, *options])
    report = json.loads(capsys.readouterr().out)
    certificate: dict[str, Any] = report["certificate"]
    return certificate


def _reading(meta: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in meta["reach"]["readings"] if r["name"] == name)


def _swap_labels(meta: dict[str, Any]) -> None:
    """The output `reverse` decodes column 0 as "b" and column 1 as "a": the reach's labels of
    the output reading, the output's values and the reach's digest of them all agree."""
    meta["output"]["values"] = ["b", "a", "c"]
    _reading(meta, "reverse")["labels"] = ["'b'", "'a'", "'c'"]
    meta["reach"]["decoding"] = decoding_digest(meta["output"])


def _copy_head(meta: dict[str, Any]) -> dict[str, Any]:
    return next(h for h in meta["reach"]["heads"] if h["name"] == "reverse")


def _swap_columns(meta: dict[str, Any]) -> None:
    """The reach says the `reverse` head copies token "a" into the column of "b" and back."""
    value = _copy_head(meta)["values"][0]
    value["columns"] = [1.0, 0.0, 2.0]
    value["default"] = [0.0, 1.0, 0.0]


def _swap_w_o(meta: dict[str, Any]) -> Any:
    """The weights to match `_swap_columns`: W_O and b_O write "a"'s column to "b"'s."""
    head = _copy_head(meta)
    a, b = head["values"][0]["out"][:2]
    layer = head["layer"]

    def edit(weights: dict[str, np.ndarray]) -> None:
        w_o, b_o = weights[f"blocks.{layer}.attn.W_O"], weights[f"blocks.{layer}.attn.b_O"]
        w_o[..., [a, b]] = w_o[..., [b, a]]
        b_o[[a, b]] = b_o[[b, a]]

    return edit


def _meta(path: Path) -> dict[str, Any]:
    with safe_open(str(path), "np") as f:
        meta: dict[str, Any] = json.loads(f.metadata()["rasp_forge"])
    return meta


@pytest.mark.parametrize("attack", ["labels", "columns"])
def test_a_reach_edited_with_the_weights_is_not_proved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], attack: str
) -> None:
    path = _compiled(tmp_path)
    if attack == "labels":
        edited = _rewrite(path, _swap_labels)
        where = "reading `reverse`"
    else:
        edited = _rewrite(path, _swap_columns, _swap_w_o(_meta(path)))
        where = "layer 1 head 0 (`reverse`)"
    # the edited file computes something other than reverse: abc -> cab
    assert transformer.load(str(edited)).run(["abc"]) == [["c", "a", "b"]]
    certificate = _verify(edited, capsys)
    assert certificate["ok"] is False, certificate
    text = "\n".join(certificate["lines"])
    assert "NOT proved" in text and "differs" in text and where in text, text

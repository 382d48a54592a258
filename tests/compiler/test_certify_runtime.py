"""What the runtime reads from a model file besides the weights is pinned by the reach: each head's
mask, causal attention, the vocabulary's order and the output entry. Each edit below re-checked as
proved before (the certifier walked the weights against the reach and read none of them, or took
the output's grid and type on trust) while the edited file decoded some input wrongly: `recheck`
now refuses it, and the runtime's answers show why it must.

The decoder's `ints` and `bools` snaps are right only where the program's value is whole (0 or 1):
an output whose values are not was certified with margin 1/2 (ints) or 1e-6 (bools). A one-hot
output's argmax is checked against every other column after both errors, not only against the
column with the highest exact logit.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import transformer
from compiler import compile_sop
from compiler.certificate import Certificate
from compiler.certify import certify, recheck
from compiler.model import CompiledModel
from compiler.reach import Reach, decoding_digest
from rasp.errors import Source
from rasp.interpreter import load_source
from transformer.digests import EditedWeightsWarning

# exactly i + 1 keys at position i: masked "<=" (or causal), decoded on per-position grids 1/(i+1)
PREFIX = 'res = aggregate(select(indices, indices, <=), indicator(tokens == "a"));'


def _model(causal: bool = False) -> CompiledModel:
    sop = load_source(Source("<test>", PREFIX)).get("res")
    return compile_sop(sop, ["a", "b"], 5, causal=causal)


def _edited(model: CompiledModel, edit: Any) -> dict[str, Any]:
    meta = json.loads(json.dumps(model.metadata))  # as a file gives it back
    edit(meta)
    return meta


def _refused(cert: Certificate) -> str:
    """Why `cert` does not hold: its one error, else its one failing decision (which the
    certifier reports before the pinned fields: it says more)."""
    assert not cert.ok and len(cert.errors) + len(cert.failures()) == 1, cert
    if cert.errors:
        return cert.errors[0]
    (failure,) = cert.failures()
    return f"{failure.kind} at {failure.where}"


def _runs(model: CompiledModel, meta: dict[str, Any], tmp_path: Path) -> list[list[Any]]:
    """What the runtime decodes for ["ab", "aab"] from the model's weights and `meta`."""
    path, edited = tmp_path / "m.safetensors", tmp_path / "edited.safetensors"
    model.save(path)
    with safe_open(str(path), "np") as f:
        header = {**f.metadata(), "rasp_forge": json.dumps(meta)}
    save_file(load_file(str(path)), str(edited), metadata=header)
    if meta == model.metadata:
        return transformer.load(str(edited)).run(["ab", "aab"])
    with pytest.warns(EditedWeightsWarning, match="metadata field"):  # edited after compiling
        return transformer.load(str(edited)).run(["ab", "aab"])


def _unmask(meta: dict[str, Any]) -> None:
    for layer in meta["config"]["layers"]:
        layer.pop("masks", None)


def _swap_grid(meta: dict[str, Any]) -> None:
    grid = meta["output"]["denominators"]
    grid[0], grid[1] = grid[1], grid[0]


def _to_ints(meta: dict[str, Any]) -> None:
    del meta["output"]["denominators"]
    meta["output"]["type"] = "ints"


def _swap_tokens(meta: dict[str, Any]) -> None:
    tokens = meta["vocab"]["tokens"]
    tokens[0], tokens[1] = tokens[1], tokens[0]


def test_the_model_re_checks_and_runs_right(tmp_path: Path) -> None:
    model = _model()
    assert model.metadata["config"]["layers"][0]["masks"] == ["<="]
    assert recheck(model.weights, _edited(model, lambda m: None)).ok
    assert _runs(model, model.metadata, tmp_path) == [[1, 0.5], [1, 1.0, 0.6666666666666666]]


@pytest.mark.parametrize(
    ("edit", "decoded", "says"),
    [
        # every head sees every key: position 0 averages the whole input
        (_unmask, [[0, 0.5], [1, 0.5, 0.6666666666666666]], "the mask '', but its select"),
        # position 1 decodes on 1/1: round(0.5) = 0 (0.5 lies on another position's grid)
        (_swap_grid, [[1.0, 0], [1.0, 1, 0.6666666666666666]], "the file's output entry"),
        # no grid, rounded to ints: 0.5 decodes as 0 (the snap to a whole number fails first)
        (_to_ints, [[1, 0], [1, 1, 1]], "snap at output"),
        # 'a' is encoded as the id whose row writes tokens = 'b'
        (_swap_tokens, [[0, 0.5], [0, 0.0, 0.3333333333333333]], "the file's vocabulary is"),
    ],
)
def test_an_edited_runtime_field_is_refused(
    edit: Any, decoded: list[list[Any]], says: str, tmp_path: Path
) -> None:
    model = _model()
    meta = _edited(model, edit)
    assert _runs(model, meta, tmp_path) == decoded  # wrong: why it must not be proved
    assert says in _refused(recheck(model.weights, meta))


def test_causal_attention_is_pinned(tmp_path: Path) -> None:
    # compiled causal, the prefix select has no mask: causal attention hides the later keys
    model = _model(causal=True)
    assert "masks" not in model.metadata["config"]["layers"][0]
    assert recheck(model.weights, _edited(model, lambda m: None)).ok
    meta = _edited(model, lambda m: m["config"].update(attention_dir="bidirectional"))
    assert _runs(model, meta, tmp_path) == [[0, 0.5], [1, 0.5, 0.6666666666666666]]
    reason = _refused(recheck(model.weights, meta))
    assert "bidirectional attention, but the model was compiled for causal" in reason
    # and the other way round: a head masked by causal attention it was not compiled for
    plain = _model()
    meta = _edited(plain, lambda m: m["config"].update(attention_dir="causal"))
    assert "causal attention, but the model was compiled for bidirectional" in _refused(
        recheck(plain.weights, meta)
    )


@pytest.mark.parametrize("keys", [("tokens", "decoding"), ("max_len",)])
def test_a_reach_without_the_pins_is_not_proved(keys: tuple[str, ...]) -> None:
    model = _model()
    older = _edited(model, lambda m: [m["reach"].pop(k) for k in keys])
    reason = _refused(recheck(model.weights, older))
    assert "does not record the vocabulary, max_len and decoding" in reason
    assert "recompile" in reason


def test_an_edited_max_len_is_not_proved() -> None:
    """hist has no positional embedding, so its file runs any length n_ctx allows: compiled at
    N = 3 and edited to max_len 6 (n_ctx 7), it re-checked as proved against its length-3 reach
    and counted five a's as 3."""
    sop = load_source(Source("<test>", "res = selector_width(select(tokens, tokens, ==));"))
    model = compile_sop(sop.get("res"), ["a", "b"], 3)
    assert "pos_embed.W_pos" not in model.weights
    longer = _edited(model, lambda m: (m.update(max_len=6), m["config"].update(n_ctx=7)))
    with pytest.warns(EditedWeightsWarning, match="'max_len'"):
        runtime = transformer.from_tensors(model.weights, longer, "cpu")
    assert runtime.run(["aaaaa"]) == [[3] * 5]  # the edit is real: 5 decodes as 3
    reason = _refused(recheck(model.weights, longer))
    assert "max_len is 6" in reason and "at most 3 tokens" in reason


@pytest.mark.parametrize("kind", ["ints", "bools"])
def test_an_integer_snap_needs_whole_values(kind: str) -> None:
    # a compiler that wrote an `ints` (or `bools`) output with no list and no grid for values
    # 1/2 and 2/3: the runtime rounds 0.5 to 0 (or reads 0.5 as False); certified before with
    # margin 1/2 (or 1e-6)
    model = _model()
    meta = _edited(model, _to_ints)
    meta["output"]["type"] = kind
    reach = Reach.from_json(meta["reach"])
    reach = dataclasses.replace(reach, decoding=decoding_digest(meta["output"]))
    args = (meta["config"], reach, meta["output"], 5, meta["residual"], ["a", "b"])
    cert = certify(model.weights, *args)
    decoder = next(c for c in cert.checks if c.sublayer == "decoder")
    assert not cert.ok and decoder.margin == 0.0
    # whole values keep their margin: the same output read as numbers is proved
    meta["output"]["type"] = "floats"
    reach = dataclasses.replace(reach, decoding=decoding_digest(meta["output"]))
    assert certify(model.weights, meta["config"], reach, *args[2:]).ok


def test_the_argmax_is_checked_against_every_rival() -> None:
    # columns c and d each add M (token) - M (one): the same exact logits, but each errs by up to
    # 0.6, so at token 'c' column d may overtake c (1 < 0.6 + 0.6). The check took the rival with
    # the highest exact logit (the first 0: column a, exact) and proved it.
    model = compile_sop(load_source(Source("<test>", "res = tokens;")).get("res"), list("abcd"), 3)
    meta = _edited(model, lambda m: None)
    w_u = model.weights["unembed.W_U"].copy()
    labels = meta["residual"]
    big = np.float32(5e6 / 3)  # not on a dyadic grid: its sums round
    for col in (2, 3):
        w_u[[labels.index(f"tokens:{t}") for t in "abcd"], col] += big
        w_u[labels.index("one"), col] -= big
    cert = recheck({**model.weights, "unembed.W_U": w_u}, meta)
    (decoder,) = cert.failures()
    assert decoder.sublayer == "decoder" and decoder.where == "output 'c'"
    assert decoder.margin == 1.0 and 1.0 < decoder.bound < 1.3  # c against d, both noisy

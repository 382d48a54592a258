"""Every weight that writes the residual at a real position belongs to a block the certificate
checks. The walk read each head's W_O only at its own parts' columns, each MLP part's units only
in its own range, and only the file's layers; the check of what a sublayer writes looked at the
union of its heads (or units). So an edited file re-checked as proved while it decoded inputs
wrongly when one head's W_O wrote another head's column, when a unit outside every part (added to
the file) wrote a part's output column, or when the file's last layer was cut off."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest

from compiler import compile_sop
from compiler.certify import recheck
from compiler.model import CompiledModel
from rasp.errors import Source
from rasp.interpreter import load_source
from tests.runtime_helpers import as_runtime

# layer 0: heads `a` (0) and `length` (1), the length MLP; layer 1: head `b`, the MLP of `res`
TWO = (
    "a = aggregate(select(indices, 0, ==), tokens);\n"
    "b = aggregate(select(indices, length - 1, ==), tokens);\n"
    'res = "x" if a == b else "y";'
)
INPUTS = ["".join(p) for n in (1, 2, 3) for p in itertools.product("ab", repeat=n)]


@pytest.fixture(scope="module")
def model() -> CompiledModel:
    model = compile_sop(load_source(Source("<test>", TWO)).get("res"), ["a", "b"], 3)
    assert recheck(model.weights, model.metadata).ok
    return model


def _wrong(model: CompiledModel, edited: CompiledModel) -> list[str]:
    """The inputs the edited model decodes otherwise than the compiled one (the edit is real)."""
    good, out = as_runtime(model).run(INPUTS), as_runtime(edited).run(INPUTS)
    return [i for i, o, g in zip(INPUTS, out, good, strict=True) if o != g]


def _refused(edited: CompiledModel, *words: str) -> None:
    cert = recheck(edited.weights, edited.metadata)
    assert not cert.ok
    (error,) = cert.errors
    assert all(word in error for word in words), error


@pytest.mark.parametrize(("head", "dim"), [(1, "a:a"), (0, "length.frac")])
def test_a_head_writing_another_heads_column_is_not_proved(
    model: CompiledModel, head: int, dim: str
) -> None:
    weights = {k: v.copy() for k, v in model.weights.items()}
    w_o = weights["blocks.0.attn.W_O"]
    row = int(np.flatnonzero(np.abs(w_o[head]).sum(axis=1))[0])  # a value column it uses
    w_o[head][row, model.metadata["residual"].index(dim)] = 4.0
    edited = CompiledModel(model.config, weights, model.metadata)
    assert _wrong(model, edited)
    _refused(edited, f"head {head}", repr(dim))


def test_a_head_the_reach_does_not_list_writes_nothing(model: CompiledModel) -> None:
    """A head added to layer 1 (which has one, `b`), its value 1 at every key, adding into `b:a`."""
    weights = {k: v.copy() for k, v in model.weights.items()}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    residual = meta["residual"]
    p = "blocks.1.attn."
    for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V"):
        weights[p + name] = np.concatenate(
            [weights[p + name], np.zeros_like(weights[p + name][:1])]
        )
    weights[p + "W_V"][1][residual.index("one"), 0] = 1.0  # BOS and real keys alike: 1
    weights[p + "W_O"][1][0, residual.index("b:a")] = 5.0
    for c in (config, meta["config"]):
        c["layers"][1]["n_heads"] = 2
        c["n_heads"] = max(layer["n_heads"] for layer in c["layers"])
    edited = CompiledModel(config, weights, meta)
    assert _wrong(model, edited)
    _refused(edited, "head 1", "does not list", "'b:a'")


def test_a_unit_outside_every_mlp_part_writes_nothing(model: CompiledModel) -> None:
    weights = {k: v.copy() for k, v in model.weights.items()}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    residual = meta["residual"]
    p = "blocks.1.mlp."
    column = np.zeros((len(residual), 1), np.float32)
    column[residual.index("one")] = 1.0  # on at every real position
    weights[p + "W_in"] = np.hstack([weights[p + "W_in"], column])
    weights[p + "b_in"] = np.append(weights[p + "b_in"], np.float32(0))
    row = np.zeros((1, len(residual)), np.float32)
    row[0, residual.index("res:x")] = 5.0
    weights[p + "W_out"] = np.vstack([weights[p + "W_out"], row])
    for c in (config, meta["config"]):
        c["layers"][1]["d_mlp"] += 1
        c["d_mlp"] = max(layer["d_mlp"] for layer in c["layers"])
    edited = CompiledModel(config, weights, meta)
    assert _wrong(model, edited)
    units = model.config["layers"][1]["d_mlp"]
    _refused(edited, f"layer 1 mlp unit {units}", "'res:x'")


def test_a_unit_outside_every_mlp_part_reads_nothing(model: CompiledModel) -> None:
    """A unit added after every part, with a W_in column and no W_out row: refused by its index
    (the check reads only the units no part holds)."""
    weights = {k: v.copy() for k, v in model.weights.items()}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    residual = meta["residual"]
    p = "blocks.1.mlp."
    column = np.zeros((len(residual), 1), np.float32)
    column[residual.index("one")] = 1.0
    weights[p + "W_in"] = np.hstack([weights[p + "W_in"], column])
    weights[p + "b_in"] = np.append(weights[p + "b_in"], np.float32(0))
    weights[p + "W_out"] = np.vstack([weights[p + "W_out"], np.zeros((1, len(residual)))])
    for c in (config, meta["config"]):
        c["layers"][1]["d_mlp"] += 1
        c["d_mlp"] = max(layer["d_mlp"] for layer in c["layers"])
    units = model.config["layers"][1]["d_mlp"]
    _refused(CompiledModel(config, weights, meta), f"layer 1 mlp unit {units}", "W_in or b_in")


def test_a_file_missing_a_layer_the_reach_has_is_not_proved(model: CompiledModel) -> None:
    weights = {k: v for k, v in model.weights.items() if not k.startswith("blocks.1.")}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    for c in (config, meta["config"]):
        c["n_layers"] = 1
        c["layers"] = c["layers"][:1]
        for key in ("n_heads", "d_head", "d_mlp"):
            c[key] = c["layers"][0][key]
    meta["layers"] = meta["layers"][:1]
    edited = CompiledModel(config, weights, meta)
    assert _wrong(model, edited)
    _refused(edited, "'b'", "layer 1", "1 layer")


def test_a_part_whose_units_the_mlp_lacks_is_not_proved(model: CompiledModel) -> None:
    meta = copy.deepcopy(model.metadata)
    part = next(p for p in meta["reach"]["mlps"] if p["layer"] == 1)
    part["hidden"] = [part["hidden"][0], part["hidden"][1] + 1]
    _refused(CompiledModel(model.config, model.weights, meta), "units", "whose MLP has")


def test_a_head_reading_what_a_later_sublayer_writes_is_not_proved(model: CompiledModel) -> None:
    """The reach and the weights edited together (what `--no-rebuild` trusts): head `b` moved
    from layer 1 into layer 0, beside the heads it ran after, where it reads `length` before layer
    0's MLP writes it. The walk evaluated it at the reach's values of `length` and proved it."""
    weights = {k: v.copy() for k, v in model.weights.items()}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V"):
        moved = weights[f"blocks.1.attn.{name}"]
        weights[f"blocks.0.attn.{name}"] = np.concatenate([weights[f"blocks.0.attn.{name}"], moved])
        weights[f"blocks.1.attn.{name}"] = moved[:0]
    for c in (config, meta["config"]):
        c["layers"][0]["n_heads"], c["layers"][1]["n_heads"] = 3, 0
        c["n_heads"] = 3
    meta["layers"][0]["attn"].append({**meta["layers"][1]["attn"][0], "head": 2})
    meta["layers"][1]["attn"] = []
    head = next(h for h in meta["reach"]["heads"] if h["name"] == "b")
    head["layer"], head["head"] = 0, 2
    edited = CompiledModel(config, weights, meta)
    assert _wrong(model, edited)
    _refused(edited, "head 'b'", "'length'", "earlier sublayer")

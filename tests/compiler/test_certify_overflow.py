"""The certifier bounds float32 rounding, evaluating in float64, which does not overflow where
float32 does (past 3.4e38): a head whose W_Q and W_K were scaled by 1e18 kept every margin (its
scores only grew further apart) and re-checked as proved, while the runtime's scores overflowed
and its logits were NaN. A product whose terms can sum to OVERFLOW (2^127) now errs by at least
that much, which fails any decision reading it; and a head or MLP unit no checked block holds,
whose scores or pre-activation the walk never evaluates, must be all zeros (NaN passes a zero
W_O or W_out)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from compiler import compile_sop
from compiler.certify import recheck
from compiler.model import CompiledModel
from rasp.errors import Source
from rasp.interpreter import load_source
from tests.runtime_helpers import as_runtime
from transformer.errors import ModelOutputError

# layer 0: heads `a` (0) and `length` (1), the length MLP; layer 1: head `b`, the MLP of `res`
TWO = (
    "a = aggregate(select(indices, 0, ==), tokens);\n"
    "b = aggregate(select(indices, length - 1, ==), tokens);\n"
    'res = "x" if a == b else "y";'
)


@pytest.fixture(scope="module")
def model() -> CompiledModel:
    return compile_sop(load_source(Source("<test>", TWO)).get("res"), ["a", "b"], 3)


def _nan_logits(edited: CompiledModel) -> None:
    with pytest.raises(ModelOutputError, match="NaN or infinite"):
        as_runtime(edited).run(["ab"])


def test_scores_that_overflow_float32_are_not_proved(model: CompiledModel) -> None:
    weights = {k: v.copy() for k, v in model.weights.items()}
    for name in ("W_Q", "b_Q", "W_K", "b_K"):
        weights[f"blocks.0.attn.{name}"][0] *= np.float32(1e18)
    edited = CompiledModel(model.config, weights, model.metadata)
    _nan_logits(edited)
    cert = recheck(edited.weights, edited.metadata)
    assert not cert.ok
    (failure,) = cert.failures()
    assert (failure.block, failure.kind) == ("a", "softmax")
    # the same edit by 1e10 stays in range: still proved (the rule refuses only an overflow)
    weights = {k: v.copy() for k, v in model.weights.items()}
    for name in ("W_Q", "b_Q", "W_K", "b_K"):
        weights[f"blocks.0.attn.{name}"][0] *= np.float32(1e10)
    assert recheck(weights, model.metadata).ok


def test_a_head_the_reach_does_not_list_is_all_zeros(model: CompiledModel) -> None:
    """A head added to layer 1 whose scores overflow: its W_O is zero, its output NaN."""
    weights = {k: v.copy() for k, v in model.weights.items()}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    p = "blocks.1.attn."
    for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V"):
        weights[p + name] = np.concatenate(
            [weights[p + name], np.zeros_like(weights[p + name][:1])]
        )
    one = meta["residual"].index("one")
    weights[p + "W_Q"][1][one, 0] = weights[p + "W_K"][1][one, 0] = 1e30
    for c in (config, meta["config"]):
        c["layers"][1]["n_heads"] = 2
        c["n_heads"] = max(layer["n_heads"] for layer in c["layers"])
    edited = CompiledModel(config, weights, meta)
    _nan_logits(edited)
    cert = recheck(edited.weights, edited.metadata)
    assert not cert.ok and "head 1" in cert.errors[0] and "W_Q" in cert.errors[0], cert.errors


def test_a_unit_outside_every_part_is_all_zeros(model: CompiledModel) -> None:
    """A unit added to layer 1 whose pre-activation overflows: its W_out row is zero."""
    weights = {k: v.copy() for k, v in model.weights.items()}
    config, meta = copy.deepcopy(model.config), copy.deepcopy(model.metadata)
    p = "blocks.1.mlp."
    column = np.zeros((len(meta["residual"]), 2), np.float32)
    column[meta["residual"].index("one")] = 3e38
    weights[p + "W_in"] = np.hstack([weights[p + "W_in"], column[:, :1]])
    weights[p + "b_in"] = np.append(weights[p + "b_in"], np.float32(3e38))
    weights[p + "W_out"] = np.vstack(
        [weights[p + "W_out"], np.zeros_like(weights[p + "W_out"][:1])]
    )
    for c in (config, meta["config"]):
        c["layers"][1]["d_mlp"] += 1
        c["d_mlp"] = max(layer["d_mlp"] for layer in c["layers"])
    edited = CompiledModel(config, weights, meta)
    _nan_logits(edited)
    cert = recheck(edited.weights, edited.metadata)
    assert not cert.ok and "W_in or b_in" in cert.errors[0], cert.errors


def test_pre_activations_that_overflow_float32_are_not_proved(model: CompiledModel) -> None:
    """An MLP part whose units' input weights were scaled by 1e38 and output weights by 1e-38
    computes the same in exact arithmetic; in float32 its pre-activations overflow."""
    weights = {k: v.copy() for k, v in model.weights.items()}
    for name, factor in (("W_in", 1e38), ("b_in", 1e38), ("W_out", 1e-38)):
        scaled = weights[f"blocks.1.mlp.{name}"].astype(np.float64) * factor
        weights[f"blocks.1.mlp.{name}"] = scaled.astype(np.float32)
    assert all(np.isfinite(w).all() for w in weights.values())
    edited = CompiledModel(model.config, weights, model.metadata)
    _nan_logits(edited)
    cert = recheck(edited.weights, edited.metadata)
    assert not cert.ok
    assert {(f.block, f.kind) for f in cert.failures()} >= {("res", "relu")}


def test_an_overflow_past_a_failed_softmax_names_the_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A softmax decision that fails (margin 18, error 28.7 at N = 32) weighs its keys anyhow,
    and its error bound carried on passed float32's range: the refusal said only that 'the
    certifier could not check the model', at the output, as if the compiler had built a model it
    cannot walk (fuzz campaign, numeric seed 1710036, N = 48). It names the failed decision, at
    the aggregate that made it."""
    from rasp.errors import CompileError

    # (the side tables' build, compiler.side_build, now compiles it: the refusal is the
    # subject)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)

    text = (
        "v1 = aggregate(select(indices, indices, >=), indices);\n"
        "res = aggregate(select(indices, length / (v1 + 2), >=), indices, 1);\n"
    )
    root = load_source(Source("<test>", text)).get("res")
    with pytest.raises(CompileError) as caught:
        compile_sop(root, list("0123"), 32)
    (diagnostic,) = caught.value.diagnostics
    assert "could not check" not in diagnostic.message
    assert "a softmax decision has margin" in diagnostic.message
    assert diagnostic.span is not None and diagnostic.span.line == 2

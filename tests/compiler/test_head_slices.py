"""The certifier reads each attention head at its own width (`compiler.head_slices`): the layer's
W_Q, W_K, W_V and W_O pad every head to its d_head with zero columns, which mixed fuzz seed
1820364 at N = 16 held in float64 at 4,096 columns for a head of 8 query columns. The certificate
is the padded reading's, margins and bounds to the last bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compiler import certify_attention, compile_sop, head_slices
from compiler.bounds import special_linear
from compiler.certify import recheck
from compiler.float64_weights import Float64Weights
from rasp.interpreter import load_file

PROGRAMS = Path(__file__).parents[2] / "programs"
ATTENTION = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V")


def _model(name: str, vocab: str, max_len: int) -> Any:
    interp = load_file(PROGRAMS / f"{name}.rasp")
    return compile_sop(interp.get(interp.last_assigned or ""), list(vocab), max_len)


def _padded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every head read at the layer's d_head, as the certifier read it before."""

    def full(used: np.ndarray) -> int:
        return int(used.size)

    monkeypatch.setattr(head_slices, "own_width", full)
    monkeypatch.setattr(certify_attention, "own_width", full)


@pytest.mark.parametrize(
    ("name", "vocab", "max_len"),
    [("sort", "abc", 8), ("most_freq", "abc", 8), ("induction", "abc", 6), ("dyck2", "(){}", 8)],
)
def test_the_own_width_certificate_is_the_padded_one(
    name: str, vocab: str, max_len: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _model(name, vocab, max_len)
    own = recheck(model.weights, model.metadata).to_json()
    assert own == model.metadata["certificate"]
    # some head is narrower than its layer (else this compares nothing)
    widths = [
        (s.d_head, s.wq.shape[1], s.wv.shape[1])
        for layer in range(model.config["n_layers"])
        for h in range(model.weights[f"blocks.{layer}.attn.W_Q"].shape[0])
        for s in [head_slices.head_slices(model.weights, layer, h)]
    ]
    assert any(qk < d or vo < d for d, qk, vo in widths), widths
    _padded(monkeypatch)
    assert recheck(model.weights, model.metadata).to_json() == own


def test_the_factorized_check_counts_the_padded_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """dyck2's heads through the block-by-block check (its PAD rounding counts d_head columns)."""
    monkeypatch.setattr(certify_attention, "FACTOR_ABOVE", -1)
    model = _model("dyck2", "(){}", 8)
    own = recheck(model.weights, model.metadata).to_json()
    _padded(monkeypatch)
    assert recheck(model.weights, model.metadata).to_json() == own


def test_no_padded_attention_tensor_is_converted_to_float64(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []
    original = Float64Weights.__getitem__

    def recorded(self: Float64Weights, key: str) -> np.ndarray:
        read.append(key)
        return original(self, key)

    monkeypatch.setattr(Float64Weights, "__getitem__", recorded)
    model = _model("sort", "abc", 8)
    read.clear()  # (the compile's own certificate read them too)
    assert recheck(model.weights, model.metadata).ok
    assert any(key.startswith("blocks.") for key in read)  # the MLPs' biases are
    assert not [key for key in read if key.split(".")[-1] in ATTENTION], read
    # nor an MLP's whole W_in or W_out: each part converts its own units (compiler.certify_mlp)
    assert not [key for key in read if key.endswith(("mlp.W_in", "mlp.W_out"))], read
    # each layer's attention enters its block (b_O), dropping the previous MLP's float64 arrays
    assert [key for key in read if key.endswith("b_O")] == [
        f"blocks.{layer}.attn.b_O" for layer in range(model.config["n_layers"])
    ]


def test_a_head_slice_holds_every_non_zero_of_its_head() -> None:
    model = _model("most_freq", "abc", 8)
    for layer in range(model.config["n_layers"]):
        p = f"blocks.{layer}.attn."
        for h in range(model.weights[p + "W_Q"].shape[0]):
            s = head_slices.head_slices(model.weights, layer, h)
            qk, vo = s.wq.shape[1], s.wv.shape[1]
            for name, cut in (("W_Q", qk), ("W_K", qk), ("W_V", vo)):
                assert not model.weights[p + name][h][:, cut:].any()
            assert not model.weights[p + "W_O"][h][vo:].any()
            assert s.wq.dtype == np.float64 and s.wv.dtype == np.float32
            assert np.array_equal(s.wq, model.weights[p + "W_Q"][h][:, :qk])


def test_a_float32_slice_gives_the_padded_matrix_sums() -> None:
    """Sparse: the same sums in the same order (row order over the non-zeros, chosen by the padded
    size). Dense: BLAS's products, whose order can depend on the width: equal up to float64's
    rounding, which SLACK covers."""
    rng = np.random.default_rng(0)
    for density, exact in ((0.002, True), (0.5, False)):
        w = (rng.random((40, 64)) < density) * rng.normal(size=(40, 64))
        w[:, 20:] = 0.0  # a head of 20 columns padded to 64
        w32 = w.astype(np.float32)
        x = rng.normal(size=(5, 40)) / 3
        e = np.abs(rng.normal(size=(5, 40))) * 1e-7
        bias = np.zeros(64, dtype=np.float32)
        value, err = special_linear(x, e, w32.astype(np.float64), bias.astype(np.float64))
        own_value, own_err = special_linear(x, e, w32[:, :20], bias[:20], entries=w.size)
        if exact:
            assert np.array_equal(own_value, value[:, :20])
            assert np.array_equal(own_err, err[:, :20])
        else:
            np.testing.assert_allclose(own_value, value[:, :20], rtol=1e-13, atol=1e-15)
            np.testing.assert_allclose(own_err, err[:, :20], rtol=1e-13)

"""The factorized softmax check (compiler/certify_factor.py): a conjunction's additive score checked
block by block gives the enumeration's verdict and Check, proves models that agree with the
interpreter, and refuses a head whose block no longer keeps its level gap. The models are compiled
without head masks, so that `select(indices, indices, <)` is a block of scores of its own (with
masks it is no block at all: the head's mask)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import compiler
from compiler import certify_attention, certify_factor
from compiler.certify import recheck
from compiler.reach import Reach
from rasp.errors import RaspError, Source
from rasp.interpreter import load_file, load_source
from rasp.sops import SOp, evaluate
from rasp.tools.verify import same_value
from tests.runtime_helpers import run_compiled

ROOT = Path(__file__).resolve().parents[2]

# One head: `same_token and earlier`, blocks (tokens, tokens) and (indices, indices).
EARLIER_SAME = """
earlier_same = selector_width(select(tokens, tokens, ==) and select(indices, indices, <));
"""


def _source(text: str, name: str) -> tuple[SOp, Source]:
    source = Source("<test>", text)
    interp = load_source(source)
    sop = interp.get(name)
    assert isinstance(sop, SOp)
    return sop, source


def _library(name: str) -> tuple[SOp, str, Source]:
    path = ROOT / "programs" / f"{name}.rasp"
    interp = load_file(path)
    out = interp.last_assigned
    assert out is not None
    sop = interp.get(out)
    assert isinstance(sop, SOp)
    return sop, out, Source(str(path), path.read_text())


@pytest.fixture
def factor_only(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every head goes through the factorized check, and none may fall back to the enumeration
    (which would refuse: no pairs allowed). Returns a list that counts the factorized verdicts."""
    proved: list[int] = []
    original = certify_factor.factorized_scores

    def counted(*args: Any, **kwargs: Any) -> float | None:
        eta = original(*args, **kwargs)
        if eta is not None:
            proved.append(1)
        return eta

    monkeypatch.setattr(certify_attention, "factorized_scores", counted)
    monkeypatch.setattr(certify_attention, "FACTOR_ABOVE", -1)
    monkeypatch.setattr(certify_attention, "MAX_PAIRS", 0)
    return proved


def _agrees(model: Any, sop: SOp, vocab: str, max_len: int, count: int) -> None:
    rng = random.Random(0)
    inputs = [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(count)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        try:
            want = list(evaluate(sop, tokens).values)
        except RaspError:
            continue
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got, want)


@pytest.mark.exactness
def test_factorized_heads_certify_and_agree_with_the_interpreter(factor_only: list[int]) -> None:
    sop, out, source = _library("most_freq")
    model = compiler.compile_sop(sop, list("abcd"), 10, name=out, source=source, head_masks=False)
    assert model.metadata["certificate"]["ok"]
    heads = Reach.from_json(model.metadata["reach"]).heads
    assert len(factor_only) == len(heads)  # every head was proved block by block
    _agrees(model, sop, "abcd", 10, 200)


def _head(model: Any, name: str) -> tuple[int, int, Any]:
    reach = Reach.from_json(model.metadata["reach"])
    (head,) = [h for h in reach.heads if h.name == name]
    return head.layer, head.head, reach


def _indices_columns(model: Any, layer: int, h: int, reach: Reach) -> np.ndarray:
    """The columns of the head's W_Q that read the `indices` one-hot (the `<` atom's block)."""
    residual = model.metadata["residual"]
    rows = [i for i, label in enumerate(residual) if label.startswith("indices:")]
    wq = np.asarray(model.weights[f"blocks.{layer}.attn.W_Q"][h])
    return np.flatnonzero(np.abs(wq[rows]).sum(axis=0) > 0)


def test_a_block_without_its_level_gap_is_refused(factor_only: list[int]) -> None:
    sop, source = _source(EARLIER_SAME, "earlier_same")
    model = compiler.compile_sop(
        sop, list("abc"), 8, name="earlier_same", source=source, head_masks=False
    )
    layer, h, reach = _head(model, "earlier_same")
    cols = _indices_columns(model, layer, h, reach)
    assert len(cols) > 0
    # The `<` atom's keys at 1/8: a key of the same token and earlier scores S + S/8, one of the
    # same token only S; 32 apart is far below UNDERFLOW. A power of 2 keeps every score exact, so
    # the factorized path (not a fallback) must find it.
    weights = {k: np.array(v) for k, v in model.weights.items()}
    w_k = weights[f"blocks.{layer}.attn.W_K"]
    w_k[h][:, cols] = (w_k[h][:, cols] / 8).astype(np.float32)
    before = len(factor_only)
    cert = recheck(weights, model.metadata)
    assert len(factor_only) > before
    assert not cert.ok
    # the level gap fails, and with it the selection: the keys it selects no longer score as BOS
    (failed,) = [c for c in cert.failures() if c.kind == "softmax"]
    (chosen,) = [c for c in cert.failures() if c.kind == "selection"]
    assert chosen.block == "earlier_same" and "below BOS" in chosen.where
    assert failed.sublayer == f"layer {layer} attn" and failed.kind == "softmax"
    assert failed.block == "earlier_same" and failed.where.startswith("query ")
    assert 0 < failed.margin + 110 < 110  # the real gap (32), not a refusal to check


@pytest.mark.parametrize(
    ("name", "vocab", "max_len"), [("most_freq", "abc", 8), ("dyck2", "(){}", 8)]
)
def test_the_factorized_check_gives_the_enumerations_certificate(
    name: str, vocab: str, max_len: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    sop, out, source = _library(name)
    model = compiler.compile_sop(
        sop, list(vocab), max_len, name=out, source=source, head_masks=False
    )
    enumerated = recheck(model.weights, model.metadata).to_json()
    assert enumerated == model.metadata["certificate"]
    proved: list[int] = []
    original = certify_factor.factorized_scores

    def counted(*args: Any, **kwargs: Any) -> float | None:
        eta = original(*args, **kwargs)
        proved.append(eta is not None)
        return eta

    monkeypatch.setattr(certify_attention, "factorized_scores", counted)
    monkeypatch.setattr(certify_attention, "FACTOR_ABOVE", -1)
    _assert_same_certificate(recheck(model.weights, model.metadata).to_json(), enumerated)
    assert proved and all(proved)


def test_the_perturbed_head_gets_the_same_check_from_both_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sop, source = _source(EARLIER_SAME, "earlier_same")
    model = compiler.compile_sop(
        sop, list("abc"), 6, name="earlier_same", source=source, head_masks=False
    )
    layer, h, reach = _head(model, "earlier_same")
    cols = _indices_columns(model, layer, h, reach)
    weights = {k: np.array(v) for k, v in model.weights.items()}
    w_k = weights[f"blocks.{layer}.attn.W_K"]
    w_k[h][:, cols] = (w_k[h][:, cols] / 8).astype(np.float32)
    enumerated = recheck(weights, model.metadata).to_json()
    monkeypatch.setattr(certify_attention, "FACTOR_ABOVE", -1)
    _assert_same_certificate(recheck(weights, model.metadata).to_json(), enumerated)
    assert not enumerated["ok"]


def test_blocks_follow_the_atoms() -> None:
    sop, source = _source(EARLIER_SAME, "earlier_same")
    model = compiler.compile_sop(
        sop, list("abc"), 6, name="earlier_same", source=source, head_masks=False
    )
    layer, h, reach = _head(model, "earlier_same")
    (head,) = [x for x in reach.heads if x.name == "earlier_same"]
    walk = _walk_stub(model, reach)
    wq = np.asarray(model.weights[f"blocks.{layer}.attn.W_Q"][h], dtype=np.float64)
    wk = np.asarray(model.weights[f"blocks.{layer}.attn.W_K"][h], dtype=np.float64)
    blocks = certify_factor.split_blocks(walk, head, wq, wk)
    assert blocks is not None
    names = sorted(
        (
            tuple(reach.readings[head.query[i]].name for i in b.query),
            tuple(reach.readings[head.key[i]].name for i in b.key),
        )
        for b in blocks
    )
    # the two atoms, then the columns assembly adds for BOS and PAD (and padding): constants
    assert names == [((), ()), (("indices",), ("indices",)), (("tokens",), ("tokens",))]


def _assert_same_certificate(got: dict[str, Any], want: dict[str, Any]) -> None:
    """The same verdicts, margins and places; bounds equal up to the last bits (the two paths sum
    the same error terms in different orders, which the certifier's SLACK covers)."""
    assert got["ok"] == want["ok"] and got["errors"] == want["errors"]
    assert len(got["checks"]) == len(want["checks"])
    for a, b in zip(got["checks"], want["checks"], strict=True):
        for key in a:
            if key in ("bound", "ratio", "max_bound") and isinstance(a[key], float):
                assert a[key] == pytest.approx(b[key], rel=1e-12, abs=0.0), (key, a, b)
            else:
                assert a[key] == b[key], (key, a, b)


def _walk_stub(model: Any, reach: Reach) -> Any:
    residual = model.metadata["residual"]

    class Stub:
        pass

    walk = Stub()
    walk.reach = reach  # type: ignore[attr-defined]
    walk.one, walk.bos, walk.pad = (residual.index(x) for x in ("one", "bos", "pad"))  # type: ignore[attr-defined]
    return walk

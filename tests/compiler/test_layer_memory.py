"""Assembly and the certifier hold one layer's weights in float64 at a time (a model of 5,000
residual dims and a 4,096-wide head is 0.7 GB a layer in float64: fuzz mixed 1820364 at N = 16
peaked at 3.6 GB holding them all), with the very values a float64 copy of the whole model gave."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import compile_sop
from compiler.certify import recheck
from compiler.float64_weights import Float64Weights
from tests.compiler.limit_checks import program

# three layers: a sort's heads and MLPs read one another's outputs
TEXT = """
y = aggregate(select(indices, length - indices - 1, ==), tokens);
z = selector_width(select(y, tokens, ==));
x = aggregate(select(indices, z, ==), y);
"""


def test_assembly_keeps_finished_layers_in_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler import assemble

    stored = assemble._stored
    seen: list[tuple[str, list[str]]] = []

    def recorded(weights: dict, prefixes: tuple[str, ...]) -> dict:
        # when layer i's weights are run, every earlier layer's are float32 already
        if prefixes[0].startswith("blocks."):
            layer = int(prefixes[0].split(".")[1])
            wide = [
                k
                for k, v in weights.items()
                if k.startswith("blocks.") and int(k.split(".")[1]) < layer
                if v.dtype != np.float32
            ]
            seen.append((prefixes[0], wide))
        return stored(weights, prefixes)

    monkeypatch.setattr(assemble, "_stored", recorded)
    model = compile_sop(program(TEXT, "x"), list("abc"), 6, name="x")
    assert model.config["n_layers"] >= 3
    assert len(seen) >= 6 and all(not wide for _, wide in seen), seen
    assert all(v.dtype == np.float32 for v in model.weights.values())


def test_the_certifier_reads_float64_a_block_at_a_time() -> None:
    model = compile_sop(program(TEXT, "x"), list("abc"), 6, name="x")
    whole = {k: v.astype(np.float64) for k, v in model.weights.items()}
    w = Float64Weights(model.weights)
    for key in model.weights:
        got = w[key]
        assert got.dtype == np.float64 and np.array_equal(got, whole[key])
        # only the block just read is kept converted (`blocks.2.` for both its attn and mlp)
        kept = {k.split(".")[1] if k.startswith("blocks.") else k.split(".")[0] for k in w._kept}
        assert len(kept) == 1, kept
    assert set(w) == set(model.weights) and len(w) == len(model.weights)
    # the certificate from the weights converted as read is the one from a whole float64 copy
    assert recheck(model.weights, model.metadata) == recheck(whole, model.metadata)

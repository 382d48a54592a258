"""An MLP part's check is kept per compile where every input of it is the same, bit for bit
(`compiler.certify_memo`): the same numbers, the same certificate; any input that differs is
checked anew, and outside a compile's scope nothing is kept."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import certify_memo, certify_mlp, compile_sop
from compiler.bounds import DimErrors, Linear
from compiler.build_trials import certify_model
from compiler.certify_memo import part_key, sharing
from compiler.reach import MLPReach, Reading
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp


def _part(extra: int = 0, **change: object) -> tuple[Linear, MLPReach, dict[str, np.ndarray]]:
    """A part of two units reading a 3-value one-hot at dims 3.. (after `extra` unused dims)."""
    d = 6 + extra
    dims = [3 + extra, 4 + extra, 5 + extra]
    W = np.zeros((d, 2))
    W[0] = [0.5, -1.0]
    W[dims] = [[1.0, 2.0], [0.0, -3.0], [4.0, 0.25]]
    for row, value in change.get("w", ()):  # type: ignore[attr-defined]
        W[row + extra if row >= 3 else row, 0] = value
    err = DimErrors(np.zeros(d), np.zeros(d), np.ones(d), np.zeros(d, dtype=np.int64))
    for row, value in change.get("err", ()):  # type: ignore[attr-defined]
        err.absolute[row + extra] = value
    reading = Reading("x", True, tuple(((k, 1.0),) for k in dims), (), ("a", "b", "c"))
    lin = Linear(W, np.array([0.0, 1.0]), [reading], [0], err, (0, 1, 2))
    coords = change.get("coords", [(0.0,), (1.0,), (2.0,)])
    part = MLPReach(0, "m", "f", (0, 2), (0,), tuple(coords), 0, (0.0, 1.0, 2.0))  # type: ignore[arg-type]
    rest = {
        "coords": np.array(part.points, dtype=np.float64),
        "wo": np.array([[1.0], [2.0]]),
        "out": np.array([dims[0]]),
        "out_terms": np.full(d, 3),
        "b_out": np.zeros(d),
    }
    return lin, part, rest


def _key(extra: int = 0, **change: object) -> object:
    lin, part, rest = _part(extra, **change)
    out_reading = Reading("y", False, (((int(rest["out"][0]), 1.0),),), (0.0, 1.0, 2.0), ())
    return part_key(
        lin,
        part,
        rest["coords"],
        rest["wo"],
        rest["out"],
        out_reading,
        rest["out_terms"],
        rest["b_out"],
    )


def test_keys_renumber_dims_and_tell_every_input_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal where only the dims' places differ; different where a weight's bits, an input error
    or a point differ; none where the part is small or W reads a row the key does not hold."""
    assert _key() is None  # (6 cells: not worth a key)
    monkeypatch.setattr(certify_memo, "MIN_CELLS", 1)
    key = _key()
    assert key is not None and key == _key() and key == _key(extra=4)
    assert _key(w=[(4, -0.0)]) != key  # -0.0 for 0.0: other bits
    assert _key(err=[(3, 1e-9)]) != key
    assert _key(coords=[(0.0,), (1.0,), (1.0,)]) != key
    monkeypatch.setattr(certify_memo, "MAX_KEY_BYTES", 8 * 4 * 2)  # W's 4 rows held, not the rest
    assert _key() is None
    monkeypatch.setattr(certify_memo, "MAX_KEY_BYTES", 2**26)
    lin, part, _ = _part(extra=1)
    lin.W[3, 0] = 1.0  # an unused dim read: not a row the key holds
    assert _key(extra=1) is not None
    rest = _part(extra=1)[2]
    out_reading = Reading("y", False, (((int(rest["out"][0]), 1.0),),), (0.0, 1.0, 2.0), ())
    args = (rest["coords"], rest["wo"], rest["out"], out_reading, rest["out_terms"], rest["b_out"])
    assert part_key(lin, part, *args) is None


# a map of a mean (its step MLP's one part)
MEAN_MAP = """
m = aggregate(select(tokens, tokens, ==), indicator(tokens == "a"), 0);
res = round(m * 3) + 1;
"""


def test_a_part_checked_again_in_a_scope_gives_the_same_certificate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sop = load_source(Source("<test>", MEAN_MAP)).get("res")
    assert isinstance(sop, SOp)
    model = compile_sop(sop, ["a", "b"], 5)
    checked: list[str] = []
    real = certify_mlp._part_numbers

    def counted(lin, part, *args):  # type: ignore[no-untyped-def]
        checked.append(part.name)
        return real(lin, part, *args)

    monkeypatch.setattr(certify_mlp, "_part_numbers", counted)
    monkeypatch.setattr(certify_memo, "MIN_CELLS", 1)
    alone = certify_model(model).to_json()
    parts = len(checked)
    assert parts > 0
    with sharing({}):
        first = certify_model(model).to_json()
        assert len(checked) == 2 * parts
        again = certify_model(model).to_json()
        assert len(checked) == 2 * parts  # every part found
        # a weight of the first part's units changed: that part is checked anew
        name = next(k for k in model.weights if k.endswith("mlp.b_in"))
        model.weights[name] = model.weights[name].copy()
        model.weights[name][0] = np.nextafter(model.weights[name][0], np.float32(np.inf))
        changed = certify_model(model).to_json()
        assert len(checked) == 2 * parts + 1
    assert alone == first == again
    assert changed["checks"] != alone["checks"]
    certify_model(model)  # outside the scope: checked anew
    assert len(checked) == 3 * parts + 1

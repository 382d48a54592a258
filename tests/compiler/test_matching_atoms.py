"""Matching as an atom (compiler.addressing.plan_match) between any whole-number sides, the exact
whole numbers and squares it reads (compiler.exact_numbers), and the certifier's grid check for
heads whose every score is a multiple of 256 (compiler.certify_factor._grid_levels)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from runtime_helpers import run_compiled

from compiler import addressing, certify_attention, certify_factor, compile_sop, exact_numbers
from compiler.certify import recheck
from rasp import sops as S
from rasp.interpreter import load_file
from rasp.tools.verify import same_value

ROOT = Path(__file__).resolve().parents[2]
N = 40


def _library(name: str) -> tuple[S.SOp, str]:
    interp = load_file(ROOT / "programs" / f"{name}.rasp")
    out = interp.last_assigned
    assert out is not None
    sop = interp.get(out)
    assert isinstance(sop, S.SOp)
    return sop, out


def _agree(model, program: S.SOp, inputs: list[list[str]]) -> None:
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        want = list(S.evaluate(program, tokens).values)
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), (tokens, got, want)


def _inputs(vocab: str, seed: int, count: int = 150) -> list[list[str]]:
    rng = random.Random(seed)
    short = [list(t) for n in range(1, 5) for t in itertools.product(vocab, repeat=n)]
    return short + [[rng.choice(vocab) for _ in range(rng.randint(5, N))] for _ in range(count)]


def _widest_head(model) -> int:
    return max(layer["d_head"] for layer in model.metadata["config"]["layers"])


@pytest.mark.exactness
def test_a_width_of_a_conjunction_matches_whole_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    # double_hist: selector_width(select(hist, hist, ==) and select(has_prev, False, ==)): hist's
    # number and square (decoded from its 1/(w+1)) instead of an (N+1)-wide one-hot per side
    sop, name = _library("double_hist")
    model = compile_sop(sop, list("abc"), N, name=name)
    with monkeypatch.context() as m:
        m.setattr(addressing, "MATCH_MIN_VALUES", 10**9)  # no matching
        plain = compile_sop(sop, list("abc"), N, name=name)
    residual = model.metadata["residual"]
    assert "hist.int" in residual and any(lb.startswith("hist.sq") for lb in residual)
    assert not any(lb.startswith("hist:") for lb in residual)
    assert _widest_head(model) == 16 and _widest_head(plain) >= 64
    assert model.param_count() * 3 < plain.param_count()
    _agree(model, sop, _inputs("abc", 1))


@pytest.mark.exactness
def test_two_matching_atoms_in_one_head() -> None:
    # Dyck-2's opener search: opens and level == level and depth_index == depth_index - 1; level
    # = n_opens - n_closes + closes (a map of the tokens is a number source)
    sop, name = _library("dyck2")
    model = compile_sop(sop, list("(){}"), N, name=name)
    residual = model.metadata["residual"]
    assert "delay_closer.int" in residual and "depth_index.int" in residual
    assert _widest_head(model) == 16
    _agree(model, sop, _inputs("(){}", 2))


def test_a_side_with_few_values_is_read_as_a_one_hot() -> None:
    t = S.TokensSOp(name="tokens")
    same = S.SelectorWidthSOp(selector=S.Select(keys=t, queries=t, comparison=S.Comparison.EQ))
    model = compile_sop(same, list("abc"), N)
    assert not any(".int" in lb for lb in model.metadata["residual"])


def test_a_square_is_split_into_exact_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    # a lower limit forces several parts: each part's dimension holds a whole number and their
    # sum is the square (of the distance from the values' middle) at every reachable value; the
    # certifier proves the model
    monkeypatch.setattr(exact_numbers, "GROUP_LIMIT", 2.0**12)
    sop, name = _library("sort")
    model = compile_sop(sop, list("abc"), N, name=name)
    residual = model.metadata["residual"]
    parts = [lb for lb in residual if lb.startswith("target_position.sq.")]
    assert len(parts) >= 3, residual
    assert model.metadata["certificate"]["ok"]
    _agree(model, sop, _inputs("abc", 3, 60))


def test_integer_parts_write_whole_numbers_summing_to_the_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compiler.blocks import Dim, Encoded, Encoding

    monkeypatch.setattr(exact_numbers, "GROUP_LIMIT", 2.0**14)
    x = Encoded("k", Encoding.NUMERICAL, tuple(range(-60, 61)), number=((Dim("k"), 1.0),))
    points = [(float(v), v) for v in range(-60, 61)]
    specs, reading = exact_numbers.integer_parts(
        x, points, lambda v: v * v, name="k.sq", op="k^2", exact={Dim("k")}
    )
    assert len(specs) > 1
    for (_, v), terms in zip(points, reading.one_hot, strict=True):
        numbers = [n for _, n in terms]
        assert all(n == int(n) for n in numbers) and sum(numbers) == v * v
    for spec in specs:  # an exact whole input: slope 2 (sharpness / gap), no integer band
        assert spec.notes["max_activation_sum"] < exact_numbers.GROUP_LIMIT
        assert np.abs(spec.W_in[Dim("k")]).max() == 2.0


@pytest.mark.exactness
def test_the_grid_check_gives_the_enumerations_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    sop, name = _library("dyck2")
    model = compile_sop(sop, list("(){}"), N, name=name)
    per_query = recheck(model.weights, model.metadata)
    proved: list[bool] = []
    original = certify_factor._grid_levels

    def counted(*args, **kwargs):
        result = original(*args, **kwargs)
        proved.append(result is not None)
        return result

    monkeypatch.setattr(certify_factor, "_grid_levels", counted)
    monkeypatch.setattr(certify_factor, "GRID_ABOVE", -1)
    monkeypatch.setattr(certify_attention, "FACTOR_ABOVE", -1)
    on_grid = recheck(model.weights, model.metadata)
    assert any(proved) and on_grid.ok == per_query.ok is True
    by_place = {(c.sublayer, c.block, c.kind): c for c in per_query.checks}
    for check in on_grid.checks:  # the same places; a margin no larger than the per-query one
        assert check.margin <= by_place[check.sublayer, check.block, check.kind].margin + 1e-9


def test_the_grid_check_refuses_scores_off_the_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    # a matched head whose key columns are scaled by 1/256: its scores are no longer multiples of a
    # step of at least UNDERFLOW, and its levels are too close: refused (by either path)
    sop, name = _library("double_hist")
    model = compile_sop(sop, list("abc"), N, name=name)
    layer = max(k for k, lay in enumerate(model.metadata["layers"]) if lay["attn"])
    weights = {k: np.array(v) for k, v in model.weights.items()}
    w_k = weights[f"blocks.{layer}.attn.W_K"]
    w_k[0][:, :3] = (w_k[0][:, :3] / 256).astype(np.float32)
    monkeypatch.setattr(certify_factor, "GRID_ABOVE", -1)
    monkeypatch.setattr(certify_attention, "FACTOR_ABOVE", -1)
    cert = recheck(weights, model.metadata)
    assert not cert.ok
    assert any(c.sublayer == f"layer {layer} attn" for c in cert.failures())


def test_a_step_too_heavy_to_split_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.blocks import Dim, Encoded, Encoding
    from rasp.errors import CompileError

    monkeypatch.setattr(exact_numbers, "GROUP_LIMIT", 2.0**6)
    x = Encoded("k", Encoding.NUMERICAL, tuple(range(100)), number=((Dim("k"), 1.0),))
    with pytest.raises(CompileError, match="cannot be written exactly"):
        exact_numbers.integer_parts(
            x, [(float(v), v) for v in range(100)], lambda v: v * v, name="k.sq", op="k^2",
            exact={Dim("k")},
        )  # fmt: skip


def test_a_side_read_from_a_centred_square_is_the_square_of_its_number() -> None:
    # the squared reading holds (t - m)^2, m the middle of t's values; a side a t + b reads its
    # square as a^2 (t - m)^2 + 2aB t + B^2 - 2aB m with B = a m + b: whole coefficients, and the
    # value (a t + b)^2 at every t
    from compiler.addressing import _affine_side
    from compiler.blocks import ONE, Dim, Encoded, Encoding

    t, sq = Dim("t"), Dim("t.sq")
    reading = Encoded("t", Encoding.NUMERICAL, tuple(range(10)), number=((t, 1.0),))
    for a, b, m in [(1, 0, 0), (1, -1, 511), (2, 3, 7), (-1, 5, 4), (3, -2, 0)]:
        # t held by its dimension, or (a view `u + 3`) by a dimension holding t - 3 and `one`
        for offset in (0, 3):
            form = ((t, 1.0), (ONE, float(offset))) if offset else ((t, 1.0),)
            side = _affine_side(reading, form, (sq,), tuple(range(10)), a, b, "squared", m)
            for value in range(-3, 12):
                dims = {t: value - offset, sq: (value - m) ** 2, ONE: 1}
                assert sum(c * dims[d] for d, c in side.x) == a * value + b
                assert sum(c * dims[d] for d, c in side.square) == (a * value + b) ** 2
                assert all(c == int(c) for _, c in side.square)

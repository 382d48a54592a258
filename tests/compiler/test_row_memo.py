"""What the planners derive from a map's rows alone is found once per value analysis, not once per
build the driver plans from it (`compiler.row_memo`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from compiler import compile_sop, driver, gates, linear_steps, map_rows
from compiler.row_memo import AnalysisRows, derived
from rasp.errors import Source
from rasp.interpreter import load_source
from rasp.sops import SOp

VOCAB = ["a", "b", "c"]


def _load(text: str) -> SOp:
    sop = load_source(Source("<test>", text)).get("res")
    assert isinstance(sop, SOp)
    return sop


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    calls: list[int] = []
    real: Callable = getattr(module, name)

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_result_is_shared_by_every_copy_of_the_analysis_rows() -> None:
    shared: dict = {}
    rows = [((1, 2), 3)]
    computed: list[int] = []

    def compute() -> int:
        computed.append(1)
        return len(computed)

    first, second = AnalysisRows(rows, shared), AnalysisRows(rows, shared)
    assert first == rows and first is not second
    assert derived(first, "n", compute) == derived(second, "n", compute) == 1
    assert derived(first, ("other", 0), compute) == 2  # another question, its own answer
    # a build's filtered (or merged) rows are a plain list: nothing is kept for them
    assert derived(list(first), "n", compute) == 3 and derived(list(first), "n", compute) == 4


def test_the_sums_and_the_fit_of_a_product_of_means_are_found_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # frac_a * frac_b is planned three times at N = 8 (default, steps, over the index); each
    # read the same rows for its affine fit and its sums (at N = 128, 641K rows each time)
    plans = _counting(monkeypatch, driver, "plan_build")
    fits = _counting(monkeypatch, map_rows, "affine_fit")
    sums = _counting(monkeypatch, linear_steps, "_output_ids")
    text = """
    prefix = select(indices, indices, <=);
    frac_a = aggregate(prefix, indicator(tokens == "a"));
    frac_b = aggregate(prefix, indicator(tokens == "b"));
    res = frac_a * frac_b;
    """
    model = compile_sop(_load(text), VOCAB, 8)
    assert model.metadata["certificate"]["ok"]
    assert len(plans) >= 2 and len(fits) == 1 and len(sums) == 1


def test_the_gated_fits_of_a_mean_times_the_index_are_found_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `m * indices` (p205 of the fuzz campaign): at N = 32 each of its three builds spent ~4 s
    # on the same classes, sums and per-index fits of 322K rows before it was refused
    plans = _counting(monkeypatch, driver, "plan_build")
    fits = _counting(monkeypatch, gates, "affine_points")  # one per index value
    text = "m = aggregate(select(tokens, tokens, <=), indices);\nres = m * indices;"
    model = compile_sop(_load(text), VOCAB, 10)
    assert model.metadata["certificate"]["ok"]
    assert len(plans) == 3 and len(fits) == 10  # 30 before

"""compiler.width_sweep: a prefix-stable selector's widths from its cases at N alone are what the
per-length loop finds from its cases at every length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from compiler import values, width_sweep
from compiler.graph import build_graph
from compiler.selector_cases import SelectorCases
from rasp.interpreter import load_file
from tests.compiler.test_total_orders import _program

ROOT = Path(__file__).resolve().parents[2]

# selectors whose sides are one set per position whatever the length, decided or not
PROGRAMS = {
    "window": "res = selector_width(select(indices, indices - 3, >) and select(indices, indices, <=));",
    "before_or_same": "res = selector_width(select(tokens, tokens, <) or "
    "(select(tokens, tokens, ==) and select(indices, indices, <)));",
    "not_after": "res = selector_width(not select(indices, indices, >));",
    "width_of_width": "w = selector_width(select(tokens, tokens, ==) and select(indices, indices, <=));\n"
    "res = selector_width(select(w, indices, ==));",
    "mean_side": "m = aggregate(select(indices, indices, <=), indices);\n"
    "res = selector_width(select(m, indices, <));",
    "with_length": "res = selector_width(select(indices, length - indices, <));",
}


def _inferred(graph, vocab: str, n: int, stable: bool, monkeypatch) -> values._Inference:
    if not stable:
        monkeypatch.setattr(SelectorCases, "prefix_stable", lambda self, index, n_max: False)
    inference = values._Inference(graph, list(vocab), n)
    sets = inference.run()
    monkeypatch.undo()
    inference.sets = sets  # type: ignore[attr-defined]
    return inference


def _same(fast: values._Inference, slow: values._Inference) -> None:
    assert fast.sets == slow.sets  # type: ignore[attr-defined]
    assert (fast.lower, fast.least_widths, fast.diagonal) == (
        slow.lower,
        slow.least_widths,
        slow.diagonal,
    )
    assert fast.known.widths == slow.known.widths
    ranges, want = fast.known.width_ranges, slow.known.width_ranges
    assert ranges.keys() == want.keys()
    for index, by_length in ranges.items():
        assert by_length.keys() == want[index].keys()
        for n, (low, high) in by_length.items():
            assert np.array_equal(low, want[index][n][0]) and low.dtype == want[index][n][0].dtype
            assert np.array_equal(high, want[index][n][1])


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_sweep_finds_what_every_length_does(name: str, monkeypatch) -> None:
    graph = build_graph(_program(PROGRAMS[name]))
    for n in (1, 2, 7):
        _same(
            _inferred(graph, "abc", n, True, monkeypatch),
            _inferred(graph, "abc", n, False, monkeypatch),
        )


@pytest.mark.parametrize("program", ["sort", "hist", "frac_prevs", "dyck1", "most_freq"])
def test_library_programs_sweep_alike(program: str, monkeypatch) -> None:
    interp = load_file(ROOT / "programs" / f"{program}.rasp")
    graph = build_graph(interp.get(interp.last_assigned or ""))
    vocab = {"frac_prevs": "xab", "dyck1": "()"}.get(program, "abc")
    _same(
        _inferred(graph, vocab, 9, True, monkeypatch),
        _inferred(graph, vocab, 9, False, monkeypatch),
    )


def test_sort_is_swept_and_a_length_dependent_side_is_not(monkeypatch) -> None:
    swept: list[int] = []
    real = width_sweep.sweep

    def counted(cases, n_max):  # type: ignore[no-untyped-def]
        swept.append(n_max)
        return real(cases, n_max)

    monkeypatch.setattr(values, "sweep", counted)
    interp = load_file(ROOT / "programs" / "sort.rasp")
    values.infer_values(build_graph(interp.get(interp.last_assigned or "")), list("abc"), 8)
    assert len(swept) >= 3  # indices <, the conjunction, the disjunction, the target's ==
    swept.clear()
    values.infer_values(build_graph(_program(PROGRAMS["with_length"])), list("abc"), 8)
    assert swept == []

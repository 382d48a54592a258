"""`rasp draw`'s titles say a block's operation under its name, but not where the operation is the
name itself: a tracr library program's heads (`length`, `last_zero`) were titled `layer 0 head 0:
length` over `length`, and their DOT nodes `length\\nL0 H0: length`."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformer")
pytest.importorskip("matplotlib")

from rasp.tools.draw import computation_dot, trace_figure
from rasp.tools.draw_figure import HeadPattern, Trace
from tests.transformer.handmade_models import mean_of_a


def _trace(name: str, op: str) -> Trace:
    pattern = np.full((3, 3), 1 / 3)
    head = HeadPattern(0, 0, name, op, pattern)
    residual = np.zeros((3, 2))
    return Trace(("BOS", "a", "b"), ("x", "y"), (("embedding", residual),), (head,), name, ())


def _titles(trace: Trace) -> list[str]:
    figure = trace_figure(trace)
    return [ax.get_title() for ax in figure.axes if ax.get_title().startswith("layer ")]


def test_a_head_whose_operation_is_its_name_says_it_once() -> None:
    assert _titles(_trace("length", "length")) == ["layer 0 head 0: length"]
    assert _titles(_trace("frac", "aggregate(sel, tokens)")) == [
        "layer 0 head 0: frac\naggregate(sel, tokens)"
    ]


def test_a_dot_node_whose_operation_is_its_name_says_it_once() -> None:
    model = mean_of_a()
    meta = dict(model.metadata)
    meta["layers"] = [
        {
            "attn": [{"head": 0, "name": "frac_a", "op": "frac_a"}],
            "mlp": [{"name": "out", "op": "2 * frac_a"}],
        }
    ]
    meta["output"] = dict(meta["output"], name="out")
    dot = computation_dot(meta, model.tensors)
    assert 'label="frac_a\\nL0 H0"' in dot, dot
    assert 'label="out\\nL0 MLP: 2 * frac_a"' in dot, dot

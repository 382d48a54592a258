"""A division whose denominator is 0 up to float64 rounding at value pairs the analysis keeps is
refused at the division, with the pair (compiler.rounded_zeros), not only as "a snap decision has
margin 0" at the output (numeric fuzz seed 2202510). Rewrite the golden with `UPDATE_GOLDEN=1`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler import compile_sop
from compiler.graph import build_graph
from compiler.rounded_zeros import _tiny, rounded_zero
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source

GOLDEN = Path(__file__).parents[1] / "golden" / "refusals"


def _refused(text: str, name: str = "rounded_denominator.rasp") -> CompileError:
    root = load_source(Source(name, text)).get("res")
    with pytest.raises(CompileError) as refused:
        compile_sop(root, ["a", "b"], 6)
    return refused.value


def test_the_division_is_named_with_a_pair_where_its_denominator_rounds_to_almost_zero(
    golden: Callable[[Path, str], None],
) -> None:
    path = GOLDEN / "rounded_denominator.rasp"
    refused = _refused(path.read_text(encoding="utf-8"))
    first = refused.diagnostics[0]
    # (was only "the output 'res' (decoder): a snap decision has margin 0 but float32 error ...")
    assert first.message.startswith(
        "the division '1 / ((v2 - v3) + 1)' has a denominator that is 0 up to float64 rounding: "
        "at v2 = 0.4, v3 = 1.4, '(v2 - v3) + 1' is 1.11e-16 in float64"
    )
    assert first.span is not None and (first.span.line, first.span.col) == (7, 17)
    assert "cannot tell that no input reaches this pair" in (first.hint or "")
    # the certificate's own refusal still follows
    assert "a snap decision has margin 0" in refused.diagnostics[1].message
    golden(GOLDEN / "rounded_denominator.txt", refused.render() + "\n")


def test_a_division_whose_denominator_is_never_near_zero_is_not_blamed() -> None:
    reach = {"tokens": ["'a'", "'b'"], "max_len": 6}
    mean = 'v2 = aggregate(select(indices, indices, >=), indicator(tokens == "b"), 1);\n'
    for text, blamed in [
        (mean + "res = length / ((v2 - v2) + 1);\n", False),  # exactly 1
        (mean + "res = v2 / (indices + 1);\n", False),  # whole numbers: 0 only exactly
        (mean + "res = length / (v2 - 0.5);\n", False),  # halves: 0 exactly, no value
        ((GOLDEN / "rounded_denominator.rasp").read_text(encoding="utf-8"), True),
    ]:
        graph = build_graph(load_source(Source("t.rasp", text)).get("res"))
        assert (rounded_zero(graph, reach) is not None) is blamed, text
    graph = build_graph(load_source(Source("t.rasp", text)).get("res"))
    assert rounded_zero(graph, None) is None  # (no vocabulary at hand: nothing said)


def test_tiny_is_a_few_units_in_the_last_place_of_the_numbers_it_is_computed_from() -> None:
    assert _tiny((0.4 - 1.4) + 1, 1.4)
    assert not _tiny(0.0, 1.4) and not _tiny(1e-6, 1.4) and not _tiny(1, 1.0)
    assert _tiny(1e-9, 2.0**40) and not _tiny(1e-9, 1.0)


def test_a_denominator_read_twice_over_is_walked_once_per_map() -> None:
    """`x = x + x` forty times: the denominator's inputs are found through each map once (a walk
    of the paths would take 2^40 steps)."""
    from compiler.graph import Op
    from compiler.rounded_zeros import _leaves

    text = "x = indices + length;\n" + "x = x + x;\n" * 40 + "res = tokens_int / (x + 1);\n"
    root = load_source(Source("<test>", text)).get("res")
    assert root is not None
    graph = build_graph(root)
    division = [node for node in graph.nodes if node.op is Op.MAP][-1]
    assert [graph[i].name for i in _leaves(graph, division.inputs[1])] == ["indices", "length"]

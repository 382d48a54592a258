"""tracr's `make_sort(tokens, make_hist(), ...)`: the keys hist + min_key * i / N hold numbers that
differ only by float64 rounding (1 + 2 * 4 / 6 and 2 + 2 * 1 / 6, both 7/3), so the sort is refused;
the refusal must name a pair of keys that one input gives. hist counts the query's own token, so it
is never 0: its values were 0..N, and the refusal named 1.6666666666666667 (hist 0 at index 5)."""

from __future__ import annotations

import itertools
import re

import pytest

from compiler import compile_sop
from compiler.graph import Op, build_graph
from compiler.values import infer_values
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib

VOCAB = ["a", "b", "c"]
MAX_LEN, MIN_KEY = 6, 2


def _keys(xs: list) -> list[float]:
    """make_sort's keys as tracr computes them (lib.make_sort_unique's `keys` argument)."""
    return [h + MIN_KEY * i / MAX_LEN for i, h in enumerate(lib.make_hist()(xs))]


def test_a_sort_by_hist_names_keys_that_one_input_gives() -> None:
    """Found by tracr_lib_campaign.py seed 780207 --deep --their-lib (#44)."""
    program = lib.make_sort(rasp.tokens, lib.make_hist(), max_seq_len=MAX_LEN, min_key=MIN_KEY)
    with pytest.raises(CompileError) as caught:
        compile_sop(program, VOCAB, MAX_LEN)
    message = str(caught.value).splitlines()[0]
    found = re.search(r"holds for (\S+) < (\S+) but not for", message)
    assert found is not None, message
    yes = (float(found[1]), float(found[2]))
    assert "float64 rounding" in message
    inputs = (list(t) for n in range(1, MAX_LEN + 1) for t in itertools.product(VOCAB, repeat=n))
    assert any(set(yes) <= set(_keys(xs)) for xs in inputs), message


@pytest.mark.parametrize(
    ("comparison", "least"), [("==", 1), ("<=", 1), (">=", 1), ("<", 0), ("!=", 0)]
)
def test_a_width_of_own_keys_is_never_zero(comparison: str, least: int) -> None:
    """A selector that selects each query's own key has widths 1..N; others keep 0..N."""
    interp = Interpreter()
    interp.exec_program(parse(f"res = selector_width(select(tokens, tokens, {comparison}));", "t"))
    graph = build_graph(interp.get("res"))
    width = next(node for node in graph.nodes if node.op is Op.SELECTOR_WIDTH)
    assert infer_values(graph, VOCAB, 5).of(width) == tuple(range(least, 6))

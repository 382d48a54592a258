"""tracr's `make_sort(tokens, make_hist(), ...)`: the keys hist + min_key * i / N hold numbers that
differ only by float64 rounding (1 + 2 * 4 / 6 is 2.333333333333333, 2 + 2 * 1 / 6 is
2.3333333333333335, both 7/3), and the sort was refused, a float32 model reading them as one
number. But the keys are a map of hist and the index, which have no twins: each twin comes from
its own (hist, index) on every input, and the map's table writes each in a column of its own
(`select_twins.TwinTables.apart`). The sort compiles, certified, and gives the interpreter's
result on every input it gives one (27,544 parameters at N = 6). hist counts the query's own token,
so it is never 0: its values were 0..N, and the refusal named 1.6666666666666667 (hist 0 at
index 5)."""

from __future__ import annotations

import itertools

import pytest
from runtime_helpers import run_compiled

from compiler import compile_sop
from compiler.graph import Op, build_graph
from compiler.values import infer_values
from rasp import tracr as rasp
from rasp.atoms import same_value
from rasp.errors import CompileError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib

VOCAB = ["a", "b", "c"]
MAX_LEN, MIN_KEY = 6, 2


def _keys(xs: list) -> list[float]:
    """make_sort's keys as tracr computes them (lib.make_sort_unique's `keys` argument)."""
    return [h + MIN_KEY * i / MAX_LEN for i, h in enumerate(lib.make_hist()(xs))]


def test_a_sort_by_hist_compiles_with_its_keys_twins_apart() -> None:
    """Found by tracr_lib_campaign.py seed 780207 --deep --their-lib (#44); refused until now."""
    program = lib.make_sort(rasp.tokens, lib.make_hist(), max_seq_len=MAX_LEN, min_key=MIN_KEY)
    inputs = [list(t) for n in range(1, MAX_LEN + 1) for t in itertools.product(VOCAB, repeat=n)]
    # both twins are keys of one input ("aabbc": hist 2 at index 1, hist 1 at index 4)
    assert {2.333333333333333, 2.3333333333333335} <= set(_keys(list("aabbc")))
    model = compile_sop(program, VOCAB, MAX_LEN)
    assert model.metadata["certificate"]["ok"]
    given = 0
    for xs, got in zip(inputs, run_compiled(model, inputs), strict=True):
        try:
            want = program(xs)
        except ValueError:  # tied keys: tracr averages two tokens
            continue
        given += 1
        assert all(same_value(g, w) for g, w in zip(got, want, strict=True)), xs
    assert given == 948


def test_twins_of_a_sum_of_means_are_still_refused() -> None:
    """`fa + fb` over two prefix means is read as the number it is (0.1 + 0.2 and 0.3 + 0 one
    float32 value): its twins are not read apart, and the select is refused, naming them."""
    source = """
fa = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
fb = aggregate(select(indices, indices, <=), indicator(tokens == "b"));
key = fa + fb;
smaller = selector_width(select(key, key, <));
"""
    interp = Interpreter()
    interp.exec_program(parse(source, "t"))
    with pytest.raises(CompileError, match="differ only by float64 rounding"):
        compile_sop(interp.get("smaller"), VOCAB, 10)


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

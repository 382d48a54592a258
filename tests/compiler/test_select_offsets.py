"""A select of one s-op against itself through a term of the length reads the s-op under the term
(compiler.select_offsets): `select(length - v0, length - v0, >)` is `select(v0, v0, <)`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from compiler import compile_sop
from compiler.select_offsets import _under, select_offsets
from rasp import sops as S
from rasp.interpreter import Interpreter
from rasp.parser import parse
from tests.runtime_helpers import run_compiled

MEAN = 'v0 = aggregate(select(tokens, tokens, !=), indicator(tokens == "b"));\n'


def _program(text: str) -> S.Node:
    interp = Interpreter()
    interp.exec_program(parse(MEAN + text, "<test>"))
    return interp.get("res")


def _select(root: S.Node) -> S.Select:
    """The select `res`, a width, counts."""
    assert isinstance(root, S.SelectorWidthSOp) and isinstance(root.selector, S.Select)
    return root.selector


@pytest.mark.parametrize(
    ("x", "op", "want"),
    [
        ("length - v0", ">", "<"),
        ("length - v0", "<=", ">="),
        ("length - v0", "==", "=="),
        ("v0 + length", "<", "<"),
        ("(length - v0) * 2 + 1", ">=", "<="),
        ("v0 * length", "!=", "!="),  # increasing at every length (n >= 1)
    ],
)
def test_the_length_term_cancels(x: str, op: str, want: str) -> None:
    root = _program(f"x = {x};\nres = selector_width(select(x, x, {op}));")
    new = select_offsets(root, list("abc"), 5)
    select = _select(new)
    assert select.keys is select.queries
    assert select.keys.name == "v0"
    assert select.comparison.value == want


@pytest.mark.parametrize(
    "text",
    [
        "x = (length - 2 * v0) * (length - 2 * v0);\nres = selector_width(select(x, x, <));",
        "x = indices - v0;\nres = selector_width(select(x, x, <));",  # not the same at every key
        "x = length - indices;\nres = selector_width(select(x, x, <));",  # exact as it is
        "x = length - v0;\nres = selector_width(select(x, v0, <));",  # two sides
        "x = length / (v0 - 0.5);\nres = selector_width(select(x, x, <));",  # raises at 0.5
        "x = v0 - v0 * length;\nres = selector_width(select(x, x, <));",  # constant at length 1
        "x = tokens_int + v0;\nres = selector_width(select(x, x, <));",  # two sources
    ],
)
def test_what_is_kept(text: str) -> None:
    root = _program(text)
    assert select_offsets(root, list("abc"), 5) is root


def test_the_length_term_cancels_only_where_the_map_orders_alike_at_every_length() -> None:
    # at length 1 the map is increasing in y, from length 2 on decreasing
    text = "y = tokens_int;\nx = y * (3 - 2 * length);\nres = selector_width(select(x, x, <));"
    interp = Interpreter()
    interp.exec_program(parse(text, "<test>"))
    root = interp.get("res")
    assert select_offsets(root, list("012"), 1) is not root
    assert select_offsets(root, list("012"), 2) is root


@pytest.mark.parametrize(
    "x", ["length - v0", "v0 + length", "(length - v0) * 2 + 1", "v0 * length", "length - v0 * v0"]
)
@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
def test_the_rewritten_select_selects_the_same_keys(x: str, op: str) -> None:
    root = _program(f"x = {x};\nres = selector_width(select(x, x, {op}));")
    new = select_offsets(root, list("abc"), 4)
    assert new is not root
    old_select, new_select = _select(root), _select(new)
    for n in range(1, 5):
        for tokens in itertools.product("abc", repeat=n):
            want = S.Evaluator(list(tokens)).matrix(old_select)
            got = S.Evaluator(list(tokens)).matrix(new_select)
            assert np.array_equal(np.asarray(want), np.asarray(got)), (x, op, tokens)


# The fuzzed p9488: v1's one-hot (25 values at N = 4), stepped over length - v0, carried about
# 2e-4 of rounding per column into the width heads' scores, whose keys' weights then erred by e^4
# (a relu margin of 4 against a float32 error of 1.09e+06). Compared as v0: 2 layers, 7,153
# parameters at N = 4 (35,892 in 3 layers, refused, before), 30,889 at N = 8.
P9488 = """
v1 = length - v0;
res = selector_width(select(tokens, "c", !=) or select(v1, v1, >));
"""


@pytest.mark.parametrize(("n", "most"), [(4, 10_000), (8, 40_000)])
def test_the_fuzzed_width_compiles_and_is_exact(n: int, most: int) -> None:
    root = _program(P9488)
    model = compile_sop(root, list("abc"), n, name="res")
    assert model.param_count() < most
    inputs = [list(t) for m in range(1, n + 1) for t in itertools.product("abc", repeat=m)]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == list(S.evaluate(root, tokens).values), tokens


class _CountedLookups(set):  # (per-length ids, counting the walk's lookups)
    lookups = 0

    def __contains__(self, item: object) -> bool:
        type(self).lookups += 1
        return super().__contains__(item)


def test_the_walk_under_a_select_side_reads_each_node_once() -> None:
    """Like graph.reads_position_only's walk (defs seed 2172227), this one went down every path
    of a DAG of maps: 2^k lookups for k maps reading one another twice (16 here)."""
    length = S.LengthSOp(name="length")
    x: S.SOp = S.MapSOp(fn=lambda a, b: a - b, inputs=(length, S.IndicesSOp(name="indices")))
    for _ in range(16):
        x = S.MapSOp(fn=lambda a, b: a, inputs=(x, S.MapSOp(fn=lambda a: a, inputs=(x,))))
    _CountedLookups.lookups = 0
    found = _under(x, _CountedLookups({length.id}))
    assert found is not None and found[0].name == "indices"
    assert _CountedLookups.lookups <= 2 * 16 + 4

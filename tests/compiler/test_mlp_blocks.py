"""`Builder.block` (many units' columns as one array) builds the very MLP that `Builder.unit`,
one dict per unit, builds: the same W_in dims in the same order, the same floats bit for bit.
A step MLP over 2,000 contexts (most_freq over 2,000 tokens) built 8M dict entries that way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.blocks import ONE, Dim, Encoded, Encoding, MLPDomain, MLPSpec
from compiler.mlp import Builder, linear
from compiler.step_mlp import _step_columns, numeric_mlp

DIMS = [ONE, *(Dim.categorical("c", i) for i in range(4)), Dim("x"), Dim("y")]
# weights with zeros of both signs (dropped), repeats, and a NaN (kept, as `w != 0.0` keeps it)
WEIGHTS = st.sampled_from([0.0, -0.0, 1.0, -2.5, 1e-300, 3.0, float("nan")])


def _same(a: MLPSpec, b: MLPSpec) -> None:
    assert list(a.W_in) == list(b.W_in)  # the same dims, in the same order
    for dim in a.W_in:
        assert a.W_in[dim].tobytes() == b.W_in[dim].tobytes()
    assert a.b_in.tobytes() == b.b_in.tobytes()
    assert a.W_out.tobytes() == b.W_out.tobytes()


def _spec(b: Builder) -> MLPSpec:
    return b.spec("f", "f", (Dim("out"),), {}, MLPDomain((), (), (), None))  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(WEIGHTS, min_size=len(DIMS), max_size=len(DIMS)), min_size=1, max_size=5),
    st.lists(st.lists(WEIGHTS, min_size=len(DIMS), max_size=len(DIMS)), max_size=3),
    st.integers(1, 3),
    st.permutations(range(len(DIMS))),
)
def test_a_block_of_units_is_the_units_one_by_one(
    columns: list[list[float]], before: list[list[float]], times: int, order: list[int]
) -> None:
    dims = [DIMS[i] for i in order]
    one_by_one, blocked = Builder(1), Builder(1)
    for column in before:  # units before the block, some of its dims seen first there
        for b in (one_by_one, blocked):
            b.unit(dict(zip(dims[::-1], column)), 0.5, np.array([1.0]))
    biases = [float(i) for i in range(times * len(columns))]
    outputs = [np.array([-float(i)]) for i in range(times * len(columns))]
    for j, column in enumerate(columns):
        for t in range(times):
            one_by_one.unit(dict(zip(dims, column)), biases[times * j + t], outputs[times * j + t])
    blocked.block(dims, np.array(columns).T, biases, outputs, times=times)
    for b in (one_by_one, blocked):  # and a unit after it
        b.unit({dims[-1]: 2.0, Dim("z"): 1.0}, 0.0, np.array([0.0]))
    _same(_spec(one_by_one), _spec(blocked))


def test_a_block_needs_a_bias_per_unit() -> None:
    with pytest.raises(ValueError, match="3 biases for 2 columns x 2"):
        Builder(1).block(DIMS[:2], np.ones((2, 2)), [0.0] * 3, [np.zeros(1)] * 3, times=2)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=4),
    st.lists(st.lists(st.floats(-1e9, 1e9), min_size=3, max_size=3), min_size=1, max_size=4),
)
def test_step_columns_are_linear_s_sums(slopes: list[float], offsets: list[list[float]]) -> None:
    """Each pair's column as `linear` sums it, in its order, where parts share dims (x's dim in a
    context's terms, a dim in two contexts' terms)."""
    slopes = (slopes * 4)[: len(offsets)]
    x = Encoded("x", Encoding.NUMERICAL, (), number=((Dim("x"), 1.0), (ONE, -0.25)))
    terms = [((DIMS[1], 1.0),), ((DIMS[2], 1.0), (Dim("x"), 3.0)), ((DIMS[1], 0.5), (ONE, 2.0))]

    class Context:  # what _step_columns reads of a context
        def __init__(self, terms: tuple) -> None:
            self.terms = terms

    contexts = [Context(t) for t in terms]
    dims, weights = _step_columns(x, contexts, np.array(slopes), np.array(offsets))  # type: ignore[arg-type]
    for j, (slope, offs) in enumerate(zip(slopes, offsets)):
        column = linear((x.number, slope), *((t, off) for t, off in zip(terms, offs)))
        assert list(column) == dims
        assert np.array(list(column.values())).tobytes() == weights[:, j].tobytes()


def test_a_step_mlp_over_many_contexts_is_built_as_before() -> None:
    """A context-stepped MLP (each context's own thresholds) keeps the units' order and rows."""
    x = Encoded("x", Encoding.NUMERICAL, tuple(range(8)), number=((Dim("x"), 1.0),))
    ctx_values = list(range(5))
    context = Encoded(
        "c",
        Encoding.CATEGORICAL,
        tuple(ctx_values),
        one_hot=tuple(((Dim.categorical("c", c), 1.0),) for c in ctx_values),
    )
    out = Encoded("o", Encoding.NUMERICAL, (0, 1), number=((Dim("o"), 1.0),))
    points = [(c, [(float(v), int(v > c)) for v in range(8)]) for c in ctx_values]
    spec = numeric_mlp(x, [], out, op="o", name="o", context=context, context_points=points)
    # one pair per context's threshold (their gaps alike: shared, one pair), and the bases
    assert list(spec.W_in)[:2] == [Dim("x"), Dim.categorical("c", 0)]
    w_in = np.array([spec.W_in[d] for d in spec.W_in])
    assert w_in.shape[1] == len(spec.b_in)
    assert np.array_equal(w_in[:, 0], w_in[:, 1])  # a pair's two units read the same D

"""The MLP builders, run in float32 on every reachable input: outputs must be exact (bit for bit)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.blocks import ONE, Dim, Encoded, Encoding, MLPSpec
from compiler.mlp import joint_mlp, table_mlp
from compiler.step_mlp import numeric_mlp
from rasp.errors import CompileError

F32 = np.float32


class Resid:
    """A float32 residual stream [rows, dims] over a fixed list of dims, `one` = 1 everywhere."""

    def __init__(self, dims: Sequence[Dim], rows: int) -> None:
        self.dims = list(dict.fromkeys([ONE, *dims]))
        self.index = {d: i for i, d in enumerate(self.dims)}
        self.x = np.zeros((rows, len(self.dims)), F32)
        self.x[:, 0] = 1

    def set(self, dim: Dim, values: np.ndarray) -> None:
        self.x[:, self.index[dim]] = np.asarray(values, F32)

    def set_categorical(self, enc: Encoded, values: Sequence) -> None:
        """One-hot of each row's value, through the reading's terms (materialised readings only)."""
        lookup = {v: k for k, v in enumerate(enc.values)}
        hot = np.array([lookup[v] for v in values])
        for k, terms in enumerate(enc.one_hot):
            ((dim, _),) = terms
            self.set(dim, hot == k)

    def run(self, spec: MLPSpec) -> np.ndarray:
        """out = relu(x @ W_in + b_in) @ W_out in float32: [rows, len(out_dims)]."""
        w_in = np.zeros((len(self.dims), spec.hidden), F32)
        for d, w in spec.W_in.items():
            w_in[self.index[d]] = w
        pre = self.x @ w_in + spec.b_in.astype(F32)  # [rows, hidden]
        return np.maximum(pre, F32(0)) @ spec.W_out.astype(F32)


def cat(name: str, values: Sequence) -> Encoded:
    return Encoded.materialised_categorical(name, tuple(values))


def num(name: str, values: Sequence) -> Encoded:
    return Encoded.materialised_numerical(name, tuple(values))


def expected(out: Encoded, values: Sequence) -> np.ndarray:
    """[rows, len(out_dims)]: one-hot rows, or the numbers."""
    if out.is_categorical:
        lookup = {v: k for k, v in enumerate(out.values)}
        return np.eye(len(out.values), dtype=F32)[[lookup[v] for v in values]]
    return np.array(values, F32)[:, None]


# ---------------------------------------------------------------------------------------------
# Tables


def check_table(inputs: list[Encoded], table: dict, out: Encoded, noise: float = 0.0) -> MLPSpec:
    spec = table_mlp(inputs, table, out, op="f(...)", name=out.name)
    rows = list(table)
    resid = Resid([d for e in inputs for d in e.dims()], len(rows))
    for k, enc in enumerate(inputs):
        resid.set_categorical(enc, [r[k] for r in rows])
    if noise:
        rng = np.random.default_rng(0)
        resid.x[:, 1:] += rng.uniform(-noise, noise, resid.x[:, 1:].shape).astype(F32)
    y = resid.run(spec)
    want = expected(out, [table[r] for r in rows])
    if noise:
        assert np.abs(y - want).max() <= 2 * len(inputs) * noise * max(1.0, np.abs(want).max()) * 4
    else:
        np.testing.assert_array_equal(y, want)
    return spec


def test_table_two_inputs_categorical() -> None:
    a, b = cat("a", [1, 2, 3]), cat("b", ["x", "y"])
    out = cat("o", list(range(7)))
    table = {(i, s): (2 * i + (s == "y")) % 7 for i in [1, 2, 3] for s in "xy"}
    check_table([a, b], table, out)


def test_table_keeps_one_and_true_apart() -> None:
    a = cat("a", [1, True, 1.0])
    out = cat("o", ["int", "bool", "float"])
    spec = table_mlp(
        [a], [((1,), "int"), ((True,), "bool"), ((1.0,), "float")], out, op="t", name="o"
    )
    resid = Resid(a.dims(), 3)
    for k, dim in enumerate(a.dims()):
        resid.set(dim, np.arange(3) == k)
    np.testing.assert_array_equal(resid.run(spec), np.eye(3, dtype=F32))


def test_table_units_only_where_output_differs_from_base() -> None:
    a, b = cat("a", range(10)), cat("b", range(10))
    table = {(i, j): int(i == j) for i in range(10) for j in range(10)}
    spec = check_table([a, b], table, num("eq", [0, 1]))
    assert spec.hidden == 10  # base 0 needs no unit; one unit per equal pair


def test_table_three_inputs_numerical_and_noise() -> None:
    a, b, c = cat("a", range(4)), cat("b", range(3)), cat("c", [False, True])
    table = {
        (i, j, k): i * j - (2.5 if k else 0)
        for i in range(4)
        for j in range(3)
        for k in (False, True)
    }
    out = num("n", sorted(set(table.values())))
    check_table([a, b, c], table, out)
    check_table([a, b, c], table, out, noise=1e-4)


def test_table_categorical_under_noise_decodes() -> None:
    a, b = cat("a", "abc"), cat("b", "xyz")
    table = {(p, q): p + q for p in "abc" for q in "xyz"}
    check_table([a, b], table, cat("o", sorted(set(table.values()))), noise=1e-4)


def test_clamped_table_cancels_its_inputs_noise() -> None:
    # a table unit passes its inputs' noise on; a clamped row (a saturating pair with identical
    # input weights) writes exactly 0 or 1 for noise below 1/(3k)
    a, b = cat("a", [False, True]), cat("b", [False, True])
    table = {(p, q): p or q for p in (False, True) for q in (False, True)}
    out = num("o", [0, 1])
    resid = Resid([*a.dims(), *b.dims()], 4)
    rows = list(table)
    resid.set_categorical(a, [r[0] for r in rows])
    resid.set_categorical(b, [r[1] for r in rows])
    resid.x[:, 1:] += np.float32(0.1) * np.array([1, -1, 1, -1], F32)[:, None]  # 3k * 0.1 < 1
    want = expected(out, [table[r] for r in rows])
    plain = table_mlp([a, b], table, out, op="t", name="o")
    clamped = table_mlp([a, b], table, out, op="t", name="o", clamp=True)
    assert np.abs(resid.run(plain) - want).max() > 0.1  # the noise, passed on
    np.testing.assert_array_equal(resid.run(clamped), want)
    assert clamped.hidden == 2 * plain.hidden - 1  # the base unit, then a pair per row
    assert clamped.notes["clamped"] and not plain.notes["clamped"]


def test_a_table_over_exact_inputs_is_not_clamped() -> None:
    a, b = cat("a", [False, True]), cat("b", [False, True])
    table = {(p, q): p and q for p in (False, True) for q in (False, True)}
    exact = {*a.dims(), *b.dims()}
    spec = table_mlp([a, b], table, num("o", [0, 1]), op="t", name="o", exact=exact, clamp=True)
    assert spec.hidden == 1 and not spec.notes["clamped"] and not spec.notes["noisy_inputs"]


values_st = st.lists(
    st.one_of(st.integers(-5, 5), st.sampled_from(["a", "b", "c"])),
    min_size=1,
    max_size=5,
    unique=True,
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(values_st, min_size=1, max_size=3), st.data())
def test_random_tables_are_exact(domains: list[list], data: st.DataObject) -> None:
    inputs = [cat(f"in{k}", vals) for k, vals in enumerate(domains)]
    tuples = [()]
    for vals in domains:
        tuples = [t + (v,) for t in tuples for v in vals]
    reachable = data.draw(st.lists(st.sampled_from(tuples), min_size=1, unique=True))
    numeric = data.draw(st.booleans())
    results = data.draw(
        st.lists(st.integers(-3, 3), min_size=len(reachable), max_size=len(reachable))
    )
    table = dict(zip(reachable, results))
    out_values = sorted(set(results))
    out = num("o", out_values) if numeric else cat("o", out_values)
    check_table(inputs, table, out)


def test_joint_mlp_product_one_hot() -> None:
    a, b = cat("a", [0, 1, 2]), cat("b", ["p", "q"])
    tuples = [(i, s) for i in range(3) for s in "pq" if (i, s) != (2, "q")]
    spec, joint = joint_mlp([a, b], tuples + tuples[:2], "ab", op="joint")
    assert joint.values == tuple(tuples) and joint.is_categorical
    assert [d.label for d in spec.out_dims][:2] == ["ab:(0, 'p')", "ab:(0, 'q')"]
    resid = Resid([*a.dims(), *b.dims()], len(tuples))
    resid.set_categorical(a, [t[0] for t in tuples])
    resid.set_categorical(b, [t[1] for t in tuples])
    np.testing.assert_array_equal(resid.run(spec), np.eye(len(tuples), dtype=F32))


# ---------------------------------------------------------------------------------------------
# Step banks


def check_steps(
    x: Encoded, xs: np.ndarray, outs: list, out: Encoded, *, jitter: float = 0.0, **kw
) -> MLPSpec:
    """Builds from exact points, runs on the float32 xs (optionally moved by +-jitter)."""
    spec = numeric_mlp(x, list(zip(xs.tolist(), outs)), out, op="g(x)", name=out.name, **kw)
    want = expected(out, outs)
    for move in [0.0] if not jitter else [-jitter, jitter]:
        resid = Resid(x.dims(), len(xs))
        ((dim, _),) = x.number
        resid.set(dim, (xs.astype(np.float64) + move).astype(F32))
        # on-side pairs round D independently: outputs are within the builder's own bound
        assert np.abs(resid.run(spec) - want).max() <= spec.notes["output_error_bound"]
    return spec


def inverse_counts(n: int) -> tuple[np.ndarray, list[int]]:
    """x = 1/(w+1) as the softmax computes it (float32), and w, for w = 0..n."""
    w = np.arange(n + 1)
    return F32(1) / (w + 1).astype(F32), w.tolist()


@pytest.mark.parametrize("n", [10, 40, 64, 128, 256])
@pytest.mark.parametrize("encoding", ["categorical", "numerical"])
def test_selector_width_decode(n: int, encoding: str) -> None:
    xs, ws = inverse_counts(n)
    out = cat("w", range(n + 1)) if encoding == "categorical" else num("w", range(n + 1))
    spec = check_steps(num("frac", xs.tolist()), xs, ws, out)
    assert spec.notes["pairs"] == n and spec.hidden <= 2 * n + 1
    # Exact under input errors up to the tolerance it reports.
    check_steps(num("frac", xs.tolist()), xs, ws, out, jitter=spec.notes["x_tolerance"])


def fractions(n: int) -> np.ndarray:
    """Every k/w, 0 <= k <= w <= n, as float32 means of 0/1 values."""
    vals = {(k / w): F32(k) / F32(w) for w in range(1, n + 1) for k in range(w + 1)}
    return np.array(sorted(vals.values()), F32)


@pytest.mark.parametrize("n", [10, 64, 256])
def test_fraction_thresholds(n: int) -> None:
    xs = fractions(n)
    x = num("frac", xs.tolist())
    exact = xs.astype(np.float64)
    # Few steps: a comparison; many steps: a bucketing whose boundaries are themselves fractions.
    check_steps(x, xs, [bool(v > 0.5) for v in exact], cat("gt", [False, True]))
    check_steps(x, xs, [int(v * 4 + 1e-9) for v in exact], num("q", range(5)))
    check_steps(x, xs, [round(float(v) * 7) for v in exact], cat("r", range(8)))


@pytest.mark.parametrize("n", [16, 64, 256])
@pytest.mark.parametrize("encoding", ["categorical", "numerical"])
def test_per_context_thresholds_length_minus_index(n: int, encoding: str) -> None:
    """opp = length - indices - 1 from x = 1/(length+1) and the index one-hot: O(n log n) units
    (steps share a pair across contexts only within a factor 2 of gap)."""
    idx = cat("indices", range(n))
    x = num("inv_len", [1 / (m + 1) for m in range(1, n + 1)])
    out = cat("opp", range(n)) if encoding == "categorical" else num("opp", range(n))
    pairs = [(i, m) for m in range(1, n + 1) for i in range(m)]
    inv = {m: F32(1) / F32(m + 1) for m in range(1, n + 1)}
    context_points = {
        i: [(float(inv[m]), m - i - 1) for m in range(i + 1, n + 1)] for i in range(n)
    }
    spec = numeric_mlp(
        x,
        [],
        out,
        op="length - indices - 1",
        name="opp",
        context=idx,
        context_points=list(context_points.items()),
    )
    buckets = 2 * math.ceil(math.log2(n + 1)) + 2  # gap sizes, one factor of 2 each
    assert spec.hidden <= 2 * n * buckets + n + 2
    resid = Resid([*x.dims(), *idx.dims()], len(pairs))
    resid.set(Dim("inv_len"), [inv[m] for _, m in pairs])
    resid.set_categorical(idx, [i for i, _ in pairs])
    got = resid.run(spec) - expected(out, [m - i - 1 for i, m in pairs])
    assert np.abs(got).max() <= spec.notes["output_error_bound"]


def test_context_noise_beyond_tolerance_is_refused() -> None:
    n = 64
    idx = cat("indices", range(n))
    x = num("inv_len", [1 / (m + 1) for m in range(1, n + 1)])
    cp = {i: [(1 / (m + 1), m - i - 1) for m in range(i + 1, n + 1)] for i in range(n)}
    with pytest.raises(CompileError):
        numeric_mlp(
            x,
            [],
            num("opp", range(n)),
            op="o",
            name="opp",
            context=idx,
            context_points=list(cp.items()),
            context_noise=1e-2,
        )


def test_view_input_mixing_dims() -> None:
    """x read as a - b + 0.25 (a free view); steps where floor(2x) changes."""
    a, b = Dim("a"), Dim("b")
    pairs = [(p / 8, q / 8) for p in range(9) for q in range(9)]
    vals = sorted({pa - pb + 0.25 for pa, pb in pairs})
    x = Encoded("d", Encoding.NUMERICAL, tuple(vals), number=((a, 1.0), (b, -1.0), (ONE, 0.25)))
    out = num("fl", range(-2, 3))
    spec = numeric_mlp(x, [(v, int(np.floor(2 * v))) for v in vals], out, op="floor", name="fl")
    resid = Resid([a, b], len(pairs))
    resid.set(a, [p for p, _ in pairs])
    resid.set(b, [q for _, q in pairs])
    np.testing.assert_array_equal(
        resid.run(spec), expected(out, [int(np.floor(2 * (p - q + 0.25))) for p, q in pairs])
    )


def test_too_close_values_are_refused_with_sizes() -> None:
    xs = [0.0, 1e-9, 1.0]
    with pytest.raises(CompileError) as err:
        numeric_mlp(
            num("x", xs),
            [(v, k) for k, v in enumerate(xs)],
            cat("o", range(3)),
            op="f(x)",
            name="o",
        )
    assert "o: f(x)" in err.value.message and "apart" in err.value.message
    assert err.value.hint


def test_declared_input_error_is_checked() -> None:
    xs, ws = inverse_counts(64)
    pts = list(zip(xs.tolist(), ws))
    numeric_mlp(num("f", xs.tolist()), pts, cat("w", range(65)), op="d", name="w", x_error=1e-7)
    with pytest.raises(CompileError):
        numeric_mlp(num("f", xs.tolist()), pts, cat("w", range(65)), op="d", name="w", x_error=1e-4)


def test_constant_output_needs_no_steps() -> None:
    spec = check_steps(
        num("x", [0.0, 0.5, 1.0]), np.array([0, 0.5, 1], F32), [3, 3, 3], num("c", [3])
    )
    assert spec.notes["pairs"] == 0 and spec.hidden == 1


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(-10_000, 10_000), min_size=2, max_size=40, unique=True),
    st.integers(1, 4),
    st.data(),
    st.booleans(),
)
def test_random_step_functions_are_exact(
    ints: list[int], scale_exp: int, data: st.DataObject, numeric: bool
) -> None:
    xs = np.array(sorted(ints), np.float64) / 10.0**scale_exp
    outs = data.draw(st.lists(st.sampled_from([-2, 0, 1, 5]), min_size=len(xs), max_size=len(xs)))
    out_values = sorted(set(outs))
    out = num("o", out_values) if numeric else cat("o", out_values)
    spec = check_steps(num("x", xs.tolist()), xs.astype(F32), outs, out)
    changes = sum(a != b for a, b in itertools.pairwise(outs))
    assert spec.notes["pairs"] == changes


def test_step_banks_stay_within_their_bound_in_torch_too() -> None:
    """Another BLAS, another summation order: the outputs stay within the builder's bound."""
    import torch

    n = 256
    xs, ws = inverse_counts(n)
    out = cat("w", range(n + 1))
    spec = numeric_mlp(num("frac", xs.tolist()), list(zip(xs.tolist(), ws)), out, op="d", name="w")
    resid = Resid([Dim("frac")], len(xs))
    resid.set(Dim("frac"), xs)
    w_in = np.zeros((len(resid.dims), spec.hidden), F32)
    for d, w in spec.W_in.items():
        w_in[resid.index[d]] = w
    x, wi = torch.from_numpy(resid.x), torch.from_numpy(w_in)
    h = torch.relu(x @ wi + torch.from_numpy(spec.b_in.astype(F32)))  # [rows, hidden]
    y = (h @ torch.from_numpy(spec.W_out.astype(F32))).numpy()
    assert np.abs(y - expected(out, ws)).max() <= spec.notes["output_error_bound"]


def test_output_error_bound_counts_the_on_side_rounding() -> None:
    xs = np.array([0.0, 0.25, 0.5, 0.75, 1.0], F32)
    halves = check_steps(
        num("x", xs.tolist()), xs, [0.5, 1.5, 1.5, -2.25, 0.0], num("h", [0.5, 1.5, -2.25, 0.0])
    )
    # the two units of an on pair round D independently, whatever the output grid
    assert halves.notes["output_error_bound"] > 0.0
    thirds = numeric_mlp(
        num("x", xs.tolist()),
        list(zip(xs.tolist(), [0, 1 / 3, 1, 1, 2])),
        num("t", [0, 1 / 3, 1, 2]),
        op="t",
        name="t",
    )
    assert thirds.notes["output_error_bound"] > 0


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(1, 5), st.data(), st.booleans())
def test_random_per_context_step_functions_are_exact(
    n_contexts: int, data: st.DataObject, numeric: bool
) -> None:
    """Each context has its own reachable xs and outputs; units are shared across contexts."""
    ctx = cat("c", [f"c{k}" for k in range(n_contexts)])
    grid = st.lists(st.integers(0, 400), min_size=1, max_size=12, unique=True)
    context_points = {}
    for k in range(n_contexts):
        xs = sorted(data.draw(grid))
        outs = data.draw(st.lists(st.sampled_from([0, 1, 3]), min_size=len(xs), max_size=len(xs)))
        context_points[f"c{k}"] = [(x / 64, o) for x, o in zip(xs, outs)]
    out = num("o", [0, 1, 3]) if numeric else cat("o", [0, 1, 3])
    x = num("x", [])
    spec = numeric_mlp(
        x, [], out, op="g", name="o", context=ctx, context_points=list(context_points.items())
    )
    rows = [(c, xv, o) for c, pts in context_points.items() for xv, o in pts]
    resid = Resid([Dim("x"), *ctx.dims()], len(rows))
    resid.set(Dim("x"), [xv for _, xv, _ in rows])
    resid.set_categorical(ctx, [c for c, _, _ in rows])
    got = resid.run(spec) - expected(out, [o for *_, o in rows])
    assert np.abs(got).max() <= spec.notes["output_error_bound"]
    most = max(
        sum(a != b for a, b in itertools.pairwise([o for _, o in p]))
        for p in context_points.values()
    )
    assert most <= spec.notes["pairs"]


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(CompileError):
        numeric_mlp(num("x", []), [(0.0, 0), (float("inf"), 1)], cat("o", [0, 1]), op="f", name="o")


def test_relative_input_error_is_checked_point_by_point() -> None:
    """Values 1/(w+1): near 1/65 the gaps are ~2.4e-4, near 1 they are 0.5. A relative error of 1e-3
    is fine near 1/65 (absolute ~1.5e-5) and near 1 (gap 0.5); an absolute 1e-3 everywhere is not."""
    from compiler.numeric import ErrorBound, mean_error

    xs, ws = inverse_counts(64)
    pts = list(zip(xs.tolist(), ws))
    f, w = num("f", xs.tolist()), cat("w", range(65))
    numeric_mlp(f, pts, w, op="d", name="w", x_error=ErrorBound(0.0, 1e-3))
    with pytest.raises(CompileError):
        numeric_mlp(f, pts, w, op="d", name="w", x_error=ErrorBound(1e-3))
    with pytest.raises(CompileError):
        numeric_mlp(f, pts, w, op="d", name="w", x_error=ErrorBound(0.0, 0.1))
    # A mean of non-negative values errs relative to itself; with negative values, absolutely.
    assert (
        mean_error(256, [0, 1], 0).absolute == 0 and 0 < mean_error(256, [0, 1], 0).relative < 1e-4
    )
    assert mean_error(256, [-1, 1], 0).relative == 0 and mean_error(256, [-1, 1], 0).absolute > 0

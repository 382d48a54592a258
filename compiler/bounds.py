"""Float32 error bounds for the certifier: what any evaluation order can do to a dot product.

Higham's bound: |fl(x·y) - x·y| <= gamma_n · sum |x_i y_i| for n products summed in ANY order (any
blocking, thread count, BLAS or GPU kernel, with or without FMA), gamma_n = n·u / (1 - n·u), u = 2^-24.
Products with an exact zero add nothing, so n counts the non-zero weights. Everything here is computed
in float64 from the float32 weights; every bound is rounded up a little (`SLACK`) so that float64's own
rounding cannot make it optimistic.

`Linear` evaluates one linear map of the residual stream (the columns of W_Q, W_K, W_V or W_in) on a
block's reachable states, given as values of its readings (`compiler.reach`): the exact value in
float64, the propagated input error (through |W|) and the rounding magnitude (sum |x_i w_i|).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from compiler.grids import column_grid, dyadic_exponent, row_grid
from compiler.reach import Reading
from compiler.sparse_sums import concrete_products

__all__ = ["column_grid", "dyadic_exponent", "row_grid"]  # (moved to compiler.grids; kept here)

U = 2.0**-24  # float32 unit roundoff
SLACK = 1.0 + 1e-9  # covers float64 rounding in the bound computations themselves
# Half of float32's largest number (3.4e38 is just under 2^128): a product whose terms sum to this
# much in magnitude (so may its partial sums, in some order) can overflow to inf in float32, which
# float64 does not show. Its error is then taken as at least that magnitude, which fails any
# decision that reads it (and `overflow`, a residual dimension that holds it).
OVERFLOW = 2.0**127


def overflowed(error: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """`error`, but at least `magnitude` where that reaches OVERFLOW (a float32 sum may be inf)."""
    return np.where(magnitude >= OVERFLOW, np.maximum(error, magnitude), error)


def f64_error(
    values: np.ndarray, errors: np.ndarray, w: np.ndarray, relative: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A bound on float64's own error in `values @ w` [P, O], as (relative, absolute): |values|
    [P, C] bounds the certifier's float64 evaluations of exact values whose float32 error bound
    is `errors` [P, C], |w| [C, O]. The product rounds (C + 1 terms, unit 2^-53); each value's
    float64 error is below 2^-29 of its float32 bound (the same sums at unit 2^-53, not 2^-24),
    and 0 where that bound is 0 (a value certified exact is computed exactly: one dyadic grid).
    Columns where `relative` [O] holds (terms of one sign) get the product's rounding as a
    relative bound (n·2^-52 of the exact |values @ w|), the others as an absolute one."""
    n = w.shape[0] + 2
    rounding = n * 2.0**-52
    own = (2.0**-28 * errors) @ w  # [P, O]
    if relative is None:
        return np.zeros(w.shape[1]), own + rounding * (values @ w)
    rel = np.where(relative, rounding, 0.0)  # [O]
    return rel[None, :], own + np.where(relative[None, :], 0.0, rounding * (values @ w))


def gamma(n: int | np.ndarray) -> np.ndarray | float:
    n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    return n * U / (1.0 - n * U)


@dataclass
class DimErrors:
    """Per residual dimension at real positions: |float32 - exact| <= absolute + relative·|exact|,
    and `magnitude`, a bound on |exact|."""

    absolute: np.ndarray  # [d_model]
    relative: np.ndarray  # [d_model]
    magnitude: np.ndarray  # [d_model]
    grid: np.ndarray  # [d_model]: every exact value is a multiple of 2^-grid (99: not dyadic)

    def at(self, values: np.ndarray) -> np.ndarray:
        return self.absolute + self.relative * np.abs(values)

    def worst(self) -> np.ndarray:
        return self.at(self.magnitude)


class ReadError(Exception):
    """The weights read the residual stream in a way the reach does not describe."""


@dataclass(frozen=True)
class Evaluated:
    """A linear map on P states: value [P, C], input error [P, C], rounding magnitude [P, C]."""

    value: np.ndarray
    error: np.ndarray
    magnitude: np.ndarray
    grid: np.ndarray | int = (
        0  # [P, C]: the inputs a column reads are multiples of 2^-grid (99: not)
    )


class Linear:
    """x -> x @ W + bias on the states of some readings; W is [d_model, C] (float32 values).

    The residual at a real position is `one` = 1, `bos` = `pad` = 0, the readings' dimensions set by
    their values, and anything else unknown: W must be zero there (else ReadError). A categorical
    value's terms list the dimensions of which exactly one is 1; a numerical value x = sum c_d·x_d + b
    is evaluated as x·w with w = W[d_1]/c_1, and the weights' departure from proportional rows
    (float32 storage) is bounded with the dimensions' magnitudes and counted as error.
    """

    def __init__(
        self,
        weights: np.ndarray,
        bias: np.ndarray,
        readings: Sequence[Reading],
        used: Sequence[int],
        errors: DimErrors,
        specials: tuple[int, int, int],  # (one, bos, pad) indices
    ) -> None:
        self.W = np.asarray(weights, dtype=np.float64)
        self.bias = np.asarray(bias, dtype=np.float64)
        self.readings = list(readings)
        self.err = errors
        self.one, self.bos, self.pad = specials
        self._tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        # the same tables with `at`'s starting terms added (base, 0.0, base size): the first part
        self._first_tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._vector_tables: dict[int, tuple[np.ndarray, ...]] = {}
        covered = {self.one, self.bos, self.pad}
        # Readings that share dimensions are views of one s-op: evaluated together (`_shared`).
        self.groups: list[list[int]] = []
        owner: dict[int, int] = {}
        for rid in dict.fromkeys(used):
            dims = _dims(self.readings[rid], self.one)
            hit = {owner[d] for d in dims if d in owner}
            merged = [rid] + [r for g in sorted(hit) for r in self.groups[g]]
            for g in sorted(hit, reverse=True):
                del self.groups[g]
            self.groups.append(merged)
            owner = {
                d: g
                for g, members in enumerate(self.groups)
                for r in members
                for d in _dims(self.readings[r], self.one)
            }
            covered |= dims
        # (the rows that read anything: W may be d_model x 15,000, so no dense copy of it)
        read_rows = np.unique(np.nonzero(self.W)[0])
        stray = [d for d in read_rows if int(d) not in covered]
        if stray:
            raise ReadError(
                f"weights read residual dimension {int(stray[0])}, which no reading covers"
            )
        # The dyadic grid of each column's weights (the bos/pad rows multiply exact zeros at real
        # positions: they add nothing), for the exact-sum test in `own`.
        self.w_grid = column_grid(self.W, self.bias, skip_rows=[self.bos, self.pad])

        # Products that can be non-zero per column, +1 for the bias: n of gamma_n. Adding an exact
        # 0 is exact, so a one-hot's cold dimensions count only when they carry error.
        def nz(rows: int | list[int]) -> np.ndarray:  # W != 0 on some rows
            return self.W[rows] != 0

        # (`bos` and `pad` are exactly 0 at real positions: their products add nothing)
        self.terms = 1 + nz(self.one).astype(np.int64)
        a = self.err.absolute
        for group in self.groups:
            for rid in group:
                reading = self.readings[rid]
                dims = sorted(_dims(reading, self.one))
                if not dims:
                    continue
                if reading.categorical and len(group) == 1:
                    noisy = [d for d in dims if a[d] > 0]
                    self.terms = self.terms + nz(dims).any(axis=0) + nz(noisy).sum(axis=0)
                else:
                    self.terms = self.terms + nz(dims).sum(axis=0)

    # -- one reading ------------------------------------------------------------------------------

    def _categorical(self, reading: Reading, index: np.ndarray) -> Evaluated:
        """Values, errors and magnitudes [P, C] of one categorical reading at value indices [P]."""
        # one table per reading, built on first use: the certifier evaluates a map chunk by chunk
        # (the errors it reads do not change while a Linear is in use)
        table = self._tables.get(id(reading))
        if table is None:
            table = self._tables[id(reading)] = self._categorical_table(reading)
        return Evaluated(table[0][index], table[1][index], table[2][index])

    def _first_categorical(
        self, reading: Reading, index: np.ndarray, base: np.ndarray, base_size: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`at`'s starting sums (part.value + base, part.error + 0.0, part.magnitude +
        base_size) for a categorical first part: the same additions, made once per table row
        (adding then gathering a row is gathering then adding)"""
        table = self._first_tables.get(id(reading))
        if table is None:
            # the first part's reading is always first: its plain table is never read again
            # (not kept: 0.15 GB for a 2,561-value one-hot over 2,561 columns), and every row of
            # it is gathered as it is (no copy of it gathered in order)
            full = self._tables.get(id(reading)) or self._categorical_table(reading)
            table = (full[0] + base, full[1] + 0.0, full[2] + base_size)
            self._first_tables[id(reading)] = table
        return table[0][index], table[1][index], table[2][index]

    def _categorical_table(self, reading: Reading) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        W, a, r = self.W, self.err.absolute, self.err.relative
        all_dims = sorted({d for t in reading.terms for d, _ in t if d != self.one})
        cold = np.abs(W[all_dims]).T @ a[all_dims] if all_dims else np.zeros(W.shape[1])  # [C]
        rows, errs, mags = [], [], []
        for terms in reading.terms:
            dims = [d for d, _ in terms if d != self.one]
            if any(c != 1.0 for _, c in terms):
                raise ReadError(
                    f"categorical reading {reading.name!r} has a coefficient other than 1"
                )
            if not dims:  # a constant: `one` is always 1 and is read through the ONE row already
                rows.append(np.zeros(W.shape[1]))
                errs.append(cold)
                mags.append(np.zeros(W.shape[1]))
                continue
            rep = W[dims[0]]
            spread = np.abs(W[dims] - rep).max(axis=0)  # which of the dims is hot is unknown
            hot = np.abs(W[dims]).max(axis=0)
            rows.append(rep)
            # every dim may carry its absolute error; the hot one also its relative error
            errs.append(cold + hot * float(r[dims].max()) + spread)
            mags.append(hot * (1.0 + float((a[dims] + r[dims]).max())) + cold)
        return np.array(rows), np.array(errs), np.array(mags)  # [values, C]

    def _vector(self, reading: Reading, index: np.ndarray) -> Evaluated:
        """Values, errors and magnitudes [P, C] of one vector reading at value indices [P]: each
        value sets its dimensions to exact numbers, which carry the dimensions' errors."""
        table = self._vector_tables.get(id(reading))
        if table is None:  # once per reading, as `_categorical`'s (chunks read the same errors)
            table = self._vector_tables[id(reading)] = self._vector_table(reading)
        return Evaluated(table[0][index], table[1][index], table[2][index], table[3][index])

    def _vector_table(
        self, reading: Reading
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`_vector`'s rows for every value: the values of one number of terms at once, term by
        term in order (the same float operations on each row as one value at a time: dyck2's
        index readings at N = 256 took a Python loop of 256 values per chunk)."""
        W, a, r = self.W, self.err.absolute, self.err.relative
        C = W.shape[1]
        if any(d == self.one for terms in reading.terms for d, _ in terms):
            raise ReadError(f"vector reading {reading.name!r} sets the 'one' dimension")
        n = len(reading.terms)
        if n == 0:  # (no rows: the arrays as an empty list of them makes)
            empty = np.array([])
            return empty, empty, empty, empty
        value, err, mag = np.zeros((n, C)), np.zeros((n, C)), np.zeros((n, C))
        grid = np.zeros((n, C), dtype=np.int64)
        by_count: dict[int, list[int]] = {}
        for v, terms in enumerate(reading.terms):
            by_count.setdefault(len(terms), []).append(v)
        for count, members in by_count.items():
            rows = np.array(members, dtype=np.int64)
            v_, e_, m_, g_ = value[rows], err[rows], mag[rows], grid[rows]
            for j in range(count):
                dims = np.array([reading.terms[v][j][0] for v in members], dtype=np.int64)
                # each number as the loop's scalar: a Python number made a float64
                xs = np.array([float(reading.terms[v][j][1]) for v in members])
                w = W[dims]  # [m, C]
                v_ += w * xs[:, None]
                e_ += np.abs(w) * (a[dims] + r[dims] * np.abs(xs))[:, None]
                m_ += np.abs(w * xs[:, None])
                g_ = np.maximum(g_, np.where(w != 0, dyadic_exponent(xs)[:, None], 0))
            value[rows], err[rows], mag[rows], grid[rows] = v_, e_, m_, g_
        return value, err, mag + err, grid

    def _numerical(self, reading: Reading, x: np.ndarray) -> Evaluated:
        """Values, errors and magnitudes [P, C] of one numerical reading at numbers x [P]."""
        (terms,) = reading.terms
        b = sum(c for d, c in terms if d == self.one)
        parts = [(d, c) for d, c in terms if d != self.one and c != 0.0]
        parts += [(d, c) for d, c in terms if d != self.one and c == 0.0]  # read as 0: W must be 0
        C = self.W.shape[1]
        if not parts or parts[0][1] == 0.0:
            zeros = np.zeros((len(x), C))
            return Evaluated(zeros, zeros, zeros)
        d1, c1 = parts[0]
        w = self.W[d1] / c1  # [C]
        value = np.outer(x - b, w)  # [P, C]
        a, r, mag = self.err.absolute, self.err.relative, self.err.magnitude
        # The reading's terms hold the program's number x only up to its misfit (an affine view
        # read as its fit): the columns read sum_d W[d]·x_d, within |w|·misfit of w·(x - b).
        if len(parts) == 1:
            miss = reading.misfit / abs(c1)  # the dim's exact value is within this of xd
            xd = np.abs((x - b) / c1)  # [P]: the dim's exact value (up to `miss`)
            err = np.outer(a[d1] + r[d1] * (xd + miss) + miss, np.abs(self.W[d1]))
            size = np.outer(xd, np.abs(self.W[d1])) + err
            reads = self.W[d1] != 0  # [C]: the columns that see this reading at all
            return Evaluated(
                value, err, size, np.where(reads[None, :], dyadic_exponent(xd)[:, None], 0)
            )
        dims = [d for d, _ in parts]
        coefs = np.array([c for _, c in parts])
        # exact = sum_d W[d]·x_d; we evaluate w·(x - b): off by sum_d (W[d] - c_d·w)·x_d
        departure = np.abs(self.W[dims] - np.outer(coefs, w)).T @ mag[dims]  # [C]
        err_c = np.abs(self.W[dims]).T @ (a[dims] + r[dims] * mag[dims]) + departure  # [C]
        err_c = err_c + np.abs(w) * reading.misfit
        size_c = np.abs(self.W[dims]).T @ mag[dims] + err_c
        ones = np.ones(len(x))
        reads = (self.W[dims] != 0).any(axis=0)
        dims_grid = int(self.err.grid[dims].max()) if err_c.max(initial=0.0) == 0 else 99
        grid = np.tile(np.where(reads, dims_grid, 0), (len(x), 1))
        return Evaluated(value, np.outer(ones, err_c), np.outer(ones, size_c), grid)

    # -- a whole state --------------------------------------------------------------------------

    def at(self, reading_ids: Sequence[int], coords: np.ndarray) -> Evaluated:
        """The map at P states: coords [P, len(reading_ids)] (categorical: value index; numerical:
        the number). Includes the `one` row and the bias; error excludes this map's own rounding.
        A state no dimension can realise (views of one s-op that disagree) gets NaN."""
        P = coords.shape[0]
        base = self.W[self.one] + self.bias  # [C]
        base_size = np.abs(self.W[self.one]) + np.abs(self.bias)
        # The first part starts each sum (base + part: the same float as tiling base and adding;
        # 0.0 + error likewise); grids are >= 0, so an array grid needs no max with the zeros.
        value = error = size = grid = None
        column = {rid: k for k, rid in enumerate(reading_ids)}
        for group in self.groups:
            if len(group) == 1:
                reading = self.readings[group[0]]
                c = coords[:, column[group[0]]]
                if reading.categorical and value is None:
                    index = c.astype(np.int64)
                    value, error, size = self._first_categorical(reading, index, base, base_size)
                    continue
                if reading.categorical:
                    part = self._categorical(reading, c.astype(np.int64))
                elif reading.vector:
                    part = self._vector(reading, c.astype(np.int64))
                else:
                    part = self._numerical(reading, c)
            else:
                part = self._shared(group, coords[:, [column[r] for r in group]])
            if value is None:
                value = part.value + base
                error = part.error + 0.0
                size = part.magnitude + base_size
            else:
                value += part.value
                error += part.error
                size += part.magnitude
            if isinstance(part.grid, np.ndarray):
                grid = part.grid if grid is None else np.maximum(grid, part.grid)
        C = self.W.shape[1]
        if value is None:
            value, error = np.tile(base, (P, 1)), np.zeros((P, C))
            size = np.tile(base_size, (P, 1))
        # no reading with a grid: every input is a whole number (grid 0), one int for all
        return Evaluated(value, error, size, 0 if grid is None else grid)

    def _shared(self, group: list[int], coords: np.ndarray) -> Evaluated:
        """Several readings of one s-op: exactly one of their dimensions is 1; a state is every
        dimension consistent with all the readings' values."""
        if any(self.readings[r].vector for r in group):
            raise ReadError("a vector reading shares dimensions with another reading of one map")
        dims = sorted(set().union(*(_dims(self.readings[r], self.one) for r in group)))
        where = {d: i for i, d in enumerate(dims)}
        ok = np.ones((coords.shape[0], len(dims)), dtype=bool)
        for k, rid in enumerate(group):
            reading = self.readings[rid]
            if reading.categorical:
                compat = np.zeros((reading.size, len(dims)), dtype=bool)
                for v, terms in enumerate(reading.terms):
                    for d, _ in terms:
                        if d != self.one:
                            compat[v, where[d]] = True
                ok &= compat[coords[:, k].astype(np.int64)]
            else:
                (terms,) = reading.terms
                b = sum(c for d, c in terms if d == self.one)
                coef = np.zeros(len(dims))
                for d, c in terms:
                    if d != self.one:
                        coef[where[d]] = c
                # one-hot dims: the value is b + the hot dim's coefficient, which misses the
                # program's number by up to the reading's misfit (a state no dimension realises
                # is skipped: a tolerance too small here would skip real states unchecked). The
                # slack covers float64's roundings of (coef + b) - x, at most 2^-52 of |x| plus
                # the misfit: too wide only adds candidate dims, whose spread below counts as
                # error, so it cannot drop the dim that holds the value
                # (tests/compiler/test_matching_tolerances.py)
                x = coords[:, k][:, None]
                near = reading.misfit * (1 + 1e-9) + 1e-12 * np.abs(x)
                ok &= np.abs((coef + b)[None, :] - x) <= near
        W, a, r = self.W[dims], self.err.absolute[dims], self.err.relative[dims]
        rep = np.argmax(ok, axis=1)  # [P]
        value = W[rep]
        spread = np.zeros_like(value)
        for i in range(len(dims)):
            spread = np.maximum(spread, np.where(ok[:, i : i + 1], np.abs(W[i] - value), 0.0))
        cold = np.abs(W).T @ a  # [C]
        hot = np.abs(W).max(axis=0) * float((r).max(initial=0.0))
        err = cold + hot + spread
        mag = np.abs(value) * (1 + float((a + r).max(initial=0.0))) + cold + spread
        value = np.where(ok.any(axis=1)[:, None], value, np.nan)
        return Evaluated(value, err, mag)

    def own(self, ev: Evaluated) -> np.ndarray:
        """The float32 rounding of the dot products themselves, [P, C] (at least the terms'
        magnitude where a float32 sum of them can overflow: `overflowed`)."""
        return overflowed(self._own(ev), ev.magnitude + ev.error)

    def _own(self, ev: Evaluated) -> np.ndarray:
        """The float32 rounding of the dot products themselves, [P, C]. A column whose products all
        lie on one dyadic grid (x·w·2^k integers) with |sum| < 2^24 grid steps, at exact inputs,
        is exact in any order: 0 there."""
        rounding = gamma(self.terms) * ev.magnitude
        # the grid test only where the inputs are exact (where they are not, the column rounds
        # whatever its grid): at most points of a map of a noisy number that is nowhere
        exact_in = ev.error == 0
        found = np.count_nonzero(exact_in)
        if found == 0:
            return rounding
        if found * 4 > exact_in.size:
            # mostly exact inputs (a table's categorical readings): the same test on every entry
            # costs less than gathering and scattering most of them (same values where it counts)
            # ldexp(m, k) < 2^24 as m < 2^(24 - k): scaling by 2^k is exact (k in [-60, 60];
            # an overflow is above either bound, an underflow below it); the bound per column
            # where the inputs' grid is one number (categorical readings), -inf beyond 60 steps
            steps = np.asarray(ev.grid) + self.w_grid[None, :]  # [1, C] or [P, C]
            bound = np.where(steps <= 60, np.ldexp(1.0, 24 - np.minimum(steps, 60)), -np.inf)
            rounding[exact_in & (ev.magnitude < bound)] = 0.0
            return rounding
        rows, cols = np.nonzero(exact_in)
        grid = np.broadcast_to(np.asarray(ev.grid), ev.error.shape)  # [P, C] (an int: everywhere)
        steps = grid[rows, cols] + self.w_grid[cols]
        exact = (steps <= 60) & (
            np.ldexp(ev.magnitude[rows, cols], np.minimum(steps, 60)) < 2.0**24
        )
        rounding[rows[exact], cols[exact]] = 0.0
        return rounding

    def rounding(self, ev: Evaluated) -> np.ndarray:
        """Input error plus the float32 rounding of the dot product itself, [P, C]."""
        return (ev.error + self.own(ev)) * SLACK


def _dims(reading: Reading, one: int) -> set[int]:
    return {d for terms in reading.terms for d, _ in terms if d != one}


def special_linear(
    x: np.ndarray,
    e: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray,
    entries: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A linear map at concrete (BOS/PAD) residuals x [S, d_model] with errors e: value and total
    error [S, C] (input error plus rounding). From W's non-zeros alone (`compiler.sparse_sums`:
    W may be d_model x 15,000, or a padded head's 5,192 x 4,096 with 8 non-zeros). W may be
    float32 (a head's stored slice, `compiler.head_slices`): its entries are converted as they
    are read, the same float64 numbers. `entries`: `concrete_products`'."""
    W = np.asarray(weights)
    C = W.shape[1]
    rows, cols = np.nonzero(W)
    # carried: the input error
    value, size, carried = concrete_products(x, e, W, (rows, cols), entries)
    value += bias
    size += np.abs(bias)
    n = np.bincount(cols, minlength=C) + 1
    exact = exact_sums(x, W, bias, carried, size, (rows, cols))
    return value, overflowed(np.where(exact, 0.0, (carried + gamma(n) * size) * SLACK), size)


def exact_sums(
    x: np.ndarray,
    weights: np.ndarray,
    bias: np.ndarray,
    carried: np.ndarray,
    size: np.ndarray,
    nonzero: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """[S, C]: where `x @ W + bias` at concrete rows x [S, D] is computed exactly in every
    evaluation order, from `concrete_products`' input error `carried` [S, C] and `size` [S, C]
    (the sum of |products|, plus |bias|); `nonzero`: np.nonzero(W), where the caller has it."""
    W = np.asarray(weights)  # (float32 too: only its non-zeros are read, converted)
    rows, cols = np.nonzero(W) if nonzero is None else nonzero
    # Exact inputs and products on one dyadic grid within 2^24 steps: exact in any order. Per
    # column, only the dimensions it reads count (a product with a zero weight is an exact 0):
    # their errors, and the finest grid among their values (BOS's `one` and `bos` rows stay
    # exact while other dimensions of the BOS residual carry error).
    w_grid = column_grid(W, bias, nonzero=(rows, cols))  # [C]
    x_grid = dyadic_exponent(x)  # [S, D]
    finest = np.zeros((x.shape[0], W.shape[1]), dtype=np.int64)  # [S, C]
    for s in range(x.shape[0]):  # the coarsest grid among the dims each column reads (0: none)
        np.maximum.at(finest[s], cols, x_grid[s, rows])
    steps = finest + w_grid[None, :]
    return (carried == 0) & (steps <= 60) & (np.ldexp(size, np.minimum(steps, 60)) < 2.0**24)

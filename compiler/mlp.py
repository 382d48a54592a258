"""Exact MLPs in Dim coordinates: the unit builder, lookup tables and joint (product) one-hots.

Every builder returns out = relu(resid·W_in + b_in)·W_out, exact on every reachable input:

- A table unit fires for one tuple of categorical values: relu(2·sum of its k one-hots - (2k-1)) is
  exactly 1 on the tuple and exactly 0 elsewhere (a partial match gives <= -1); one-hot noise below
  1/(2k) keeps the other units at exactly 0. On the tuple the unit passes the noise on; a clamped
  table (`table_mlp(clamp=True)`) writes each row with a pair, relu(3s - (3k-2)) - relu(3s -
  (3k-1)) for s the sum of its one-hots, which is exactly 1 on the tuple (both on) and 0 elsewhere
  (both off) for noise below 1/(3k): the pair's identical input weights cancel the noise.
- Step banks over a numerical reading (`numeric_mlp`) live in `compiler.step_mlp`; they build their
  units with `Builder` and write outputs with `Output` from here.

Outputs are a base value (a constant `one` unit, or one unit per context value) plus deltas, so units
are only spent where the output changes. docs/compiler-weights.md has the proofs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from compiler.blocks import (
    ONE,
    Atom,
    Dim,
    Encoded,
    Encoding,
    MLPDomain,
    MLPSpec,
    Terms,
    value_key,
)
from compiler.out_rows import OutRows
from rasp.errors import CompileError, Diagnostic
from rasp.wording import with_article

__all__ = [
    "EMBEDDED",
    "Builder",
    "Output",
    "check_size",
    "dyadic",
    "exact_reading",
    "joint_mlp",
    "linear",
    "table_mlp",
]

# Dims the embedding writes exactly (0 or 1, or an exact index): readings of them are exact.
EMBEDDED = ("tokens", "indices", "indices^2")

# (reachable input, hidden unit) pairs of one MLP, as the certifier bounds a head's (query, key)
# pairs (certify_attention.MAX_PAIRS): building, assembling and certifying cost about this many
# float64 numbers, so a larger MLP would take minutes and gigabytes (or end in a MemoryError).
MAX_MLP_PAIRS = 200_000_000


def check_size(op: str, kind: str, points: int, units: int, width: int) -> None:
    """Refuse (CompileError; the planner adds the node's span) an MLP over `points` reachable
    inputs with `units` hidden units, reading and writing `width` dims, before allocating it."""
    if points * units <= MAX_MLP_PAIRS:
        return
    params = units * (width + 1)
    raise CompileError(
        [
            Diagnostic(
                f"'{op}' needs {with_article(kind)} MLP of {units:,} hidden units over {points:,} reachable "
                f"inputs (at least {params:,} parameters): {points * units:,} (input, unit) "
                f"pairs, more than the compiler builds and certifies ({MAX_MLP_PAIRS:,})",
                None,
                "use a smaller vocabulary or maximum length, or compute it from s-ops with fewer "
                "values (a mean rounded, or a number passed on instead of a table of several)",
            )
        ]
    )


class Builder:
    """Accumulates hidden units: W_in columns (dim -> weight), biases and output rows."""

    def __init__(self, n_out: int) -> None:
        self.n_out = n_out
        # a unit's column (dim -> weight), or a block of units' columns (`block`)
        self.columns: list[dict[Dim, float] | _Block] = []
        self.biases: list[float] = []
        self.outputs: list[np.ndarray] = []

    def unit(self, terms: Mapping[Dim, float], bias: float, output: np.ndarray) -> None:
        self.columns.append(dict(terms))
        self.biases.append(bias)
        self.outputs.append(np.asarray(output, dtype=float))

    def block(
        self,
        dims: Sequence[Dim],
        weights: np.ndarray,
        biases: Sequence[float],
        outputs: Sequence[np.ndarray],
        times: int = 1,
    ) -> None:
        """len(biases) units at once, each column of `weights` [len(dims), len(biases) / times]
        the next `times` units' (over `dims`: distinct, in the order a `unit`'s terms would list
        them): the MLP `unit` would build, one column per unit, without a dict per unit (a step
        MLP of 2,000 contexts: 8M entries)."""
        if len(biases) != times * weights.shape[1]:
            raise ValueError(f"{len(biases)} biases for {weights.shape[1]} columns x {times}")
        self.columns.append(_Block(tuple(dims), np.asarray(weights, dtype=float), times))
        self.biases.extend(biases)
        self.outputs.extend(np.asarray(o, dtype=float) for o in outputs)

    def spec(
        self,
        op: str,
        name: str,
        out_dims: tuple[Dim, ...],
        notes: dict,
        domain: MLPDomain,
        *,
        continuous: bool = False,
    ) -> MLPSpec:
        hidden = len(self.biases)
        # (units, weights) per dim, first-seen order, then one array write each: writing array
        # items one by one dominated wide MLPs (0.0 + w is w: each (dim, unit) occurs once)
        entries: dict[Dim, tuple[list[int], list[float]]] = {}
        chunks: dict[Dim, list[tuple[np.ndarray, np.ndarray]]] = {}  # blocks' (units, weights)
        j = 0
        for column in self.columns:
            if isinstance(column, _Block):
                j = column.enter(j, entries, chunks)
                continue
            for dim, w in column.items():
                if w != 0.0:
                    got = entries.get(dim)
                    if got is None:
                        got = entries[dim] = ([], [])
                    got[0].append(j)
                    got[1].append(w)
            j += 1
        w_in: dict[Dim, np.ndarray] = {}
        for dim, (units, ws) in entries.items():
            w_in[dim] = column_of = np.zeros(hidden)
            column_of[units] = ws
            for at, block_ws in chunks.get(dim, ()):
                column_of[at] = block_ws
        # entries, not a dense array: read whole only by a build that is kept (`OutRows`)
        w_out = OutRows.of(self.outputs, self.n_out)
        biases = np.array(self.biases, dtype=float)
        return MLPSpec(op, name, w_in, biases, w_out, out_dims, notes, domain, continuous)


@dataclass(frozen=True, eq=False)
class _Block:
    """Columns of consecutive units: weights [len(dims), units / times], each column `times`
    units' in a row."""

    dims: tuple[Dim, ...]
    weights: np.ndarray
    times: int = 1

    def enter(
        self,
        start: int,
        entries: dict[Dim, tuple[list[int], list[float]]],
        chunks: dict[Dim, list[tuple[np.ndarray, np.ndarray]]],
    ) -> int:
        """Adds its non-zero weights (units from `start`) to `Builder.spec`'s entries, a dim
        first seen here placed as unit by unit, dim by dim, would place it: by its first unit
        with a non-zero weight, then its row. Returns the unit after its last."""
        nonzero = self.weights != 0.0
        some = nonzero.any(axis=1)
        first = np.argmax(nonzero, axis=1)
        rows = np.flatnonzero(some)
        for r in rows[np.lexsort((rows, first[rows]))]:
            dim = self.dims[r]
            if dim not in entries:
                entries[dim] = ([], [])
            at = np.flatnonzero(nonzero[r])
            units = (start + self.times * at)[:, None] + np.arange(self.times)
            ws = np.repeat(self.weights[r, at], self.times)
            chunks.setdefault(dim, []).append((units.reshape(-1), ws))
        return start + self.times * self.weights.shape[1]


def linear(*parts: tuple[Terms, float]) -> dict[Dim, float]:
    """sum of scale * reading, as dim -> weight."""
    acc: dict[Dim, float] = {}
    for terms, scale in parts:
        for dim, coef in terms:
            acc[dim] = acc.get(dim, 0.0) + scale * coef
    return acc


class Output:
    """How an output value is written: a one-hot row, one number, or (a vector reading) the numbers
    each value sets its dimensions to."""

    def __init__(self, out: Encoded) -> None:
        self.out = out
        # (asked once: `change` runs once per step of a step MLP, 64K times at a time)
        self._categorical = out.is_categorical
        self._number = out.encoding is Encoding.NUMERICAL
        if out.is_categorical:
            self.dims = tuple(_single_dim(t, out.name) for t in out.one_hot)
        elif out.encoding is Encoding.VECTOR:
            self.dims = out.dims()
        else:
            self.dims = (_single_dim(out.number, out.name),)

    @cached_property
    def column(self) -> dict[Any, int]:
        """Each value's column (by key): a one-hot's or a vector's; a number's output never reads
        it (a map's hundreds of thousands of numbers, keyed again for each of its MLPs)."""
        return {value_key(v): k for k, v in enumerate(self.out.values)}

    def encode(self, v: Atom) -> np.ndarray:
        if self.out.is_categorical:
            row = np.zeros(len(self.dims))
            row[self.column[value_key(v)]] = 1.0
            return row
        if self.out.encoding is Encoding.VECTOR:
            row = np.zeros(len(self.dims))
            for dim, number in self.out.one_hot[self.column[value_key(v)]]:
                row[self.dims.index(dim)] = number
            return row
        if isinstance(v, bool | int | float):
            return np.array([float(v)])
        raise ValueError(f"{self.out.name}: output value {v!r} is not a number")

    def change(self, before: Atom, after: Atom) -> tuple:
        """A hashable key for the output row difference `encode(after) - encode(before)`."""
        if self._categorical:
            return (value_key(before), value_key(after))
        if self._number and _is_number(before) and _is_number(after):
            # one number: encode's float64 difference without its arrays (a step MLP of 32
            # contexts asks 311K times: 3.4 s of `m * indices` at N = 32)
            return (float(after) - float(before),)
        return tuple(float(x) for x in self.encode(after) - self.encode(before))


def _is_number(v: Atom) -> bool:  # what `Output.encode` writes as a number
    return isinstance(v, bool | int | float)


def _single_dim(terms: Terms, what: str) -> Dim:
    if len(terms) != 1 or terms[0][1] != 1.0:
        raise ValueError(
            f"{what} must be written to a single materialised dimension, got {terms!r}"
        )
    return terms[0][0]


def _most_common(values: Sequence[Atom]) -> Atom:
    counts = Counter(value_key(v) for v in values)
    best = max(counts, key=lambda k: counts[k])
    return next(v for v in values if value_key(v) == best)


def table_mlp(
    inputs: Sequence[Encoded],
    table: Mapping[tuple, Atom] | Sequence[tuple[tuple, Atom]],
    out: Encoded,
    *,
    op: str,
    name: str,
    exact: set[Dim] | None = None,
    clamp: bool = False,
) -> MLPSpec:
    """A lookup table over categorical readings: the most common output as a base, one unit per
    reachable tuple whose output differs from it.

    `table` maps tuples of input values to the output value; pass it as a list of (tuple, value)
    pairs when the inputs hold values that Python's dict would merge (1, 1.0 and True).
    `clamp`: where an input is not known exact (`exact`), each row is a saturating pair (module
    doc) whose output carries none of the inputs' error, at twice the units.
    """
    items = list(table.items()) if isinstance(table, Mapping) else list(table)
    if not items:
        raise ValueError(f"{name}: empty table")
    writer = Output(out)
    base = _most_common([v for _, v in items])
    base_row = writer.encode(base)
    # inputs proved exact give exact outputs: a pair would only cost units
    noisy = exact is None or not all(exact_reading(e, exact) for e in inputs)
    clamped = clamp and noisy
    rows = sum(value_key(v) != value_key(base) for _, v in items)
    units = rows * (2 if clamped else 1) + int(base_row.any())
    width = sum(len(e.one_hot) for e in inputs) + len(writer.dims)
    check_size(op, "table", len(items), units, width)
    b = Builder(len(writer.dims))
    if base_row.any():
        b.unit({ONE: 1.0}, 0.0, base_row)
    k = len(inputs)
    columns = [{value_key(v): enc.one_hot[j] for j, v in enumerate(enc.values)} for enc in inputs]
    for tup, result in items:
        if value_key(result) == value_key(base):
            continue
        try:
            parts = [(col[value_key(v)], 2.0) for col, v in zip(columns, tup)]
        except KeyError as missing:
            raise ValueError(
                f"{name}: table row {tup!r} holds a value its reading lacks"
            ) from missing
        delta = writer.encode(result) - base_row
        if clamped:
            # 3s - (3k-2) and 3s - (3k-1): 2 and 1 on the tuple, <= -1 and -2 off it
            terms = linear(*((col, 3.0) for col, _ in parts))
            b.unit(terms, -(3.0 * k - 2.0), delta)
            b.unit(terms, -(3.0 * k - 1.0), -delta)
        else:
            b.unit(linear(*parts), -(2.0 * k - 1.0), delta)
    notes = {
        "kind": "table",
        "inputs": [e.name for e in inputs],
        "rows": len(items),
        "onehot_noise_tolerated": 1 / ((3 if clamped else 2) * k),
        "noisy_inputs": noisy,
        "clamped": clamped,
    }
    domain = MLPDomain(
        tuple(inputs), tuple(tuple(t) for t, _ in items), tuple(v for _, v in items), out
    )
    spec = b.spec(op, name, writer.dims, notes, domain)
    # exact 0/1 inputs give integer activations: exact outputs where the output rows are dyadic
    if exact is not None and all(exact_reading(e, exact) for e in inputs) and dyadic(spec):
        exact.update(writer.dims)
    return spec


def joint_mlp(
    inputs: Sequence[Encoded],
    tuples: Sequence[tuple],
    out_name: str,
    *,
    op: str,
    exact: set[Dim] | None = None,
) -> tuple[MLPSpec, Encoded]:
    """A product one-hot `out_name:(v1, v2, ...)` over the reachable tuples of several readings."""
    unique: dict[tuple, tuple] = {}
    for t in tuples:
        unique.setdefault(tuple(value_key(v) for v in t), tuple(t))
    values = tuple(unique.values())
    out = Encoded.materialised_categorical(out_name, values)
    spec = table_mlp(inputs, [(t, t) for t in values], out, op=op, name=out_name, exact=exact)
    return spec, out


def dyadic(spec: MLPSpec) -> bool:
    """Whether every output row is on the 2^-16 grid (exact sums of integer activations)."""
    # the non-zero entries only (NaN among them): a zero is on every grid, and W_out is mostly
    # zeros (a numeric step MLP into a one-hot of thousands of values: ~1e8 entries, where
    # scaling and rounding all of them took a third of twins seed 409's compile)
    out = spec.out_rows
    w = out.nonzero() if isinstance(out, OutRows) else np.asarray(out)
    rows = np.asarray(w[w != 0], dtype=np.float64) * 2.0**16
    return bool(np.array_equal(rows, np.round(rows)))


def exact_reading(enc: Encoded, exact: set[Dim]) -> bool:
    """Whether every dim of `enc` is exact in any float32 order (the embedding's, or proved so)."""
    return all(d == ONE or d.name in EMBEDDED or d in exact for d in enc.dims())

"""Exact attention heads in Dim coordinates: aggregate, selector_width, and merging heads.

Scores (before assembly divides by sqrt(d_head), which it folds back in): a conjunction of m atomic
predicates scores SCORE_UNIT per satisfied atom, so a selected key scores exactly m·S and an
unselected one at most (m-1)·S. Assembly adds the BOS key at `bos_score` and PAD keys far below.
Each atom gets its own block of query/key dimensions: one query dimension per distinct non-zero row
of its table (or one key dimension per distinct column, whichever is fewer), so q·k is S·table[a, b]
with a single non-zero product: exact in float32 for 0/1 readings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from compiler import plan_limit
from compiler.blocks import (
    ALL_TRUE,
    BOS,
    EVERY_POSITION,
    Atom,
    Atomic,
    Dim,
    Encoded,
    HeadDomain,
    HeadSpec,
    Selects,
    Terms,
    ValuePart,
    mask_label,
    value_key,
)
from compiler.numeric import SCORE_UNIT, SOFTMAX_GAP

if TYPE_CHECKING:
    from compiler.addressing import Address

__all__ = [
    "SCORE_UNIT",
    "SOFTMAX_GAP",
    "aggregate_head",
    "merge_heads",
    "selector_weights",
    "selector_width_head",
    "split_mask",
]


def _add(rows: dict[Dim, np.ndarray], terms: Terms, column: int, scale: float, width: int) -> None:
    """rows[dim][column] += scale * coefficient, for every (dim, coefficient) of a reading."""
    for dim, coef in terms:
        if dim not in rows:
            rows[dim] = np.zeros(width)
        rows[dim][column] += scale * coef


def _classes(table: np.ndarray) -> tuple[list[np.ndarray], list[int]]:
    """Distinct non-zero rows of a 0/1 table in the order they first occur, and each row's class
    (-1 for an all-zero row). Rows are told apart packed 8 cells a byte, all at once (a row's
    bytes each, hashed, took 2.6 s for 14,000 x 14,000 tokens)."""
    table = np.asarray(table, dtype=bool)
    n_rows = table.shape[0]
    nonzero = table.any(axis=1) if table.size else np.zeros(n_rows, dtype=bool)
    if not nonzero.any():
        return [], [-1] * n_rows
    if table.flags.c_contiguous or not table.T.flags.c_contiguous:
        packed = np.ascontiguousarray(np.packbits(table, axis=1))
    else:  # a table's transpose (its columns' classes): packed along its memory order
        packed = _packed_columns(table.T)
    rows = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    # each distinct non-zero row's class: its rank by first occurrence
    kept = np.flatnonzero(nonzero[first])
    by_first = kept[np.argsort(first[kept], kind="stable")]
    class_of = np.full(len(first), -1, dtype=np.int64)
    class_of[by_first] = np.arange(len(by_first))
    return [table[i] for i in first[by_first]], class_of[inverse].tolist()


def _packed_columns(table: np.ndarray) -> np.ndarray:
    """`np.packbits(table, axis=0).T`, C-contiguous, for a C-contiguous 0/1 `table`: eight whole
    rows shifted into each byte (packbits along axis 0 strides across memory: 0.45 s for 10,000 x
    10,000 tokens, this 0.08 s)."""
    rows, cols = table.shape
    cells = table.view(np.uint8)
    if rows % 8:
        cells = np.concatenate([cells, np.zeros((-rows % 8, cols), dtype=np.uint8)])
    cells = cells.reshape(-1, 8, cols)
    packed = np.zeros((cells.shape[0], cols), dtype=np.uint8)
    for bit in range(8):  # packbits' order: the first row in the highest bit
        packed |= cells[:, bit, :] << np.uint8(7 - bit)
    return np.ascontiguousarray(packed.T)


def _atom_block(
    selector_side: Encoded, other_side: Encoded, table: np.ndarray, start: int, width: int
) -> tuple[dict[Dim, np.ndarray], dict[Dim, np.ndarray]]:
    """One atom's columns [start, start + classes): `selector_side` value a reads the unit vector of
    its row class of `table` [a, b]; `other_side` value b reads S * (that class's row)[b]."""
    reps, of_row = _classes(table)
    one_hot_rows: dict[Dim, np.ndarray] = {}
    scaled_rows: dict[Dim, np.ndarray] = {}
    for a, cls in enumerate(of_row):
        if cls >= 0:
            _add(one_hot_rows, selector_side.one_hot[a], start + cls, 1.0, width)
    if reps:
        selected = np.array(reps, dtype=np.float64)  # [classes, b]: 1 where the class holds at b
        columns = slice(start, start + len(reps))
        for b in np.flatnonzero(selected.any(axis=0)):
            # each class column gets S * coefficient where it holds, added in b's order as
            # entry by entry, so the sums are the same floats
            for dim, coef in other_side.one_hot[b]:
                if dim not in scaled_rows:
                    scaled_rows[dim] = np.zeros(width)
                scaled_rows[dim][columns] += SCORE_UNIT * coef * selected[:, b]
    return one_hot_rows, scaled_rows


def selector_weights(
    atoms: Sequence[Atomic], *, averages: bool
) -> tuple[dict[Dim, np.ndarray], dict[Dim, np.ndarray], int]:
    """W_Q, W_K (dim -> [d_qk]) such that q·k = S * (number of atoms whose table holds).
    `averages`: the head may select several keys (compiler.plan_limit's bound on its layer).

    Each atom takes one column per distinct non-zero row of its table (or per distinct column,
    whichever is fewer), so q·k has a single non-zero product per atom: exact for 0/1 readings.
    """
    matches = [a.match for a in atoms if a.match is not None]
    atoms = [a for a in atoms if a.match is None]
    tables = []
    for atom in atoms:
        table = np.asarray(atom.table, dtype=bool)
        if table.shape != (len(atom.query.values), len(atom.key.values)):
            raise ValueError(f"atom table shape {table.shape} does not match its readings")
        n_rows, n_cols = len(_classes(table)[0]), len(_classes(table.T)[0])
        # Beside a matching atom, the query reads S (the key its class): every query entry then
        # lies on matching's coarse grid (multiples of c/2), where sums of scores stay exact.
        by_query = n_rows <= n_cols and not matches
        tables.append((atom, table, by_query, n_cols if matches else min(n_rows, n_cols)))
    width = sum(size for *_, size in tables) + 3 * len(matches)
    # the build's size is known to be over its limit before the rows are filled (sort over
    # 5,000 tokens: 15 s and a GB per build)
    plan_limit.check_head(width, averages)
    w_q: dict[Dim, np.ndarray] = {}
    w_k: dict[Dim, np.ndarray] = {}
    start = 0
    for match in matches:  # three columns each: q.k = -c (q - k)^2
        for rows, block in ((w_q, match.w_q), (w_k, match.w_k)):
            for dim, vec in block.items():
                rows.setdefault(dim, np.zeros(width))[start : start + 3] += vec
        start += 3
    for atom, table, by_query, size in tables:
        if by_query:
            q_rows, k_rows = _atom_block(atom.query, atom.key, table, start, width)
        else:
            k_rows, q_rows = _atom_block(atom.key, atom.query, table.T, start, width)
        for rows, block in ((w_q, q_rows), (w_k, k_rows)):
            for dim, vec in block.items():
                rows[dim] = rows.get(dim, np.zeros(width)) + vec
        start += size
    if width == 0:
        # No atom can ever hold (or there are none): one zero column keeps the shapes valid.
        return {BOS: np.zeros(1)}, {BOS: np.zeros(1)}, 1
    return w_q, w_k, width


def split_mask(atoms: Sequence[Atomic]) -> tuple[list[Atomic], str] | None:
    """A conjunction's scored atoms and its head's mask (the positions every mask atom keeps);
    [ALL_TRUE] when only masks select. None when the masks keep no position: nothing is
    selected."""
    positions = EVERY_POSITION
    for atom in atoms:
        positions = positions & atom.positions
    if not positions:
        return None
    scored = [a for a in atoms if not a.is_mask]
    return scored or [ALL_TRUE], mask_label(positions)


def selected_score(atoms: Sequence[Atomic]) -> tuple[float, float]:
    """A conjunction's scores: (what a selected key scores, how far below it the best unselected
    key is at least). An ordinary atom adds S where it holds (so failing one costs S), a matching
    atom 0 (failing it costs at least its scale c)."""
    plain = sum(1 for a in atoms if a.match is None)
    gaps = [SCORE_UNIT] * bool(plain) + [a.match.scale for a in atoms if a.match is not None]
    return plain * SCORE_UNIT, min(gaps, default=SCORE_UNIT)


def _masked(atoms: Sequence[Atomic]) -> tuple[list[Atomic], str]:
    split = split_mask(atoms)
    if split is None:
        # a contradiction of masks (`<` and `>`) selects no key: one atom that never holds
        # (no columns), the head's query sees BOS alone
        return [Atomic(ALL_TRUE.query, ALL_TRUE.key, np.zeros((1, 1), dtype=bool))], ""
    return split


def _number_terms(value: Encoded) -> Terms:
    """A reading as one number: its numerical terms, or sum_v v * one_hot[v] for a categorical one."""
    if not value.is_categorical:
        return value.number
    terms: list[tuple[Dim, float]] = []
    for v, one_hot in zip(value.values, value.one_hot):
        number = _as_number(v, value.name)
        if number != 0:
            terms.extend((dim, coef * number) for dim, coef in one_hot)
    return tuple(terms)


def _as_number(v: Atom, what: str) -> float:
    if isinstance(v, bool | int | float):
        return float(v)
    raise ValueError(f"{what}: value {v!r} is not a number")


def _single_dim(terms: Terms, what: str) -> Dim:
    if len(terms) != 1 or terms[0][1] != 1.0:
        raise ValueError(f"{what} must be a single materialised dimension, got {terms!r}")
    return terms[0][0]


def aggregate_head(
    atoms: Sequence[Atomic],
    value: Encoded,
    default: Atom,
    out: Encoded,
    *,
    op: str,
    name: str,
    single: bool = False,
    address: Address | None = None,
) -> HeadSpec:
    """The head of aggregate(select(...), value, default).

    Categorical `out`: copies the selected key's one-hot (exact when at most one key is selected).
    Numerical `out`: the mean of the selected keys' values, as one number. With nothing selected the
    query attends only to BOS, whose value row carries `default`. With an `address` (numerical
    addressing, `compiler.addressing`) the scores are its parabola instead of the atoms'.
    """
    mask = ""
    if address is not None:
        w_q, w_k = dict(address.w_q), dict(address.w_k)
    else:
        atoms, mask = _masked(atoms)
        w_q, w_k, _ = selector_weights(atoms, averages=not single)
    if out.is_categorical:
        if not value.is_categorical:
            raise ValueError("a categorical aggregate needs a categorical value reading")
        wanted = {value_key(v): None for v in (*value.values, default)}
        columns = [k for k, v in enumerate(out.values) if value_key(v) in wanted]
        if len(columns) != len(wanted):
            raise ValueError(
                f"{out.name}: output values do not cover the value set and the default"
            )
        out_dims = tuple(_single_dim(out.one_hot[k], out.name) for k in columns)
        position = {value_key(out.values[k]): i for i, k in enumerate(columns)}
        d_v = len(columns)
        # the build's size may be over its limit from this width alone (its layer's d_head)
        plan_limit.check_value_head(d_v, not (address.single if address else single), out_dims)
        w_v: dict[Dim, np.ndarray] = {}
        for v, one_hot in zip(value.values, value.one_hot):
            _add(w_v, one_hot, position[value_key(v)], 1.0, d_v)
        _add(w_v, ((BOS, 1.0),), position[value_key(default)], 1.0, d_v)
        w_o = np.eye(d_v)
        part = ValuePart(value, out_dims, "copy", default)
    else:
        out_dims = (_single_dim(out.number, out.name),)
        w_v: dict[Dim, np.ndarray] = {}
        _add(w_v, _number_terms(value), 0, 1.0, 1)
        _add(w_v, ((BOS, 1.0),), 0, _as_number(default, "default"), 1)
        w_o = np.ones((1, 1))
        part = ValuePart(value, out_dims, "number", default)
    if address is not None:
        domain = HeadDomain(
            (address.query,),
            (address.key,),
            (part,),
            address.single,
            (_address_atom(address),),
            Selects.NEAREST,
        )
        return HeadSpec(
            op,
            name,
            w_q,
            w_k,
            w_v,
            w_o,
            out_dims,
            address.bos_score,
            domain,
            exact_scores=address.exact,
        )
    domain = _domain(atoms, (part,), single)
    # BOS halfway between the selected keys and the best unselected one: a query that selects
    # nothing attends to BOS alone
    top, gap = selected_score(atoms)
    # matching's scores are exact sums on a coarse grid (compiler.addressing): so is the scaling
    # by sqrt(d_head) only when it is a power of 4, even where one key is selected
    matched = any(a.match is not None for a in atoms)
    return HeadSpec(
        op, name, w_q, w_k, w_v, w_o, out_dims, top - gap / 2, domain, mask, exact_scores=matched
    )


def _domain(
    atoms: Sequence[Atomic],
    parts: tuple[ValuePart, ...],
    single: bool = False,
    selects: Selects = Selects.ABOVE,
) -> HeadDomain:
    queries = tuple(dict.fromkeys(a.query for a in atoms))
    keys = tuple(dict.fromkeys(a.key for a in atoms))
    return HeadDomain(queries, keys, parts, single, tuple(atoms), selects)


def _address_atom(address: Address) -> Atomic:
    """What numerical addressing selects, `select(indices, q, ==)`, as a table over the query's
    values and the indices (the certifier checks the parabola's top against it)."""
    numbers = np.array([float(v) for v in address.query.values])
    indices = np.array([float(v) for v in address.key.values])
    return Atomic(address.query, address.key, numbers[:, None] == indices[None, :])


def selector_width_head(atoms: Sequence[Atomic], out_dim: Dim, *, op: str, name: str) -> HeadSpec:
    """Writes 1/(w+1) into out_dim, w = number of selected keys: BOS scores like a selected key and
    is the only key with a non-zero value (the `bos` dimension)."""
    atoms, mask = _masked(atoms)
    w_q, w_k, _ = selector_weights(atoms, averages=True)
    return HeadSpec(
        op,
        name,
        w_q,
        w_k,
        {BOS: np.ones(1)},
        np.ones((1, 1)),
        (out_dim,),
        bos_score=selected_score(atoms)[0],  # BOS scores like a selected key
        domain=_domain(atoms, (ValuePart(None, (out_dim,), "width"),), selects=Selects.WITH_BOS),
        mask=mask,
    )


def _same_rows(a: dict[Dim, np.ndarray], b: dict[Dim, np.ndarray]) -> bool:
    keys = set(a) | set(b)
    for k in keys:
        x, y = a.get(k), b.get(k)
        x = np.zeros_like(y) if x is None else x
        y = np.zeros_like(x) if y is None else y
        if x.shape != y.shape or not np.array_equal(x, y):
            return False
    return True


def shares_selector(a: HeadSpec, b: HeadSpec) -> bool:
    """Whether two heads score their keys alike (one head can compute both: `merge_heads`)."""
    return (
        a.bos_score == b.bos_score
        and a.mask == b.mask
        and _same_rows(a.W_Q, b.W_Q)
        and _same_rows(a.W_K, b.W_K)
    )


def merge_heads(heads: Sequence[HeadSpec]) -> HeadSpec:
    """One head for several heads with the same selector: values and outputs side by side."""
    if not heads:
        raise ValueError("merge_heads needs at least one head")
    first = heads[0]
    for h in heads[1:]:
        if not shares_selector(first, h):
            raise ValueError(f"heads {first.name!r} and {h.name!r} do not share a selector")
    d_vs = [h.W_O.shape[0] for h in heads]
    n_outs = [h.W_O.shape[1] for h in heads]
    w_v: dict[Dim, np.ndarray] = {}
    w_o = np.zeros((sum(d_vs), sum(n_outs)))
    row = col = 0
    for h, d_v, n_out in zip(heads, d_vs, n_outs):
        for dim, vec in h.W_V.items():
            w_v.setdefault(dim, np.zeros(sum(d_vs)))[row : row + d_v] += vec
        w_o[row : row + d_v, col : col + n_out] = h.W_O
        row, col = row + d_v, col + n_out
    out_dims = tuple(d for h in heads for d in h.out_dims)
    domain = None
    if all(h.domain is not None for h in heads) and first.domain is not None:
        parts = tuple(p for h in heads for p in h.domain.parts)  # type: ignore[union-attr]
        # one selector, so one conjunction; every head's atoms are kept (a repeated atom once)
        # so that the certifier holds the shared scores to each of them
        atoms: dict[tuple[Encoded, Encoded, bytes], Atomic] = {}
        for h in heads:
            for a in h.domain.atoms:  # type: ignore[union-attr]
                atoms.setdefault((a.query, a.key, np.asarray(a.table).tobytes()), a)
        domain = replace(first.domain, parts=parts, atoms=tuple(atoms.values()))
    # Every other field is the selector's, shared (`replace` keeps any field added later): equal
    # scores are exact for one head if for another (matching's: a d_head that is a power of 4).
    return replace(
        first,
        op="; ".join(h.op for h in heads),
        name=", ".join(h.name for h in heads),
        W_Q=dict(first.W_Q),
        W_K=dict(first.W_K),
        W_V=w_v,
        W_O=w_o,
        out_dims=out_dims,
        domain=domain,
        exact_scores=any(h.exact_scores for h in heads),
    )

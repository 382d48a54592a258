"""The certifier's helpers with explicit inputs: reachable state products, intended outputs, the
softmax level analysis of one query, unit groups for shared input error, labels for people."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from compiler.bounds import U, gamma
from compiler.certificate import UNDERFLOW
from compiler.reach import HeadReach, Reading
from compiler.sparse_sums import SparseRows, sparse_product

# Exact scores closer than this are one level (their keys share the weight).
TIE = 1e-3


class Groups:
    """Hidden units grouped by identical input weights, for the shared (input) error: a group's
    members see the same error, so what reaches the output is |sum of active members' W_out| times
    it. Pairs whose output rows are opposite (a step) cancel unless exactly one unit is on."""

    def __init__(self, groups: dict[bytes, list[int]], wo: np.ndarray) -> None:
        self.singles = [g[0] for g in groups.values() if len(g) == 1]
        # every unit its own group (a table's units): the shared error is one product
        self.all_singles = self.singles == list(range(wo.shape[0]))
        pairs = [g for g in groups.values() if len(g) == 2 and np.array_equal(wo[g[0]], -wo[g[1]])]
        self.first = [g[0] for g in pairs]
        self.second = [g[1] for g in pairs]
        paired = {j for g in pairs for j in g}
        self.other = [g for g in groups.values() if len(g) > 1 and g[0] not in paired]
        self.width = wo.shape[1]  # (neither wo nor |wo| kept: 0.2 GB for a 5,121-unit layer)
        # prepared once: shared_error runs once per chunk of points (|wo|'s non-zeros are wo's:
        # no dense |wo|, 0.4 GB for a 9,937-unit part over 4,969 dims)
        self.awo_singles = SparseRows(wo[self.singles]).magnitudes()
        self.awo_first = SparseRows(wo[self.first]).magnitudes()
        # each other group's output columns with a non-zero weight, and its rows there: a
        # one-hot output of thousands of values is a few columns per group (p31004 at N = 24:
        # 248 groups over 4,321 columns, 2 non-zero weights per unit; dense, the products took
        # 50 of the compile's 79 s)
        self.other_cols = [np.flatnonzero(np.any(wo[g] != 0, axis=0)) for g in self.other]
        self.other_wo = [wo[g][:, c] for g, c in zip(self.other, self.other_cols, strict=True)]
        # every other group's members in one index, where each group starts, its first member
        self.other_members = np.array([j for g in self.other for j in g], dtype=np.int64)
        self.other_starts = np.cumsum([0] + [len(g) for g in self.other[:-1]], dtype=np.int64)
        self.other_firsts = np.array([g[0] for g in self.other], dtype=np.int64)
        self.other_inf = np.array([not np.isfinite(w).all() for w in self.other_wo], dtype=bool)

    def shared_error(self, act: np.ndarray, shared: np.ndarray) -> np.ndarray:
        out = np.zeros((act.shape[0], self.width))
        if self.singles:
            s = self.singles
            out += sparse_product(act[:, s] * shared[:, s], self.awo_singles)
        if self.first:
            one_on = np.abs(act[:, self.first] - act[:, self.second]) * shared[:, self.first]
            out += sparse_product(one_on, self.awo_first)
        self.add_others(out, act, shared)
        return out

    def add_others(self, out: np.ndarray, act: np.ndarray, shared: np.ndarray) -> None:
        """Adds each other group's |sum of its active members' W_out| times its shared error to
        `out` [P, O], over the columns the group writes (elsewhere its W_out is 0: nothing of its
        error reaches them; an infinite error fails the units' own decisions anyway)."""
        if not self.other:
            return
        # a group with no member on in these points adds exact zeros (|0 @ w| times a finite
        # error; `out` holds sums of non-negative terms, never -0.0): skipped, the others added
        # in the same order (mixed fuzz 2147309: 26 points a chunk, 42% of 107 groups idle)
        on = act[:, self.other_members] != 0
        live = np.logical_or.reduceat(on.any(axis=0), self.other_starts)
        live |= ~np.isfinite(shared[:, self.other_firsts]).all(axis=0) | self.other_inf
        for g in np.flatnonzero(live).tolist():
            members, cols, w = self.other[g], self.other_cols[g], self.other_wo[g]
            out[:, cols] += np.abs(act[:, members] @ w) * shared[:, members[0]][:, None]


def unit_groups(W: np.ndarray, skip: list[int]) -> tuple[dict[bytes, list[int]], np.ndarray]:
    """The units (columns of W [D, H]) grouped by identical input weights, bit for bit, with the
    rows `skip` taken as 0 (bos and pad are 0 at real positions: the BOS/PAD gate may differ
    within a pair), in order of their first unit; and each unit's largest |weight| there.

    Compared on the rows where some unit's weight is not +0.0 (a 5,121-unit layer reads 5 of its
    5,192): columns equal there are equal on every row, and each column's largest |weight| is
    there. (A copy of W and a key of each whole column took 0.4 GB.)"""
    rows = np.flatnonzero((W.view(np.uint64) != 0).any(axis=1))
    read = W[rows[~np.isin(rows, skip)]]  # [R, H]
    groups: dict[bytes, list[int]] = {}
    for j in range(read.shape[1]):
        groups.setdefault(np.ascontiguousarray(read[:, j]).tobytes(), []).append(j)
    return groups, np.abs(read).max(axis=0, initial=0.0)


def reading_dims(reading: Reading, one: int) -> list[int]:
    """The residual dimensions a reading's values set (`one` aside: it is 1 everywhere)."""
    return sorted({d for terms in reading.terms for d, _ in terms if d != one})


class HeadPartition:
    """Union-find over a head's score columns, then its query readings, then its key readings
    (node ids in that order): each column joins the readings its non-zero W_Q / W_K rows touch,
    and readings of one side that share dimensions (views of one s-op, which `Linear` evaluates
    together) join each other. Callers may join more (the certifier's selection: each atom's
    query and key reading)."""

    def __init__(
        self,
        head: HeadReach,
        readings: tuple[Reading, ...],
        one: int,
        wq: np.ndarray,
        wk: np.ndarray,
    ) -> None:
        self.n_cols, self.nq = wq.shape[1], len(head.query)
        self.parent = list(range(self.n_cols + self.nq + len(head.key)))
        for ids, w, base in ((head.query, wq, self.n_cols), (head.key, wk, self.n_cols + self.nq)):
            owner: dict[int, int] = {}
            for i, rid in enumerate(ids):
                dims = reading_dims(readings[rid], one)
                for d in dims:
                    if d in owner:
                        self.join(base + i, owner[d])
                    owner[d] = base + i
                if dims:
                    for c in np.flatnonzero(np.abs(w[dims]).sum(axis=0) > 0):
                        self.join(int(c), base + i)

    def query_node(self, i: int) -> int:
        return self.n_cols + i

    def key_node(self, i: int) -> int:
        return self.n_cols + self.nq + i

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def join(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]]:
        """Per group, in order of its first node: its columns, and the positions in head.query
        and head.key of its readings."""
        members: dict[int, list[int]] = {}
        for node in range(len(self.parent)):
            members.setdefault(self.find(node), []).append(node)
        n_cols, nq = self.n_cols, self.nq
        return [
            (
                np.array([m for m in group if m < n_cols], dtype=np.int64),
                tuple(m - n_cols for m in group if n_cols <= m < n_cols + nq),
                tuple(m - n_cols - nq for m in group if m >= n_cols + nq),
            )
            for group in members.values()
        ]


def product(readings: tuple[Reading, ...], ids: tuple[int, ...]) -> np.ndarray:
    """Every combination of the readings' values: [P, len(ids)] coordinates."""
    axes = [
        np.arange(readings[i].size, dtype=np.float64)
        if readings[i].categorical or readings[i].vector
        else np.array(readings[i].numbers, dtype=np.float64)
        for i in ids
    ]
    if not axes:
        return np.zeros((1, 0))
    # itertools.product's order, the last axis fastest (np.meshgrid's "ij" raveled), built
    # column by column: a key of 96 readings (most of one value) is past meshgrid's 64 axes
    total = math.prod(len(a) for a in axes)
    out = np.empty((total, len(axes)), dtype=np.float64)
    if total == 0:
        return out
    inner = total
    for j, a in enumerate(axes):
        inner //= len(a)  # rows per value of axis j: the product of the later axes' sizes
        out[:, j] = np.tile(np.repeat(a, inner), total // (len(a) * inner))
    return out


def intended(part: Any, coords: np.ndarray, n_out: int, numerical: bool = False) -> np.ndarray:
    """The out-dim vector the program means at each value state [Pv, O] (a numerical reading's
    coordinate is its number; a categorical one's, the value's index)."""
    P = coords.shape[0]
    if part.kind == "copy":
        cols = np.array(part.columns, dtype=np.int64)[coords[:, 0].astype(np.int64)]
        out = np.zeros((P, n_out))
        out[np.arange(P), cols] = 1.0
        return out
    if part.kind == "number":
        if numerical:
            return coords[:, :1].astype(np.float64)
        return np.array(part.columns)[coords[:, 0].astype(np.int64)][:, None]
    return np.zeros((P, n_out))


def encode(reading: Reading, outputs: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The residual values [P, O] (on dims `out`) that write each output through `reading`."""
    column = {int(d): i for i, d in enumerate(out)}
    P = len(outputs)
    enc = np.zeros((P, len(out)))
    if reading.categorical or reading.vector:  # per value: its dimensions and their numbers
        idx = outputs.astype(np.int64)
        # only the values the points hold (a chunk of 26 points of a 4,969-value one-hot: a pass
        # per value was most of the chunk); values' rows are disjoint, so the order is free
        present = np.unique(idx)
        for v in present[(present >= 0) & (present < len(reading.terms))].tolist():
            rows = idx == v
            for d, c in reading.terms[v]:
                enc[rows, column[d]] = c
        return enc
    ((d, c),) = reading.terms[0]
    enc[:, column[d]] = outputs / c
    return enc


def saturation(
    scores: np.ndarray, errors: np.ndarray, n_special: int, single: bool = False
) -> tuple[float, tuple[float, float, float, str], float]:
    """One real query: group its keys' exact scores into levels (within TIE); every two adjacent
    levels must be UNDERFLOW apart beyond both errors, and PAD keys (1..n_special-1) below BOS (0).
    Returns eta (the selected weights' relative error, were any level on top), the weakest
    (margin - bound, margin, bound, where) and the largest bound."""
    order = np.argsort(-scores, kind="stable")
    ss, ee = scores[order], errors[order]
    level = np.cumsum(np.concatenate([[0], np.diff(ss) < -TIE]))  # per sorted key
    starts = np.flatnonzero(np.concatenate([[True], np.diff(level) != 0]))
    ends = np.concatenate([starts[1:], [len(ss)]])
    # per level (scores sorted high to low): its highest and lowest score, its largest error
    hi_of, lo_of = ss[starts], ss[ends - 1]
    err_of = np.maximum.reduceat(ee, starts)
    key_level = np.empty(len(scores), dtype=np.int64)
    key_level[order] = level
    eta = 0.0
    # BOS is always present, so only its level and the ones above it can hold the weight
    for k, (a, b) in enumerate(zip(starts[: key_level[0] + 1], ends[: key_level[0] + 1])):
        if single or b - a == 1 and k == key_level[0]:
            continue  # one position on top (proved, or BOS alone): its weight is exactly 1
        if hi_of[k] == lo_of[k] and err_of[k] == 0:
            # Exact, equal scores: softmax's x - max(x) is exactly 0 for each, exp(0) = 1, the
            # sum of ones is an exact integer: every weight is fl(1/m), one rounding.
            eta = max(eta, 2 * U)
            continue
        delta = 2 * (hi_of[k] - lo_of[k] + err_of[k])
        # exp of a non-zero argument (a few ulps), then a sum of up to N + 1 weights
        eta = max(
            eta, math.expm1(min(delta, 50.0)) * (1 + 8 * U) + 8 * U + float(gamma(n_special + 1))
        )
    worst = (math.inf, math.inf, 0.0, "")
    max_bound = 0.0
    if len(starts) > 1:  # every two adjacent levels
        m = (lo_of[:-1] - hi_of[1:]) * (1 - 4 * U) - UNDERFLOW
        b = err_of[:-1] + err_of[1:]
        max_bound = float(np.fmax.reduce(b))  # NaN ignored here; a NaN margin fails below
        k = int(np.argmin(m - b))  # the first of equally weak pairs
        worst = (float(m[k] - b[k]), float(m[k]), float(b[k]), "")
    if np.any(key_level[1:n_special] <= key_level[0]):
        worst = (-math.inf, -1.0, 0.0, ": a PAD key scores as high as BOS")
    return eta, worst, max_bound


def query_saturation(
    readings: tuple[Reading, ...],
    head: HeadReach,
    coord: np.ndarray,  # the real query's state in the head's query readings
    scores: np.ndarray,  # [n_special + keys]: BOS, PAD keys, then the real keys
    errors: np.ndarray,
    n_special: int,
) -> tuple[float, tuple[float, float, float, str], float]:
    """`saturation` for one real query, its weakest place named after the query's state."""
    row_eta, cand, row_bound = saturation(scores, errors, n_special, head.single)
    state = state_label(readings, head.query, coord)
    return row_eta, (*cand[:3], f"query {state}" + cand[3]), row_bound


def state_label(readings: tuple[Reading, ...], ids: tuple[int, ...], coord: np.ndarray) -> str:
    parts = []
    for rid, c in zip(ids, coord):
        r = readings[rid]
        if r.categorical or r.vector:
            parts.append(f"{r.name}={r.labels[int(c)]}")
        else:
            parts.append(f"{r.name}={float(c):.6g}")
    return "(" + ", ".join(parts) + ")" if parts else "(any)"


def key_label(index: int, n_special: int) -> str:
    if index == 0:
        return "BOS"
    if index < n_special:
        return f"PAD at position {index}"
    return "a real key"


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)

"""Softmax saturation of a head whose score factors into independent blocks, without enumerating
every (query state, key state) pair.

A conjunction's head is additive (`compiler.attention`): each atom has its own query/key columns,
so score(q, k) = sum_b q_b . k_b, where block b's columns read only some query readings and some key
readings, and no reading is read by two blocks. The blocks are found from the weights themselves
(which readings' dimensions each W_Q / W_K column touches). Since the query (key) states are the
full product of the query (key) readings, the real keys' scores for one query are exactly the sums
of one score per block: the set {sum_b s_b : s_b in V_b(q_b)}, where V_b(q_b) is the set of block
scores of the query's block state over the block's key states. `saturation` depends only on that
set (plus the concrete BOS and PAD keys), so checking it on the sums is the same check as the
enumeration, at a cost of sum_b n_qb * n_kb plus one check per distinct combination of blocks.

Only exact scores take this path: every block's query and key values exact (no error), on dyadic
grids, and each query's |q|.|k| below 2^24 grid steps for every key (bounded by the sum of the
blocks' maxima), so every real score is the same float in any evaluation order; anything else
returns None and the caller enumerates (or refuses) as before. BOS and PAD are concrete rows: the
real queries' scores against them are sums over blocks too (value, error terms, non-zero counts);
the BOS and PAD queries against real keys are bounded by the blocks' maxima (they win by BIG).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from compiler.bounds import SLACK, Linear, U, gamma, row_grid
from compiler.certificate import UNDERFLOW, Check
from compiler.certify_parts import (
    HeadPartition,
    key_label,
    product,
    query_saturation,
    reading_dims,
)
from compiler.certify_walk import MAX_STATES, OverBudget, Walk
from compiler.reach import HeadReach

MAX_WORK = 200_000_000  # block pairs plus (combination x keys) entries the factorized check does
MAX_KEPT = 25_000_000  # floats kept for the distinct block states of one block (200 MB)
# Above this much work (combinations x levels) a head whose real scores all lie on one coarse grid
# is proved for every query at once (`_grid_levels`, a weaker margin than the per-query check's,
# the same verdict); below, each combination is checked (the enumeration's margins exactly).
GRID_ABOVE = 1_000_000


@dataclass(frozen=True)
class Block:
    cols: np.ndarray  # the head's columns this block owns
    query: tuple[int, ...]  # positions in head.query of the readings it reads
    key: tuple[int, ...]  # positions in head.key


def _dims(walk: Walk, rid: int) -> list[int]:
    return reading_dims(walk.reach.readings[rid], walk.one)


def split_blocks(walk: Walk, head: HeadReach, wq: np.ndarray, wk: np.ndarray) -> list[Block] | None:
    """The head's columns grouped into blocks that share no reading (`HeadPartition`: columns and
    the readings their non-zero weights touch; readings of one side that share dimensions are
    joined too, as `Linear` evaluates them together). None when a reading of the head cannot be
    placed (views of one s-op that no column reads: their inconsistent states are the
    enumeration's business)."""
    blocks = []
    constant: list[int] = []  # columns that read no reading: one block of one state
    for cols, query, key in HeadPartition(head, walk.reach.readings, walk.one, wq, wk).groups():
        if not len(cols):
            if len(query) + len(key) > 1:
                return None
            continue  # a reading no column reads: it changes no score
        if not query and not key:
            constant.extend(cols.tolist())
            continue
        blocks.append(Block(cols, query, key))
    if constant:
        blocks.append(Block(np.array(sorted(constant), dtype=np.int64), (), ()))
    return blocks


@dataclass
class _Side:
    """One block's states on one side: exact values [P, c] and their grids [P] (`row_grid`)."""

    coords: np.ndarray
    value: np.ndarray
    grid: np.ndarray


def _evaluate(
    walk: Walk, w: np.ndarray, b: np.ndarray, ids: tuple[int, ...], cols: np.ndarray
) -> _Side | None:
    """A block's states on one side, or None when any is not exact (or not realisable)."""
    sp = (walk.one, walk.bos, walk.pad)
    lin = Linear(w[:, cols], b[cols], walk.reach.readings, ids, walk.err, sp)
    coords = product(walk.reach.readings, ids)
    ev = lin.at(ids, coords)
    if np.isnan(ev.value).any() or np.any(lin.rounding(ev) != 0):
        return None
    return _Side(coords, ev.value, row_grid(ev.value))  # per state; coarse grids too


def factorized_scores(
    walk: Walk,
    head: HeadReach,
    where: str,
    weights: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],  # W_Q, b_Q, W_K, b_K
    special_q: tuple[np.ndarray, np.ndarray],  # BOS, PAD queries [1 + N, d_head]
    special_k: tuple[np.ndarray, np.ndarray],
    d_head: int,  # the layer's (the weights are the head's own columns, `compiler.head_slices`)
) -> float | None:
    """`certify_attention._scores` for a head whose exact score factors into blocks: appends the
    same Check and returns eta, or returns None (nothing appended) when the head does not factor
    or a score is not exact. Raises OverBudget when even the blocks are too many to check."""
    wq, bq, wk, bk = weights
    if not (d_head > 0 and d_head & (d_head - 1) == 0 and d_head.bit_length() % 2 == 1):
        return None  # 1/sqrt(d_head) rounds: scores are not exact
    scale = math.sqrt(d_head)
    blocks = split_blocks(walk, head, wq, wk)
    if blocks is None:
        return None
    readings = walk.reach.readings
    sq, sqe = special_q
    sk, ske = special_k
    if not all(np.isfinite(a).all() for a in (sq, sqe, sk, ske)):
        return None  # an unbounded error: not for this path to judge
    dims = [d for rid in (*head.query, *head.key) for d in _dims(walk, rid)]
    if not (
        np.isfinite(walk.err.absolute[dims]).all() and np.isfinite(walk.err.relative[dims]).all()
    ):
        return None  # even a reading no column weighs could be inf, and inf x 0 is NaN
    n_s = sk.shape[0]
    sizes = [
        (
            math.prod(readings[head.query[i]].size for i in bl.query),
            math.prod(readings[head.key[i]].size for i in bl.key),
        )
        for bl in blocks
    ]
    work = sum(a * (b + n_s) + n_s * b for a, b in sizes)
    if work > MAX_WORK:
        return None
    qs: list[_Side] = []
    ks: list[_Side] = []
    for bl in blocks:
        q = _evaluate(walk, wq, bq, tuple(head.query[i] for i in bl.query), bl.cols)
        k = _evaluate(walk, wk, bk, tuple(head.key[i] for i in bl.key), bl.cols)
        if q is None or k is None:
            return None
        qs.append(q)
        ks.append(k)
    g_key = max(int(k.grid.max(initial=-60)) for k in ks)  # every real key's grid is at most this
    abs_sk, ske_pos = np.abs(sk), (np.abs(sk) + ske) > 0
    g_sk = row_grid(sk)  # [n_s]: the BOS and PAD keys' grids (all columns; coarse ones too)
    sk_exact = ske.max(axis=1) == 0

    worst = (math.inf, math.inf, 0.0, "no decision")  # (margin - bound, margin, bound, where)
    max_bound = eta = 0.0

    # BOS and PAD queries: BOS (key 0) must win alone, over PAD keys (concrete) and every real key
    # (the real keys' best score and worst error, bounded block by block).
    s_ss = sq @ sk.T / scale
    g_ss = gamma(((np.abs(sq) + sqe) > 0).astype(np.float64) @ ske_pos.T.astype(np.float64))
    e_ss = (
        np.abs(sq) @ ske.T
        + sqe @ abs_sk.T
        + sqe @ ske.T
        + g_ss * ((np.abs(sq) + sqe) @ (abs_sk + ske).T)
    ) / scale
    grid_ss = row_grid(sq)[:, None] + g_sk[None, :]  # as the enumeration's `row_grid` test
    size_ss = np.ldexp(np.abs(sq) @ abs_sk.T, np.minimum(grid_ss, 60))
    exact_ss = (sqe.max(axis=1)[:, None] == 0) & sk_exact[None, :] & (grid_ss <= 60)
    exact_ss &= size_ss < 2.0**24
    e_ss = np.where(exact_ss, 0.0, e_ss * SLACK)
    r_s = np.zeros(n_s)  # the best real key's score, per special query
    r_b = np.zeros(n_s)  # bounds of the error terms: sqe.|k|, n, (|sq| + sqe).|k|, |sq|.|k|
    r_n = np.zeros(n_s)
    r_m = np.zeros(n_s)
    r_size = np.zeros(n_s)
    for k, bl in zip(ks, blocks, strict=True):
        c = bl.cols
        best = np.full((5, n_s), -np.inf)
        hot = ((np.abs(sq[:, c]) + sqe[:, c]) > 0).astype(np.float64)
        step = max(1, MAX_STATES // n_s)
        for start in range(0, len(k.value), step):
            kv = k.value[start : start + step]
            ak = np.abs(kv)
            best = np.maximum(
                best,
                [
                    (sq[:, c] @ kv.T).max(axis=1),
                    (sqe[:, c] @ ak.T).max(axis=1),
                    (hot @ (ak > 0).T.astype(np.float64)).max(axis=1),
                    ((np.abs(sq[:, c]) + sqe[:, c]) @ ak.T).max(axis=1),
                    (np.abs(sq[:, c]) @ ak.T).max(axis=1),
                ],
            )
        r_s += best[0] / scale
        r_b += best[1]
        r_n += best[2]
        r_m += best[3]
        r_size += best[4]
    grid_r = row_grid(sq) + g_key
    exact_r = (sqe.max(axis=1) == 0) & (grid_r <= 60)
    exact_r &= np.ldexp(r_size, np.minimum(grid_r, 60)) < 2.0**24
    e_r = np.where(exact_r, 0.0, (r_b + gamma(r_n) * r_m) / scale * SLACK)
    for index in range(n_s):
        scores = np.append(s_ss[index], r_s[index])
        errors = np.append(e_ss[index], e_r[index])
        m = (scores[0] - scores[1:]) * (1 - 4 * U) - UNDERFLOW
        b = errors[0] + errors[1:]
        i = int(np.argmin(m - b))
        label = "the BOS query" if index == 0 else f"the PAD query at {index}"
        cand = (m[i] - b[i], m[i], b[i], f"{label} vs {key_label(i + 1, n_s)}")
        max_bound = max(max_bound, float(b.max(initial=0.0)))
        if cand[0] < worst[0]:
            worst = cand

    # Per block and query state: a signature of everything the check reads, so that each distinct
    # combination of blocks is checked once.
    sig_data: list[list[tuple[np.ndarray, ...]]] = []  # per block, per signature
    sig_first: list[list[int]] = []  # per block, per signature: its first state
    for q, k, bl in zip(qs, ks, blocks, strict=True):
        c = bl.cols
        seen: dict[bytes, int] = {}
        data: list[tuple[np.ndarray, ...]] = []
        first: list[int] = []
        aq = np.abs(q.value)
        chunk = max(1, MAX_STATES // max(len(k.value), n_s, 1))
        for start in range(0, len(q.value), chunk):
            qv, aqv = q.value[start : start + chunk], aq[start : start + chunk]
            s_real = qv @ k.value.T / scale  # [rows, n_kb]: exact
            size_real = (aqv @ np.abs(k.value).T).max(axis=1)  # [rows]
            s_sp = qv @ sk[:, c].T / scale  # [rows, n_s]
            a_sp = aqv @ ske[:, c].T  # |q| . key error
            mag_sp = aqv @ (abs_sk[:, c] + ske[:, c]).T
            nz_sp = (aqv > 0).astype(np.float64) @ ske_pos[:, c].T.astype(np.float64)
            size_sp = aqv @ abs_sk[:, c].T
            levels = np.sort(s_real, axis=1)
            for row in range(len(qv)):
                lv = np.unique(levels[row])
                parts = (
                    lv,
                    s_sp[row],
                    a_sp[row],
                    mag_sp[row],
                    nz_sp[row],
                    size_sp[row],
                    np.array([size_real[row], q.grid[start + row]], dtype=np.float64),
                )
                # only the levels vary in length: their count first keeps the key unambiguous
                sig = len(lv).to_bytes(8, "little") + b"".join(p.tobytes() for p in parts)
                if sig not in seen:
                    seen[sig] = len(data)
                    data.append(parts)
                    first.append(start + row)
            if len(data) * (5 * n_s + k.value.shape[0] + 2) > MAX_KEPT:
                return None  # too many distinct block states to keep: memory stays bounded
        sig_data.append(data)
        sig_first.append(first)

    n_combos = math.prod(len(d) for d in sig_data)
    n_levels = math.prod(max(len(p[0]) for p in d) for d in sig_data)
    if n_combos * (n_levels + n_s) > GRID_ABOVE:
        # Real queries whose every score is exact and on one coarse grid (matching's): no enumeration
        on_grid = _grid_levels(qs, ks, blocks, scale, special_k, d_head)
        if on_grid is not None:
            g_eta, g_worst, g_bound = on_grid
            if g_worst[0] < worst[0]:
                worst = g_worst
            max_bound = max(max_bound, g_bound)
            walk.checks.append(
                Check(where, head.name, head.op, "softmax", worst[1], worst[2], worst[3], max_bound)
            )
            return max(eta, g_eta)
    if n_combos * (n_levels + n_s) > MAX_WORK:
        raise OverBudget.softmax(
            where,
            head,
            f"{n_combos:,} distinct combinations of its score's {len(blocks)} blocks x "
            f"{n_levels:,} score levels: more than the certifier checks ({MAX_WORK:,})",
        )

    # Real queries: one check per distinct combination of block signatures, in the order of each
    # combination's first query state (the enumeration's order, so the same query is named).
    strides = [
        math.prod(readings[r].size for r in head.query[p + 1 :]) for p in range(len(head.query))
    ]
    # a reading no block reads: its first value (the enumeration's first query has it)
    first_coord = [product(readings, (r,))[0, 0] for r in head.query]
    combos = []
    for combo in itertools.product(*(range(len(d)) for d in sig_data)):
        index = [0] * len(head.query)  # value indices of the combination's first state
        coord = np.array(first_coord, dtype=np.float64)
        for q, bl, first, sig in zip(qs, blocks, sig_first, combo, strict=True):
            state = first[sig]
            # a block's states are the product of its readings in head.query order
            sub = np.unravel_index(state, [readings[head.query[i]].size for i in bl.query])
            for pos, v in zip(bl.query, sub, strict=True):
                index[pos] = int(v)
                coord[pos] = q.coords[state, bl.query.index(pos)]
        combos.append((sum(i * st for i, st in zip(index, strides)), combo, coord))
    combos.sort(key=lambda t: t[0])
    for _, combo, coord in combos:
        parts = [sig_data[b][s] for b, s in enumerate(combo)]
        real = parts[0][0]
        for p in parts[1:]:
            real = np.add.outer(real, p[0]).ravel()
        real = np.unique(real)
        s_sp = np.sum([p[1] for p in parts], axis=0)
        a_sp = np.sum([p[2] for p in parts], axis=0)
        mag_sp = np.sum([p[3] for p in parts], axis=0)
        nz_sp = np.sum([p[4] for p in parts], axis=0)
        size_sp = np.sum([p[5] for p in parts], axis=0)
        size_real = sum(float(p[6][0]) for p in parts)
        g_q = int(max(p[6][1] for p in parts))
        if g_q + g_key > 60 or size_real * 2.0 ** (g_q + g_key) >= 2.0**24:
            return None  # a real score may round: the enumeration's error bounds are needed
        grid_sp = g_q + g_sk
        exact_sp = sk_exact & (grid_sp <= 60)
        exact_sp &= np.ldexp(size_sp, np.minimum(grid_sp, 60)) < 2.0**24
        e_sp = np.where(exact_sp, 0.0, (a_sp + gamma(nz_sp) * mag_sp) / scale * SLACK)
        scores = np.concatenate([s_sp, real])
        errors = np.concatenate([e_sp, np.zeros(len(real))])
        row_eta, cand, row_bound = query_saturation(readings, head, coord, scores, errors, n_s)
        eta, max_bound = max(eta, row_eta), max(max_bound, row_bound)
        if cand[0] < worst[0]:
            worst = cand
    walk.checks.append(
        Check(where, head.name, head.op, "softmax", worst[1], worst[2], worst[3], max_bound)
    )
    return eta


def _grid_levels(
    qs: list[_Side],
    ks: list[_Side],
    blocks: list[Block],
    scale: float,
    special_k: tuple[np.ndarray, np.ndarray],
    d_head: int,
) -> tuple[float, tuple[float, float, float, str], float] | None:
    """Saturation for every real query at once, when every real score is an exact multiple of one
    grid step G at least UNDERFLOW wide (matching's scores: multiples of c/2 or coarser): any two
    distinct real levels are then G apart. BOS must score the same exact number for every query,
    on the grid (a level of its own or one it shares exactly) or halfway between (G/2 from any real
    level, which needs G/2 >= UNDERFLOW too), and every PAD key must stay UNDERFLOW below BOS for
    every query (bounded block by block by its best score and largest error). Equal exact scores
    give equal weights: eta is fl(1/m)'s rounding. Returns (eta, weakest, largest bound), or None
    where these do not hold (the caller checks query by query)."""
    sk, ske = special_k
    n_s = sk.shape[0]
    g = max(
        int(row_grid(q.value).max(initial=-60)) + int(row_grid(k.value).max(initial=-60))
        for q, k in zip(qs, ks, strict=True)
    )
    size = sum(
        float((np.abs(q.value).max(axis=0, initial=0.0) @ np.abs(k.value).max(axis=0, initial=0.0)))
        for q, k in zip(qs, ks, strict=True)
    )
    if g > 60 or np.ldexp(size, g) >= 2.0**24:
        return None  # a real score may round
    step = 2.0**-g / scale  # every real score is a multiple of this
    if step * (1 - 4 * U) < UNDERFLOW:
        return None
    # BOS and PAD keys against every real query: sums over blocks of per-block extremes
    bos = bos_size = 0.0
    g_bos = -60
    pad_best = np.zeros(n_s - 1)
    pad_err = np.zeros(n_s - 1)
    pad_size = np.zeros(n_s - 1)
    for q, bl in zip(qs, blocks, strict=True):
        c = bl.cols
        to_bos = q.value @ sk[0, c] / scale  # [states]
        if ske[0, c].any() or (len(to_bos) and to_bos.min() != to_bos.max()):
            return None  # BOS's score varies or errs: the level-by-level check decides
        bos += float(to_bos[0]) if len(to_bos) else 0.0
        aq = np.abs(q.value).max(axis=0, initial=0.0)  # [c]
        bos_size += float(aq @ np.abs(sk[0, c]))
        g_bos = max(g_bos, int(row_grid(q.value).max(initial=-60)) + int(row_grid(sk[:1, c])[0]))
        pads = q.value @ sk[1:, c].T / scale  # [states, N]
        pad_best += pads.max(axis=0, initial=-np.inf) if len(pads) else 0.0
        pad_err += (np.abs(q.value) @ ske[1:, c].T).max(axis=0, initial=0.0) / scale
        pad_size += aq @ (np.abs(sk[1:, c]) + ske[1:, c]).T / scale
    if g_bos > 60 or np.ldexp(bos_size, g_bos) >= 2.0**24:
        return None  # BOS's score may round
    if len(qs) and not np.isfinite(pad_best).all():
        return None
    # a PAD key's score rounds (products of |q| and |k| up to pad_size, d_head of them at most),
    # unless it is exact as the enumeration judges it: exact keys, |q|.|k| below 2^24 grid steps
    g_pad = max(int(row_grid(q.value).max(initial=-60)) for q in qs) + row_grid(sk[1:])
    exact_pad = (ske[1:].max(axis=1, initial=0.0) == 0) & (g_pad <= 60)
    exact_pad &= np.ldexp(pad_size * scale, np.minimum(g_pad, 60)) < 2.0**24
    # (the blocks hold every column of the head: d_head of them, counting the zero columns past
    # its own width, whose products are exact zeros: an over-count, as the padded head counted)
    rounding = gamma(d_head + 1) * pad_size
    pad_err = np.where(exact_pad, 0.0, pad_err + rounding)
    offset = math.remainder(bos, step)
    if offset == 0.0:
        bos_room = step  # on the grid: equal to a real level, or a whole step away
    elif abs(abs(offset) - step / 2) == 0.0:
        bos_room = step / 2
    else:
        return None
    margin = min(step, bos_room) * (1 - 4 * U) - UNDERFLOW
    pad_bound = pad_err * SLACK
    pad_margin = (bos - pad_best) * (1 - 4 * U) - UNDERFLOW
    if n_s > 1:
        i = int(np.argmin(pad_margin - pad_bound))
        pad = (float(pad_margin[i] - pad_bound[i]), float(pad_margin[i]), float(pad_bound[i]))
    else:
        pad = (math.inf, math.inf, 0.0)
    if pad[0] < margin:
        worst = (*pad, f"every query (exact scores) vs PAD at position {i + 1}")
    else:
        worst = (margin, margin, 0.0, f"every query (exact scores on a grid of {step:g})")
    return 2 * U, worst, float(pad_bound.max(initial=0.0))

"""The certifier's attention checks: softmax saturation for every reachable query of every head, and
the error of what each head writes (its value path compared with the copy the program means).

For every reachable query, any two keys' exact scores are either equal (one level) or at least
UNDERFLOW apart after both scores' errors, so softmax gives the lower key weight exactly 0; PAD keys
sit below BOS, which is always present; the BOS and PAD queries attend to BOS alone. The selected
keys' weights err by a bounded factor (eta), which bounds the error of the mean they write.

Each head is read at its own width (`compiler.head_slices`: the layer pads every head to its
d_head; the columns past a head's own are exact zeros), its W_V and W_O as stored (float32).
"""

from __future__ import annotations

import math

import numpy as np

from compiler.bounds import (
    SLACK,
    Linear,
    ReadError,
    U,
    dyadic_exponent,
    f64_error,
    gamma,
    overflowed,
    special_linear,
)
from compiler.certificate import UNDERFLOW, Check
from compiler.certify_factor import factorized_scores
from compiler.certify_parts import intended as intended_out
from compiler.certify_parts import key_label, product, query_saturation
from compiler.certify_scores import KeySide, score_bounds
from compiler.certify_select import check_selection
from compiler.certify_specials import exact_additions, exact_products
from compiler.certify_walk import MAX_STATES, OverBudget, Specials, Walk
from compiler.float64_weights import stored
from compiler.head_slices import head_slices, own_width
from compiler.reach import HeadReach, ValueReach
from compiler.sparse_sums import concrete_products

MAX_PAIRS = 200_000_000  # query x key pairs of one head the certifier enumerates at all
# Above this many pairs a head is first tried block by block (certify_factor), which proves the
# same (its bounds can differ in the last bit: sums in another order, covered by SLACK) in a
# fraction of the time (dyck2 at N = 64: 6 s instead of 37 s); below it the enumeration checks
# every pair, which is cheap there (tests lower it to compare the two).
FACTOR_ABOVE = 1_000_000


def check_attention(walk: Walk, layer: int) -> None:
    """Softmax saturation of every head of `layer`, and the error of what the heads write."""
    p = f"blocks.{layer}.attn."
    heads = [h for h in walk.reach.heads if h.layer == layer]
    # (read through the float64 view: this layer's block is entered, and the arrays the previous
    # block converted are dropped, 0.4 GB of a 5,121-unit MLP's, before this layer's heads)
    b_o = walk.w[p + "b_O"]
    w_o = stored(walk.w, p + "W_O")  # [H, d_head, d_model], float32: never converted whole
    d_head = int(w_o.shape[1])  # the layer's: its scores are divided by sqrt(d_head)
    out_terms = np.count_nonzero(w_o.reshape(-1, w_o.shape[-1]), axis=0) + 1  # [d_model]
    new_x = walk.special.x.copy()
    new_e = walk.special.e.copy()
    # what BOS and PAD queries read (BOS's value, weight exactly 1), every head's: is their sum
    # exact? (per head at its own value width: the rows past it are zeros in W_O)
    bos_z: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # head -> [vo] value, error
    bos_out = np.zeros(w_o.shape[-1])  # [d_model]: what they add
    written = np.zeros(len(walk.residual), dtype=bool)
    updates: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]] = []
    for head in heads:  # before any head of the layer claims what it writes
        values = (v.reading for v in head.values if v.reading is not None)
        walk.check_read((*head.query, *head.key, *values), f"layer {layer} head {head.name!r}")
    for head in heads:
        h = head.head
        own = head_slices(walk.w, layer, h)
        wq, bq, wk, bk = own.qk
        wv, bv, wo_h = own.wv, own.bv, own.wo
        where = f"layer {layer} attn"
        sp = (walk.one, walk.bos, walk.pad)
        q_lin = Linear(wq, bq, walk.reach.readings, head.query, walk.err, sp)
        k_lin = Linear(wk, bk, walk.reach.readings, head.key, walk.err, sp)
        n_q = math.prod(walk.reach.readings[r].size for r in head.query)
        n_k = math.prod(walk.reach.readings[r].size for r in head.key)
        # BOS and PAD keys/queries: concrete (dense or sparse sums as for the padded matrices)
        entries = int(wq.shape[0]) * d_head
        sq, sq_err = special_linear(walk.special.x, walk.special.e, wq, bq, entries)
        sk, sk_err = special_linear(walk.special.x, walk.special.e, wk, bk, entries)
        pairs = n_q * (n_k + walk.max_len + 1)
        eta: float | None = None
        if pairs > FACTOR_ABOVE:
            # a conjunction's exact additive score: checked block by block (certify_factor)
            eta = factorized_scores(walk, head, where, own.qk, (sq, sq_err), (sk, sk_err), d_head)
        if eta is None:
            if pairs > MAX_PAIRS:
                raise OverBudget.softmax(
                    where,
                    head,
                    f"{n_q:,} query states x {n_k:,} key states: more (query, key) pairs than "
                    f"the certifier checks ({MAX_PAIRS:,}), and its score does not factor into "
                    "exact blocks of fewer",
                )
            q_coords = product(walk.reach.readings, head.query)
            k_coords = product(walk.reach.readings, head.key)
            q = q_lin.at(head.query, q_coords)
            k = k_lin.at(head.key, k_coords)
            q_err, k_err = q_lin.rounding(q), k_lin.rounding(k)
            # A product of two views of one token lists states no token realises (value NaN):
            # they never occur, and a NaN score would silently pass every comparison.
            q_real = ~np.isnan(q.value).any(axis=1)
            k_real = ~np.isnan(k.value).any(axis=1)
            eta = _scores(
                walk,
                head,
                where,
                (q.value[q_real], q_err[q_real]),
                (k.value[k_real], k_err[k_real]),
                (sq, sq_err),
                (sk, sk_err),
                q_coords[q_real],
                d_head,
            )
        # which keys win: the select's (the scores' exact values against the reach's atoms)
        walk.checks.append(check_selection(walk, head, where, own.qk, sk[0], d_head))
        # values: per part (its own value columns), compare with the intended copy
        entries = int(wv.shape[0]) * d_head
        sv, sv_err = special_linear(walk.special.x, walk.special.e, wv, bv, entries)
        for part in head.values:
            out = np.array(part.out, dtype=np.int64)
            walk.claim(out, f"head {head.name!r} (layer {layer}, head {h})")
            weights = (wv, bv, wo_h)
            updates.append(
                _value_part(walk, head, part, out, weights, (sv, sv_err), eta, out_terms)
            )
            written[out] = True
        # BOS and PAD queries attend to BOS alone: they add BOS's value through W_O exactly
        # (its own rows of W_O, read from their non-zeros)
        entries = d_head * int(wo_h.shape[1])
        bos_ov_full, bos_terms, bos_carried = concrete_products(
            sv[0], sv_err[0], wo_h, entries=entries
        )
        bos_ov_err = overflowed(bos_carried + gamma(out_terms) * bos_terms, bos_terms)
        new_x += bos_ov_full
        new_e += bos_ov_err
        bos_out += bos_ov_full
        bos_z[h] = sv[0], sv_err[0]
        del own, wq, bq, wk, bk, wv, bv, wo_h, q_lin, k_lin  # (the next head's are read afresh)
    # b_O is added at every position, in a layer of no heads too (the runtime adds it there)
    if np.any(b_o != 0):
        d = int(np.flatnonzero(b_o != 0)[0])
        raise ReadError(
            f"layer {layer} attn has a non-zero b_O at residual dimension {walk.residual[d]!r}"
        )
    for out, abs_err, rel, mag, grid in updates:
        walk.err.grid[out] = grid
        a_old = walk.err.absolute[out]
        # resid + attn_out rounds only where resid was not an exact 0 already
        carried = (a_old > 0) | (walk.err.relative[out] > 0)
        walk.err.absolute[out] = a_old + abs_err + np.where(carried, U * mag, 0.0)
        walk.err.relative[out] = walk.err.relative[out] + rel + np.where(carried, U, 0.0)
        walk.err.magnitude[out] = mag
    walk.check_untouched(w_o.reshape(-1, w_o.shape[-1]), written, f"layer {layer} attn")
    _check_head_outputs(walk, layer, heads, w_o)  # and each head only its own
    _check_unlisted_heads(walk, layer, heads)
    # resid + attn_out rounds only where the heads' output at BOS/PAD can be non-zero: adding an
    # exact 0.0 is exact (the `one` and `bos` dimensions stay exact, which matching's BOS key needs),
    # and so are an exact output and its exact sum (compiler.certify_specials)
    exact_out = _exact_bos_output(w_o, bos_z)
    exact_add = exact_additions(walk.special.x, walk.special.e, bos_out, exact_out)
    new_e = np.where(exact_out, walk.special.e, new_e)
    touched = ((new_x != walk.special.x) | (new_e != walk.special.e)) & ~exact_add
    walk.special = Specials(new_x, (new_e + U * np.abs(new_x) * touched) * SLACK)
    walk.check_range(f"layer {layer} attn")


def _value_part(
    walk: Walk,
    head: HeadReach,
    part: ValueReach,
    out: np.ndarray,
    weights: tuple[np.ndarray, np.ndarray, np.ndarray],  # the head's W_V, b_V, W_O (stored)
    special_v: tuple[np.ndarray, np.ndarray],  # BOS and PAD values and their errors
    eta: float,
    out_terms: np.ndarray,  # [d_model]: W_O's products per column, +1
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """One value part of `head` (its own value columns) compared with the intended copy: the
    (columns, absolute error, relative error, magnitude, grid) it adds to what it writes. (A
    function of its own: its [values, columns] arrays, 0.4 GB for a 2,561-value copy, go when
    it returns, before the next part and the layer's checks.)"""
    wv, bv, w_o_h = weights
    sv, sv_err = special_v
    sp = (walk.one, walk.bos, walk.pad)
    if part.reading is None:
        coords = np.zeros((1, 0))
        ids: tuple[int, ...] = ()
    else:
        coords = product(walk.reach.readings, (part.reading,))
        ids = (part.reading,)
    wo_out = np.asarray(w_o_h[:, out], dtype=np.float64)  # [vo, O]
    cols = np.flatnonzero(np.abs(wo_out).sum(axis=1) > 0)
    v_lin = Linear(wv[:, cols], bv[cols], walk.reach.readings, ids, walk.err, sp)  # (float64)
    evaluated = v_lin.at(ids, coords)
    v_err = v_lin.rounding(evaluated)  # [Pv, cols]
    # (its copy of W_V's columns and its tables, and the values' error and magnitude: read)
    v = evaluated.value  # [Pv, cols]
    del v_lin, evaluated
    wo_part = wo_out[cols]  # [cols, O]
    ov = v @ wo_part  # [Pv, O]
    numerical = part.reading is not None and not walk.reach.readings[part.reading].categorical
    intended = intended_out(part, coords, len(out), numerical)
    # Every difference between the built copy and the intended one counts (none is
    # float64 noise to ignore): ov is float64's evaluation of the exact product, off by
    # f64 below (0 on the exact path further down, where float64 is exact too).
    dev = np.abs(ov - intended).max(axis=0, initial=0.0)
    bos_v, bos_verr = sv[0][cols], sv_err[0][cols]
    bos_ov = bos_v @ wo_part
    bos_dev = np.abs(bos_ov - np.array(part.default))
    dev = np.maximum(dev, bos_dev)
    vmax = np.maximum(np.abs(v).max(axis=0), np.abs(bos_v))  # [d_head]
    verr = np.maximum(v_err.max(axis=0), bos_verr)  # [d_head]
    # terms of the weighted sum that can be non-zero: BOS alone when real keys carry 0
    real_zero = not np.any(v) and not np.any(v_err)
    n_keys = 1 if real_zero else walk.max_len + 1
    dz = eta * vmax + (1 + eta) * verr + gamma(n_keys) * (1 + eta) * (vmax + verr)
    wo = np.abs(wo_part)  # [cols, O]
    same_sign = _same_sign(np.concatenate([v, bos_v[None]]), wo_part)  # [O]
    g_out = gamma(out_terms[out])
    rel = np.where(same_sign, (eta + gamma(n_keys)) * (1 + eta) + g_out * 2, 0.0)
    z_abs = np.where(
        same_sign,
        (1 + eta) * (1 + gamma(n_keys)) * (verr @ wo),
        dz @ wo,
    )
    # float64's error in ov: relative where the terms share a sign (as rel is: a mean
    # of values each that close is that close), else absolute (`f64_error`)
    f64_rel, f64_abs = f64_error(vmax[None], verr[None], wo, relative=same_sign)
    rel = rel + f64_rel[0]
    abs_err = (z_abs + g_out * ((vmax + verr) @ wo) * (~same_sign)) * 1.0 + dev
    abs_err = abs_err + f64_abs[0]
    abs_err = overflowed(abs_err, (vmax + verr) @ wo)
    if head.single and not np.any(verr):
        # one key (or BOS) with weight exactly 1: z is its value exactly; z @ W_O on
        # one dyadic grid within 2^24 steps is exact too
        values = np.concatenate([v, bos_v[None]])
        g = int(dyadic_exponent(values).max(initial=0) + dyadic_exponent(wo_part).max(initial=0))
        size = float((np.abs(values) @ wo).max(initial=0.0))
        if g <= 60 and size * 2.0**g < 2.0**24:
            abs_err, rel = dev.copy(), np.zeros_like(rel)
    mag = np.maximum(np.abs(intended).max(axis=0), np.abs(np.array(part.default)))
    grid = 0 if part.kind == "copy" else 99  # a copy is one-hot; a mean is not dyadic
    return out, abs_err * SLACK, rel * SLACK, mag, grid


def _exact_bos_output(
    w_o: np.ndarray, bos_z: dict[int, tuple[np.ndarray, np.ndarray]]
) -> np.ndarray:
    """[1, d_model]: where what the BOS and PAD queries add (every head's BOS value, `bos_z`,
    through W_O [H, d_head, d_model] as stored) is exact in every order. Each head's rows past its
    own value width are zeros, as is its BOS value there: they are left out (no non-zero product
    is), while the dense or sparse sums are chosen by the padded matrix's size, as before."""
    h_count, d_head, d_model = w_o.shape
    rows: list[np.ndarray] = []
    values: list[np.ndarray] = []
    errors: list[np.ndarray] = []
    for h in range(h_count):
        z, z_err = bos_z.get(h, (None, None))
        if z is None or z_err is None:  # a head the reach does not list: its BOS value is 0
            width = own_width((w_o[h] != 0).any(axis=1))
            z, z_err = np.zeros(width), np.zeros(width)
        rows.append(w_o[h, : len(z)])
        values.append(z)
        errors.append(z_err)
    stacked = np.concatenate(rows) if rows else np.zeros((0, d_model), dtype=w_o.dtype)
    z_all = np.concatenate(values) if values else np.zeros(0)
    e_all = np.concatenate(errors) if errors else np.zeros(0)
    entries = h_count * d_head * d_model
    return exact_products(z_all[None], e_all[None], stacked, np.zeros(d_model), entries)


def _check_head_outputs(walk: Walk, layer: int, heads: list[HeadReach], w_o: np.ndarray) -> None:
    """Each head's W_O writes only its own parts' dimensions, and a head the reach does not list
    writes nothing. A head's value check reads only the W_O entries on its own parts' columns, and
    the layer's check of what it writes only the union of every head's: head 1's W_O on head 0's
    column (or a head the reach does not list, writing there) went unread, and the file decoded
    wrongly under a certificate that held."""
    own: dict[int, set[int]] = {}
    for head in heads:
        own.setdefault(head.head, set()).update(d for part in head.values for d in part.out)
    for h in range(w_o.shape[0]):
        touched = np.flatnonzero(np.abs(w_o[h]).max(axis=0, initial=0.0) > 0)
        stray = [int(d) for d in touched if int(d) not in own.get(h, set())]
        if stray:
            named = next((head.name for head in heads if head.head == h), None)
            who = (
                f"head {h} ({named!r})"
                if named is not None
                else f"head {h}, which the reach does not list,"
            )
            raise ReadError(
                f"layer {layer} attn {who} writes residual dimension "
                f"{walk.residual[stray[0]]!r}, which the reach does not say it writes"
            )


def _check_unlisted_heads(walk: Walk, layer: int, heads: list[HeadReach]) -> None:
    """A head the reach does not list is all zeros: its scores are checked nowhere, and one that
    overflows float32 makes its softmax NaN, which its zero W_O passes on (NaN·0 is NaN)."""
    p = f"blocks.{layer}.attn."
    listed = {head.head for head in heads}
    for h in range(stored(walk.w, p + "W_Q").shape[0]):
        if h in listed:
            continue
        for name in ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V"):
            if np.any(stored(walk.w, p + name)[h] != 0):
                raise ReadError(
                    f"layer {layer} attn head {h}, which the reach does not list, has a non-zero "
                    f"{name}"
                )


def _scores(
    walk: Walk,
    head: HeadReach,
    where: str,
    queries: tuple[np.ndarray, np.ndarray],  # real query states: value, error [Pq, d_head]
    keys: tuple[np.ndarray, np.ndarray],  # real key states
    special_q: tuple[np.ndarray, np.ndarray],  # BOS, PAD queries [1 + N, d_head]
    special_k: tuple[np.ndarray, np.ndarray],
    q_coords: np.ndarray,
    d_head: int,  # the layer's (the states are at the head's own width)
) -> float:
    """Check softmax saturation for every query; return eta, the relative error bound of the
    selected keys' weights."""
    all_k = np.vstack([special_k[0], keys[0]])  # row 0: BOS, rows 1..N: PAD, then real keys
    all_ke = np.vstack([special_k[1], keys[1]])
    all_q = np.vstack([special_q[0], queries[0]])
    all_qe = np.vstack([special_q[1], queries[1]])
    n_special = special_k[0].shape[0]
    scale = math.sqrt(d_head)
    scale_exact = d_head > 0 and d_head & (d_head - 1) == 0 and d_head.bit_length() % 2 == 1
    worst = (math.inf, math.inf, 0.0, "no decision")  # (margin - bound, margin, bound, where)
    max_bound = eta = 0.0
    chunk = max(1, MAX_STATES // max(all_k.shape[0], 1))
    keys_side = KeySide(all_k, all_ke)  # the same for every chunk of queries: computed once
    for start in range(0, all_q.shape[0], chunk):
        qs, qe = all_q[start : start + chunk], all_qe[start : start + chunk]
        s, err = score_bounds(qs, qe, keys_side, scale, scale_exact)
        for row in range(s.shape[0]):
            index = start + row
            scores, errors = s[row], err[row]
            if index < n_special:  # BOS and PAD queries: BOS (key 0) must win alone
                m = (scores[0] - scores[1:]) * (1 - 4 * U) - UNDERFLOW
                b = errors[0] + errors[1:]
                i = int(np.argmin(m - b))
                label = "the BOS query" if index == 0 else f"the PAD query at {index}"
                cand = (m[i] - b[i], m[i], b[i], f"{label} vs {key_label(i + 1, n_special)}")
                max_bound = max(max_bound, float(b.max(initial=0.0)))
            else:
                coord = q_coords[index - n_special]
                row_eta, cand, row_bound = query_saturation(
                    walk.reach.readings, head, coord, scores, errors, n_special
                )
                eta, max_bound = max(eta, row_eta), max(max_bound, row_bound)
            if cand[0] < worst[0]:
                worst = cand
    walk.checks.append(
        Check(where, head.name, head.op, "softmax", worst[1], worst[2], worst[3], max_bound)
    )
    return eta


def _same_sign(values: np.ndarray, w_o: np.ndarray) -> np.ndarray:
    """For each output column o, whether every term values[p, c] * w_o[c, o] has one sign (or is
    0), without the [P, cols, O] tensor of terms (27 GB for a 1,539-value one-hot). A NaN value
    counts as both signs where its weight is not 0."""
    v_pos, v_neg = (~(values <= 0)).any(axis=0), (~(values >= 0)).any(axis=0)  # [cols]
    w_pos, w_neg = ~(w_o <= 0), ~(w_o >= 0)  # [cols, O]
    has_pos = (v_pos @ w_pos) | (v_neg @ w_neg)  # [O]: some term > 0
    has_neg = (v_pos @ w_neg) | (v_neg @ w_pos)
    return ~has_pos | ~has_neg

"""The certifier's MLP checks: every ReLU decision at every reachable point of every MLP part.

At every reachable point every hidden unit's exact pre-activation is farther from 0 than its error,
so each ReLU is on or off whatever the rounding; its output error then propagates linearly. Units
with identical input weights (a step's pair) share their input error, which cancels where both are
on; a unit whose dot product is one addition landing in [2^23, 2^24) is computed exactly (the
integer band). What a part writes is compared with the program's output at each point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from compiler import certify_memo
from compiler.bounds import (
    SLACK,
    Evaluated,
    Linear,
    ReadError,
    U,
    dyadic_exponent,
    exact_sums,
    gamma,
    overflowed,
    special_linear,
)
from compiler.certificate import Check
from compiler.certify_live import live_terms, on_entries, ones
from compiler.certify_parts import Groups, encode, state_label, unit_groups
from compiler.certify_specials import exact_additions
from compiler.certify_walk import MAX_STATES, Specials, Walk
from compiler.float64_weights import stored
from compiler.reach import MLPReach, Reading
from compiler.sparse_sums import SparseRows, Spread, concrete_products, sparse_product

MLP_CHUNK = 2**18  # points x units per chunk


@dataclass(frozen=True)
class _OutWeights:
    """A part's W_out [H, O], prepared once for all its chunks."""

    signed: SparseRows
    abs: SparseRows
    grid: np.ndarray  # [O]: the dyadic grid of W_out's columns and b_out
    pattern: SparseRows  # 1 where W_out is non-zero: a product with it counts live terms


def check_mlp(walk: Walk, layer: int) -> None:
    """Every ReLU decision of `layer`'s MLP parts, and the error of what they write."""
    p = f"blocks.{layer}.mlp."
    # W_in and W_out as stored (float32): each part converts its own units (the checks of the
    # whole layer read their non-zeros, converted as read: compiler.sparse_sums)
    w_in, w_out = stored(walk.w, p + "W_in"), stored(walk.w, p + "W_out")
    b_in, b_out = walk.w[p + "b_in"], walk.w[p + "b_out"]
    written = np.zeros(len(walk.residual), dtype=bool)
    updates = []
    out_terms = np.count_nonzero(w_out, axis=0) + 1  # [d_model]
    checked = np.zeros(w_out.shape[0], dtype=bool)  # the units of parts with reachable points
    for part in (m for m in walk.reach.mlps if m.layer == layer):  # before any part claims
        walk.check_read(part.readings, f"layer {layer} MLP {part.name!r}")
    for part in (m for m in walk.reach.mlps if m.layer == layer):
        a, b = part.hidden
        lin = Linear(
            w_in[:, a:b],
            b_in[a:b],
            walk.reach.readings,
            part.readings,
            walk.err,
            (walk.one, walk.bos, walk.pad),
        )
        out_reading = walk.reach.readings[part.out]
        out = np.array(sorted({d for t in out_reading.terms for d, _ in t}), dtype=np.int64)
        wo = np.asarray(w_out[a:b][:, out], dtype=np.float64)  # [H, O]
        # (its non-zero columns, not a copy of the part's rows less `out`)
        written_cols = np.flatnonzero((w_out[a:b] != 0).any(axis=0))
        if not np.isin(written_cols, out).all():
            raise ReadError(f"MLP {part.name!r} writes outside its output's dimensions")
        coords = np.array(part.points, dtype=np.float64)
        if coords.size == 0:
            continue
        checked[a:b] = True
        walk.claim(out, f"MLP {part.name!r} (layer {layer}, units {a}-{b - 1})")
        update = _mlp_part(walk, layer, part, lin, coords, wo, out, out_reading, out_terms, b_out)
        updates.append(update)
        written[out] = True
    _check_unread_units(walk, layer, (w_in, b_in, w_out), checked)
    for out, abs_err, mag, grid in updates:
        walk.err.grid[out] = grid
        carried = (walk.err.absolute[out] > 0) | (walk.err.relative[out] > 0)
        walk.err.absolute[out] = walk.err.absolute[out] + abs_err + np.where(carried, U * mag, 0)
        walk.err.relative[out] = walk.err.relative[out] + np.where(carried, U, 0.0)
        walk.err.magnitude[out] = mag
    walk.check_untouched(w_out, written, f"layer {layer} mlp", b_out)
    # BOS/PAD: no decisions (ReLU is 1-Lipschitz), errors propagate
    pre, pre_err = special_linear(walk.special.x, walk.special.e, w_in, b_in)
    h = np.maximum(pre, 0.0)
    off = pre + pre_err < 0  # surely off: exactly 0, no error
    h_err = np.where(off, 0.0, pre_err)
    # (from W_out's non-zeros: |W_out| of a 5,121-unit layer was a 200 MB copy; h >= 0)
    out_val, terms, carried = concrete_products(h, h_err, w_out)
    out_val += b_out
    terms += np.abs(b_out)
    n = out_terms
    out_err = overflowed(carried + gamma(n) * terms, terms)
    out_err = np.where(
        (h_err.max(axis=1, initial=0) == 0)[:, None] & (h.max(axis=1, initial=0) == 0)[:, None],
        np.abs(b_out) * 0,
        out_err,
    )
    # exact products on one grid, and their exact sum with the residual (compiler.certify_specials)
    exact_out = exact_sums(h, w_out, b_out, carried, terms)
    out_err = np.where(exact_out, 0.0, out_err)
    x = walk.special.x + out_val
    # resid + mlp_out rounds only where the output can be non-zero (every unit surely off and
    # b_out 0: an exact 0.0, whose sum is exact)
    touched = ((out_val != 0) | (out_err != 0)) & ~exact_additions(
        walk.special.x, walk.special.e, out_val, exact_out
    )
    walk.special = Specials(x, (walk.special.e + out_err + U * np.abs(x) * touched) * SLACK)
    walk.check_range(f"layer {layer} mlp")


def _check_unread_units(
    walk: Walk, layer: int, weights: tuple[np.ndarray, np.ndarray, np.ndarray], checked: np.ndarray
) -> None:
    """A unit no checked part holds (outside every part's units, or in a part with no reachable
    point) is all zeros: its ReLU is decided nowhere and its output counted in no part's error,
    and the layer's check of what it writes sees only that some part writes the dimension (a unit
    added to a file, writing an MLP part's output column, re-checked as proved and decoded
    wrongly); and a pre-activation that overflows float32 is NaN through a zero W_out row."""
    w_in, b_in, w_out = weights
    # only the unchecked units' rows and columns are read (usually none: W_in and W_out of a
    # 15,000-unit layer are 0.3 GB each)
    units = np.flatnonzero(~checked)
    unread = units[np.abs(w_out[units]).max(axis=1, initial=0.0) > 0]
    if unread.size:
        k = int(unread[0])
        d = int(np.flatnonzero(w_out[k])[0])
        raise ReadError(
            f"layer {layer} mlp unit {k} writes residual dimension {walk.residual[d]!r}, but "
            "belongs to no MLP part the reach gives a reachable point"
        )
    idle = units[(np.abs(w_in[:, units]).max(axis=0, initial=0.0) > 0) | (b_in[units] != 0)]
    if idle.size:
        raise ReadError(
            f"layer {layer} mlp unit {int(idle[0])} belongs to no MLP part the reach gives a "
            "reachable point, but its W_in or b_in is not zero"
        )


def _mlp_part(
    walk: Walk,
    layer: int,
    part: MLPReach,
    lin: Linear,
    coords: np.ndarray,
    wo: np.ndarray,
    out: np.ndarray,
    out_reading: Reading,
    out_terms: np.ndarray,
    b_out: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Check one MLP part over all its points (in chunks: [points, units] arrays)."""
    if lin.W.shape[1] == 0:  # no hidden unit: the part writes its bias, nothing is decided
        intended = encode(out_reading, np.array(part.outputs), out)
        dev = np.abs(b_out[out][None, :] - intended).max(axis=0, initial=0.0)
        walk.checks.append(
            Check(
                f"layer {layer} mlp",
                part.name,
                part.op,
                "relu",
                math.inf,
                0.0,
                "no hidden unit",
                0.0,
            )
        )
        return (
            out,
            dev,
            np.abs(intended).max(axis=0, initial=0.0),
            np.zeros(len(out), dtype=np.int64),
        )
    # (the same numbers for the same inputs: kept per compile, compiler.certify_memo)
    worst, max_total, abs_err, mag, grid = certify_memo.checked(
        lambda: certify_memo.part_key(lin, part, coords, wo, out, out_reading, out_terms, b_out),
        lambda: _part_numbers(
            lin, part, coords, wo, out, out_reading, out_terms, b_out, [walk.bos, walk.pad]
        ),
    )
    state = state_label(walk.reach.readings, part.readings, coords[worst[3]])
    if part.continuous:  # no decision: what it proved is the output error, carried on
        state = f"no decision (continuous: each unit's error carried to its output), {state}"
    walk.checks.append(
        Check(
            f"layer {layer} mlp",
            part.name,
            part.op,
            "relu",
            float(worst[1]),
            float(worst[2]),
            f"unit {part.hidden[0] + worst[4]} at {state}",
            max_total,
        )
    )
    return out, abs_err, mag, grid


def _part_numbers(
    lin: Linear,
    part: MLPReach,
    coords: np.ndarray,
    wo: np.ndarray,
    out: np.ndarray,
    out_reading: Reading,
    out_terms: np.ndarray,
    b_out: np.ndarray,
    skip: list[int],
) -> tuple[tuple[float, float, float, int, int], float, np.ndarray, np.ndarray, np.ndarray]:
    """`_mlp_part`'s check over all the part's points, chunk by chunk: its worst decision (ratio,
    distance, total, point, unit), largest input error, and the error, magnitude and grid of
    what it writes. `skip`: the BOS and PAD rows (exact zeros at real positions)."""
    # Units with identical input weights (a step's pair) share their input error exactly.
    groups, big = unit_groups(lin.W, skip)  # big: each unit's largest |weight|
    shape = Groups(groups, wo)
    outputs = np.array(part.outputs)
    # chunks of a few MB: the [points, units] temporaries stay in cache (a few times faster than
    # MAX_STATES-sized ones); every result is per point or a max, so chunking changes nothing
    chunk = max(1, min(MAX_STATES, MLP_CHUNK) // max(lin.W.shape[1], 1))
    worst = (math.inf, 0.0, 0.0, 0, 0)  # (ratio, distance, total, point, unit)
    max_total = 0.0
    abs_err = np.zeros(len(out))
    mag = np.zeros(len(out))
    grid = np.zeros(len(out), dtype=np.int64)
    signed = SparseRows(wo)
    # the grid of W_out's columns from its non-zeros (a zero's exponent is 0, the least there
    # is): a 9,937-unit part's dense [H, O] exponents took a tenth of its check
    column_grid = np.zeros(len(out), dtype=np.int64)
    np.maximum.at(column_grid, signed.cols, dyadic_exponent(signed.values))
    out_w = _OutWeights(
        signed,
        signed.magnitudes(),  # (|wo|'s non-zeros are wo's, in the same order)
        np.maximum(column_grid, dyadic_exponent(b_out[out])),
        ones(signed),
    )
    for start in range(0, coords.shape[0], chunk):
        c = coords[start : start + chunk]
        r = _mlp_chunk(
            lin,
            part,
            c,
            out_w,
            out,
            out_reading,
            outputs[start : start + chunk],
            out_terms,
            b_out,
            shape,
            big,
        )
        if start == 0 or r[0][0] < worst[0]:
            worst = (r[0][0], r[0][1], r[0][2], start + r[0][3], r[0][4])
        max_total = max(max_total, r[1])
        abs_err, mag = np.maximum(abs_err, r[2]), np.maximum(mag, r[3])
        grid = np.maximum(grid, r[4])
    return worst, max_total, abs_err, mag, grid


def _shared_error(
    groups: Groups,
    on: np.ndarray,
    shared: np.ndarray,
    spread: Spread,
    support: tuple[np.ndarray, np.ndarray],
    awo: SparseRows,
) -> np.ndarray:
    """`groups.shared_error(on.astype(float), shared)` with the activity kept as bools: a bool
    times a float is that float or 0.0, as 1.0 or 0.0 times it is (same products, same sums).
    `support`: np.nonzero(on); `spread`: its expansion into `awo` (|W_out|)'s rows."""
    if groups.all_singles:
        # every unit alone: sum over the active units of shared · |W_out|, the products
        # sparse_product forms (the support's extra entries where shared is 0 add exact zeros
        # to sums of non-negative products: no sum changes)
        return spread.product(shared[support], awo)
    out = np.zeros((on.shape[0], groups.width))
    if groups.singles:
        s = np.asarray(groups.singles)
        out += sparse_product(on[:, s] * shared[:, s], groups.awo_singles)
    if groups.first:
        first, second = np.asarray(groups.first), np.asarray(groups.second)
        one_on = (on[:, first] != on[:, second]) * shared[:, first]
        out += sparse_product(one_on, groups.awo_first)
    if groups.other:
        groups.add_others(out, on.astype(np.float64), shared)
    return out


def _continuous_chunk(
    lin: Linear,
    ev: Evaluated,
    out_w: _OutWeights,
    out: np.ndarray,
    out_reading: Reading,
    outputs: np.ndarray,
    out_terms: np.ndarray,
    b_out: np.ndarray,
) -> tuple[tuple[float, float, float, int, int], float, np.ndarray, np.ndarray, np.ndarray]:
    """`_mlp_chunk` for a continuous part (compiler.interpolate), at real points (`ev`): no unit
    is a decision. A unit's float32 pre-activation is its exact one plus at most `total`, and
    ReLU is 1-Lipschitz, so its activation is within `total` of relu(exact) whether it is on or
    not; only a unit surely off (pre + total < 0) writes an exact 0. No pair shares and cancels
    its error here."""
    pre = ev.value
    total = (ev.error + lin.own(ev)) * SLACK  # [P, H]
    h = np.maximum(pre, 0.0)
    h_err = np.where(pre + total > 0, total, 0.0)  # [P, H]
    ideal = sparse_product(h, out_w.signed, None) + b_out[out]  # [P, O]
    carried = sparse_product(h_err, out_w.abs, None)
    # a unit with h = h_err = 0 is surely off (pre + total <= 0): an exact 0 (`certify_live`)
    n = live_terms(
        sparse_product((h + h_err > 0) * 1.0, out_w.pattern, None),
        out_w.signed.cols,
        out_terms[out],
    )
    terms = sparse_product(h + h_err, out_w.abs, None) + np.abs(b_out[out])
    sum_err = overflowed(gamma(n) * terms, terms)
    intended = encode(out_reading, outputs, out)  # [P, O]
    # every difference counts (none is float64 noise to ignore), with float64's own error in
    # `ideal`: its sum's rounding and each activation's (`bounds.f64_error`)
    dev = np.abs(ideal - intended)
    f64 = (n + 2) * 2.0**-52 * terms + 2.0**-28 * carried
    err = (carried + sum_err) * SLACK + dev + f64
    # reported as decided with no margin to spare or lose: ratio inf, the largest input error
    return (
        (math.inf, math.inf, 0.0, 0, 0),
        float(total.max(initial=0.0)),
        (err + U * err).max(axis=0),
        np.abs(intended).max(axis=0),
        dyadic_exponent(intended).max(axis=0, initial=0),
    )


def _mlp_chunk(
    lin: Linear,
    part: MLPReach,
    coords: np.ndarray,
    out_w: _OutWeights,
    out: np.ndarray,
    out_reading: Reading,
    outputs: np.ndarray,
    out_terms: np.ndarray,
    b_out: np.ndarray,
    groups: Groups,
    big: np.ndarray,
) -> tuple[tuple[float, float, float, int, int], float, np.ndarray, np.ndarray, np.ndarray]:
    ev = lin.at(part.readings, coords)  # [P, H]
    real = ~np.isnan(ev.value).any(axis=1)
    if not real.all():
        # A point of two views of one token that no token realises (value NaN) never occurs:
        # check the others (a NaN margin would pass as an exact ReLU input).
        keep = np.flatnonzero(real)
        if keep.size == 0:
            zeros = np.zeros(len(out))
            return (math.inf, math.inf, 0.0, 0, 0), 0.0, zeros, zeros, zeros.astype(np.int64)
        args = (out_w, out, out_reading, outputs[keep], out_terms, b_out, groups, big)
        r = _mlp_chunk(lin, part, coords[keep], *args)
        return ((*r[0][:3], int(keep[r[0][3]]), r[0][4]), *r[1:])
    if part.continuous:
        return _continuous_chunk(lin, ev, out_w, out, out_reading, outputs, out_terms, b_out)
    pre = ev.value
    shared = ev.error  # [P, H]: input error (+ view departures): identical within a group
    own = lin.own(ev)  # [P, H]: each unit's own rounding
    # A column with at most two non-zero products is computed with one addition: the same
    # float in every order and in every unit with the same weights. Where that float lies in
    # [2^23, 2^24) it is an integer: the unit's pre-activation is that integer plus its
    # (integer) bias, exactly, and its rounding is common to its group (it cancels in a pair).
    dot = pre - lin.bias[None, :]
    det = (lin.terms - 1 <= 2) & (lin.bias == np.round(lin.bias))  # [H]
    if det.all():
        slack_band = shared + own + 1.0
        in_band = (dot - slack_band >= 2.0**23) & (dot + slack_band < 2.0**24)
    else:
        in_band = np.zeros(pre.shape, dtype=bool)
        cand = np.flatnonzero(det)  # only these columns can be in the band
        if cand.size:
            slack_band = shared[:, cand] + own[:, cand] + 1.0
            d = dot[:, cand]
            in_band[:, cand] = (d - slack_band >= 2.0**23) & (d + slack_band < 2.0**24)
    # one of the two products carries the large weight times an exact 1 (the hot context or
    # `one`): it is exact; the other rounds once (u·|s·x|); the sum rounds to an integer (1/2)
    if in_band.any():
        band_round = U * np.maximum(ev.magnitude - big[None, :], 0.0) * 1.01 + 0.5
        shared = np.where(in_band, shared + band_round, shared)
        own = np.where(in_band, 0.0, own)
    total = (shared + own) * SLACK
    # decisions: |pre| > total, or an exact 0 with no error
    distance = np.abs(pre)
    decided = (distance > total) | ((pre == 0) & (total == 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = distance / total
    ratio[~(total > 0)] = math.inf
    ratio[~decided] = -1.0
    if ratio.size:
        pw, jw = np.unravel_index(int(np.argmin(ratio)), pre.shape)
        worst = (
            float(ratio[pw, jw]),
            float(distance[pw, jw]),
            float(total[pw, jw]),
            int(pw),
            int(jw),
        )
    else:  # no hidden unit: nothing to decide (the output is the bias)
        worst = (math.inf, math.inf, 0.0, 0, 0)
    positive = pre > 0
    n = out_terms[out]
    if np.isnan(pre).any() or not np.isfinite(total).all():
        act = positive.astype(np.float64)  # [P, H]
        h = np.maximum(pre, 0.0)
        awo = out_w.abs
        ideal = sparse_product(h, out_w.signed, None) + b_out[out]  # [P, O]
        lin_err = groups.shared_error(act, shared)  # cancels within pairs
        own_err = sparse_product(act * own, awo, None)
        h_sum = sparse_product(h, awo, None)
        sum_err = gamma(n) * (h_sum + sparse_product(total * act, awo, None) + np.abs(b_out[out]))
        exact_h = (total == 0) | in_band
        dyadic = np.all(exact_h | (act == 0), axis=1)  # [P]
        rows, cols = np.nonzero((act > 0) & ~in_band & dyadic[:, None])
    else:
        # the active units are every product's non-zeros (h, act·own and act·total are exact
        # zeros elsewhere; at an active unit they are pre, own and total): found once, and
        # expanded into W_out's rows once for the four products with W_out or |W_out|
        on = np.nonzero(positive)
        spread = Spread(on, out_w.signed, pre.shape[0])
        ideal = spread.product(pre[on], out_w.signed) + b_out[out]  # [P, O]
        lin_err = _shared_error(groups, positive, shared, spread, on, out_w.abs)  # pairs cancel
        own_err = spread.product(own[on], out_w.abs)
        h_sum = spread.product(pre[on], out_w.abs)
        # every off unit writes an exact 0 once all are decided: only the on ones round
        if decided.all():
            n = live_terms(on_entries(spread), out_w.signed.cols, n)
        sum_err = gamma(n) * (h_sum + spread.product(total[on], out_w.abs) + np.abs(b_out[out]))
        # a row is dyadic when every active unit is exact (band, or no error)
        inexact = ~((total[on] == 0) | in_band[on])
        dyadic = np.bincount(on[0][inexact], minlength=pre.shape[0]) == 0  # [P]
        keep = ~in_band[on] & dyadic[on[0]]
        rows, cols = on[0][keep], on[1][keep]
    # activations known exactly (band units, exact units, off) on a dyadic grid, times W_out on
    # a dyadic grid, summing to less than 2^24 grid steps: the output sum is exact in any order
    # the grid of the active non-band units' activations, only where the row can be dyadic
    # (elsewhere `exact_sum` is False whatever it is): the exponent of every entry was most of
    # this function's time
    h_grid = np.zeros(pre.shape[0], dtype=np.int64)
    if rows.size:
        np.maximum.at(h_grid, rows, dyadic_exponent(pre[rows, cols]))
    grid = out_w.grid
    steps = h_grid[:, None] + grid[None, :]  # [P, O]
    size = np.ldexp(h_sum + np.abs(b_out[out]), np.minimum(steps, 60))
    exact_sum = dyadic[:, None] & (steps <= 60) & (size < 2.0**24)
    sum_err = overflowed(np.where(exact_sum, 0.0, sum_err), h_sum + np.abs(b_out[out]))
    intended = encode(out_reading, outputs, out)  # [P, O]
    # Every difference between what the part writes and the program's output counts: none is
    # taken for float64 noise and ignored (the weights are float32 numbers; exact arithmetic on
    # them is the model). `ideal` is float64's evaluation of that exact output, off by its
    # sum's rounding (none where the sum is exact: one dyadic grid, float64 exact too) and by
    # each activation's own float64 error (below 2^-29 of its float32 bound `own`).
    # Where the sum is exact, the float32 output is a multiple of 2^-steps; so is the program's
    # value where it lies on that grid, and two such multiples less than 2^-steps apart are
    # equal: an error bound below that is 0 (the band's activations are the float32 integers,
    # `pre` their real values: `ideal` differs from the float32 output by float64 noise there).
    dev = np.abs(ideal - intended)
    rounding = (n + 2) * 2.0**-52 * (h_sum + np.abs(b_out[out])) + 2.0**-28 * own_err
    err = (lin_err + own_err + sum_err) * SLACK + dev + rounding
    on_grid = exact_sum & (dyadic_exponent(intended) <= steps)
    err = np.where(on_grid & (err < np.ldexp(1.0, -np.minimum(steps, 60))), 0.0, err)
    return (
        worst,
        float(total.max(initial=0.0)),
        (err + U * err).max(axis=0),
        np.abs(intended).max(axis=0),
        dyadic_exponent(intended).max(axis=0, initial=0),
    )

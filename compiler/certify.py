"""The certifier: proves, from the final weights, that every decision of a compiled model holds under
the worst float32 rounding of ANY evaluation order (thread count, batch size, BLAS, GPU without TF32).

It walks the model sublayer by sublayer over the reachable states the reach describes
(`compiler.reach`), in float64 on the float32 weights, and keeps per residual dimension a bound on
|float32 - exact| at real positions (`bounds.DimErrors`); BOS and PAD positions do not depend on the
input, so they are evaluated concretely with an error vector. The decisions:

- attention: for every reachable query, any two keys' exact scores are either equal (one level) or
  at least UNDERFLOW apart after both scores' errors, so softmax gives the lower key weight exactly 0
  (exp(-103.97) rounds to 0 in float32); PAD keys sit below BOS, which is always present; the BOS
  and PAD queries attend to BOS alone. The selected keys' weights err by a bounded factor.
- MLP: at every reachable point every hidden unit's exact pre-activation is farther from 0 than its
  error, so each ReLU is on or off whatever the rounding (its output error then propagates linearly;
  units with identical input weights, like a step's pair, cancel their shared input error).
- decoder: the argmax's winning logit beats the others by more than their errors; a number snaps to
  the value the program computes (it lies closer to it than to any other listed value).

Values written by a block are compared with what the program means (`reach`: the value a head's key
copies, an MLP's output at each point); a difference counts as error, so a wrong block fails here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compiler.bounds import (
    SLACK,
    DimErrors,
    Linear,
    ReadError,
    U,
    dyadic_exponent,
    gamma,
    sparse_product,
    special_linear,
)
from compiler.certificate import UNDERFLOW, Certificate, Check
from compiler.certify_parts import (
    Groups,
    encode,
    is_number,
    key_label,
    product,
    saturation,
    state_label,
)
from compiler.certify_parts import (
    intended as intended_out,
)
from compiler.reach import HeadReach, MLPReach, Reach, Reading

MAX_STATES = 4_000_000  # query x key pairs per chunk of the score matrix
MAX_PAIRS = 200_000_000  # query x key pairs of one head the certifier checks at all


class _OverBudget(Exception):
    """A block has more reachable states than the certifier checks: refused, located."""

    def __init__(self, check: Check) -> None:
        super().__init__(check.where)
        self.check = check


# -------------------------------------------------------------------------------------------------


def certify(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    reach: Reach,
    output: dict[str, Any],
    max_len: int,
    residual: list[str],
) -> Certificate:
    """Check every decision of the model; never raises for a bad model (the certificate says why)."""
    certifier = _Certifier(weights, config, reach, output, max_len, residual)
    try:
        return certifier.run()
    except ReadError as err:
        return Certificate((), (str(err),))
    except _OverBudget as over:
        return Certificate((*certifier.checks, over.check))


def recheck(tensors: dict[str, np.ndarray], metadata: dict[str, Any]) -> Certificate:
    """Certify a model file's tensors against the reach stored in its metadata (trusting none of
    the stored margins). A file without a reach gets a certificate that says so."""
    reach_json = metadata.get("reach")
    if not isinstance(reach_json, dict):
        return Certificate((), ("the file holds no reach to certify against",))
    try:
        reach = Reach.from_json(reach_json)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        return Certificate((), (f"the file's reach is malformed ({err})",))
    return certify(
        tensors,
        metadata["config"],
        reach,
        metadata["output"],
        int(metadata["max_len"]),
        list(metadata["residual"]),
    )


@dataclass
class _Specials:
    """BOS (row 0) and PAD at positions 1..N: exact residuals and their error bounds."""

    x: np.ndarray  # [1 + N, d_model]
    e: np.ndarray


@dataclass
class _Certifier:
    weights: dict[str, np.ndarray]
    config: dict[str, Any]
    reach: Reach
    output: dict[str, Any]
    max_len: int
    residual: list[str]
    checks: list[Check] = field(default_factory=list)

    def run(self) -> Certificate:
        w = {k: np.asarray(v, dtype=np.float64) for k, v in self.weights.items()}
        self.w = w
        labels = self.residual
        self.one, self.bos, self.pad = labels.index("one"), labels.index("bos"), labels.index("pad")
        self._embed()
        for layer in range(int(self.config["n_layers"])):
            self._attention(layer)
            self._mlp(layer)
        self._decoder()
        return Certificate(tuple(self.checks))

    # -- embedding ------------------------------------------------------------------------------

    def _embed(self) -> None:
        w_e, w_pos = self.w["embed.W_E"], self.w["pos_embed.W_pos"]
        n_tok = w_e.shape[0] - 2  # BOS and PAD are the last two ids
        real_e, real_p = w_e[:n_tok], w_pos[1 : self.max_len + 1]
        both = (np.abs(real_e).max(axis=0) > 0) & (np.abs(real_p).max(axis=0) > 0)
        mag = np.abs(real_e).max(axis=0) + np.abs(real_p).max(axis=0)
        grid = np.maximum(dyadic_exponent(real_e).max(axis=0), dyadic_exponent(real_p).max(axis=0))
        self.err = DimErrors(np.zeros_like(mag), np.where(both, U, 0.0), mag, grid)
        e_rows = np.vstack([w_e[n_tok], np.tile(w_e[n_tok + 1], (self.max_len, 1))])
        p_rows = w_pos[: self.max_len + 1]
        x = e_rows + p_rows
        # a sum of two float32 numbers is exact when one of them is 0
        self.special = _Specials(x, np.where((e_rows != 0) & (p_rows != 0), U * np.abs(x), 0.0))

    # -- attention ------------------------------------------------------------------------------

    def _attention(self, layer: int) -> None:
        p = f"blocks.{layer}.attn."
        heads = [h for h in self.reach.heads if h.layer == layer]
        w_o = self.w[p + "W_O"]  # [H, d_head, d_model]
        n_heads = w_o.shape[0]
        out_terms = np.count_nonzero(w_o.reshape(-1, w_o.shape[-1]), axis=0) + 1  # [d_model]
        new_x = self.special.x.copy()
        new_e = self.special.e.copy()
        written = np.zeros(len(self.residual), dtype=bool)
        updates: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]] = []
        for head in heads:
            h = head.head
            wq, wk, wv = (self.w[p + n][h] for n in ("W_Q", "W_K", "W_V"))
            bq, bk, bv = (self.w[p + n][h] for n in ("b_Q", "b_K", "b_V"))
            where = f"layer {layer} attn"
            sp = (self.one, self.bos, self.pad)
            q_lin = Linear(wq, bq, self.reach.readings, head.query, self.err, sp)
            k_lin = Linear(wk, bk, self.reach.readings, head.key, self.err, sp)
            n_q = int(np.prod([self.reach.readings[r].size for r in head.query]))
            n_k = int(np.prod([self.reach.readings[r].size for r in head.key]))
            if n_q * (n_k + self.max_len + 1) > MAX_PAIRS:
                raise _OverBudget(
                    Check(
                        where,
                        head.name,
                        head.op,
                        "softmax",
                        -math.inf,
                        0.0,
                        f"{n_q:,} query states x {n_k:,} key states: more (query, key) pairs than the "
                        f"certifier checks ({MAX_PAIRS:,})",
                        0.0,
                    )
                )
            q_coords = product(self.reach.readings, head.query)
            k_coords = product(self.reach.readings, head.key)
            q = q_lin.at(head.query, q_coords)
            k = k_lin.at(head.key, k_coords)
            q_err, k_err = q_lin.rounding(q), k_lin.rounding(k)
            # BOS and PAD keys/queries: concrete
            sq, sq_err = special_linear(self.special.x, self.special.e, wq, bq)
            sk, sk_err = special_linear(self.special.x, self.special.e, wk, bk)
            eta = self._scores(
                head,
                where,
                (q.value, q_err),
                (k.value, k_err),
                (sq, sq_err),
                (sk, sk_err),
                q_coords,
            )
            # values: per part (its own value columns), compare with the intended copy
            sv, sv_err = special_linear(self.special.x, self.special.e, wv, bv)
            for part in head.values:
                out = np.array(part.out, dtype=np.int64)
                if part.reading is None:
                    coords = np.zeros((1, 0))
                    ids: tuple[int, ...] = ()
                else:
                    coords = product(self.reach.readings, (part.reading,))
                    ids = (part.reading,)
                cols = np.flatnonzero(np.abs(w_o[h][:, out]).sum(axis=1) > 0)
                v_lin = Linear(wv[:, cols], bv[cols], self.reach.readings, ids, self.err, sp)
                v = v_lin.at(ids, coords)
                v_err = v_lin.rounding(v)  # [Pv, cols]
                wo_part = w_o[h][cols][:, out]  # [cols, O]
                ov = v.value @ wo_part  # [Pv, O]
                numerical = (
                    part.reading is not None and not self.reach.readings[part.reading].categorical
                )
                intended = intended_out(part, coords, len(out), numerical)
                dev = np.abs(ov - intended)
                dev = np.where(dev <= 1e-9 * (1.0 + np.abs(intended)), 0.0, dev).max(axis=0)
                bos_v, bos_verr = sv[0][cols], sv_err[0][cols]
                bos_ov = bos_v @ wo_part
                bos_dev = np.abs(bos_ov - np.array(part.default))
                bos_dev = np.where(
                    bos_dev <= 1e-9 * (1.0 + np.abs(np.array(part.default))), 0.0, bos_dev
                )
                dev = np.maximum(dev, bos_dev)
                vmax = np.maximum(np.abs(v.value).max(axis=0), np.abs(bos_v))  # [d_head]
                verr = np.maximum(v_err.max(axis=0), bos_verr)  # [d_head]
                # terms of the weighted sum that can be non-zero: BOS alone when real keys carry 0
                real_zero = not np.any(v.value) and not np.any(v_err)
                n_keys = 1 if real_zero else self.max_len + 1
                dz = eta * vmax + (1 + eta) * verr + gamma(n_keys) * (1 + eta) * (vmax + verr)
                wo = np.abs(wo_part)  # [cols, O]
                contrib = np.concatenate([v.value, bos_v[None]])[:, :, None] * wo_part[None]
                same_sign = np.all(contrib >= 0, axis=(0, 1)) | np.all(contrib <= 0, axis=(0, 1))
                g_out = gamma(out_terms[out])
                rel = np.where(same_sign, (eta + gamma(n_keys)) * (1 + eta) + g_out * 2, 0.0)
                z_abs = np.where(
                    same_sign,
                    (1 + eta) * (1 + gamma(n_keys)) * (verr @ wo),
                    dz @ wo,
                )
                abs_err = (z_abs + g_out * ((vmax + verr) @ wo) * (~same_sign)) * 1.0 + dev
                if head.single and not np.any(verr):
                    # one key (or BOS) with weight exactly 1: z is its value exactly; z @ W_O on
                    # one dyadic grid within 2^24 steps is exact too
                    values = np.concatenate([v.value, bos_v[None]])
                    g = int(
                        dyadic_exponent(values).max(initial=0)
                        + dyadic_exponent(wo_part).max(initial=0)
                    )
                    size = float((np.abs(values) @ wo).max(initial=0.0))
                    if g <= 60 and size * 2.0**g < 2.0**24:
                        abs_err, rel = dev.copy(), np.zeros_like(rel)
                mag = np.maximum(np.abs(intended).max(axis=0), np.abs(np.array(part.default)))
                grid = 0 if part.kind == "copy" else 99  # a copy is one-hot; a mean is not dyadic
                updates.append((out, abs_err * SLACK, rel * SLACK, mag, grid))
                written[out] = True
            # BOS and PAD queries attend to BOS alone: they add BOS's value through W_O exactly
            bos_ov_full = sv[0] @ w_o[h]
            bos_ov_err = sv_err[0] @ np.abs(w_o[h]) + gamma(out_terms) * (
                (np.abs(sv[0]) + sv_err[0]) @ np.abs(w_o[h])
            )
            new_x += bos_ov_full
            new_e += bos_ov_err
        if n_heads and np.any(self.w[p + "b_O"]):
            raise ReadError(f"layer {layer} attn has a non-zero b_O")
        for out, abs_err, rel, mag, grid in updates:
            self.err.grid[out] = grid
            a_old = self.err.absolute[out]
            # resid + attn_out rounds only where resid was not an exact 0 already
            carried = (a_old > 0) | (self.err.relative[out] > 0)
            self.err.absolute[out] = a_old + abs_err + np.where(carried, U * mag, 0.0)
            self.err.relative[out] = self.err.relative[out] + rel + np.where(carried, U, 0.0)
            self.err.magnitude[out] = mag
        self._check_untouched(w_o.reshape(-1, w_o.shape[-1]), written, f"layer {layer} attn")
        self.special = _Specials(new_x, (new_e + U * np.abs(new_x)) * SLACK)

    def _scores(
        self,
        head: HeadReach,
        where: str,
        queries: tuple[np.ndarray, np.ndarray],  # real query states: value, error [Pq, d_head]
        keys: tuple[np.ndarray, np.ndarray],  # real key states
        special_q: tuple[np.ndarray, np.ndarray],  # BOS, PAD queries [1 + N, d_head]
        special_k: tuple[np.ndarray, np.ndarray],
        q_coords: np.ndarray,
    ) -> float:
        """Check softmax saturation for every query; return eta, the relative error bound of the
        selected keys' weights."""
        all_k = np.vstack([special_k[0], keys[0]])  # row 0: BOS, rows 1..N: PAD, then real keys
        all_ke = np.vstack([special_k[1], keys[1]])
        all_q = np.vstack([special_q[0], queries[0]])
        all_qe = np.vstack([special_q[1], queries[1]])
        n_special = special_k[0].shape[0]
        scale = math.sqrt(queries[0].shape[1])  # this layer's own d_head (per-layer shapes)
        worst = (math.inf, math.inf, 0.0, "no decision")  # (margin - bound, margin, bound, where)
        max_bound = eta = 0.0
        chunk = max(1, MAX_STATES // max(all_k.shape[0], 1))
        for start in range(0, all_q.shape[0], chunk):
            qs, qe = all_q[start : start + chunk], all_qe[start : start + chunk]
            s = qs @ all_k.T / scale  # [rows, keys]
            # products that can be non-zero per (query, key): n of gamma_n
            g = gamma((((np.abs(qs) + qe) > 0) * 1.0) @ (((np.abs(all_k) + all_ke) > 0) * 1.0).T)
            err = (
                np.abs(qs) @ all_ke.T
                + qe @ np.abs(all_k).T
                + qe @ all_ke.T
                + g * ((np.abs(qs) + qe) @ (np.abs(all_k) + all_ke).T)
            ) / scale
            # sqrt(d_head) is a power of 2: scaling is exact. Products of exact dyadic q and k
            # whose sums stay within 2^24 grid steps are exact in any order.
            grid = dyadic_exponent(qs).max(axis=1)[:, None] + dyadic_exponent(all_k).max(axis=1)
            size = (np.abs(qs) @ np.abs(all_k).T) * 2.0 ** np.minimum(grid, 60)
            exact = (
                (qe.max(axis=1)[:, None] == 0)
                & (all_ke.max(axis=1)[None, :] == 0)
                & (grid <= 60)
                & (size < 2.0**24)
            )
            err = np.where(exact, 0.0, err * SLACK)
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
                    state = state_label(
                        self.reach.readings, head.query, q_coords[index - n_special]
                    )
                    row_eta, cand, row_bound = saturation(scores, errors, n_special, head.single)
                    cand = (*cand[:3], f"query {state}" + cand[3])
                    eta, max_bound = max(eta, row_eta), max(max_bound, row_bound)
                if cand[0] < worst[0]:
                    worst = cand
        self.checks.append(
            Check(where, head.name, head.op, "softmax", worst[1], worst[2], worst[3], max_bound)
        )
        return eta

    # -- MLP ------------------------------------------------------------------------------------

    def _mlp(self, layer: int) -> None:
        p = f"blocks.{layer}.mlp."
        w_in, b_in, w_out, b_out = (self.w[p + n] for n in ("W_in", "b_in", "W_out", "b_out"))
        written = np.zeros(len(self.residual), dtype=bool)
        updates = []
        out_terms = np.count_nonzero(w_out, axis=0) + 1  # [d_model]
        for part in (m for m in self.reach.mlps if m.layer == layer):
            a, b = part.hidden
            lin = Linear(
                w_in[:, a:b],
                b_in[a:b],
                self.reach.readings,
                part.readings,
                self.err,
                (self.one, self.bos, self.pad),
            )
            out_reading = self.reach.readings[part.out]
            out = np.array(sorted({d for t in out_reading.terms for d, _ in t}), dtype=np.int64)
            wo = w_out[a:b][:, out]  # [H, O]
            stray = np.abs(np.delete(w_out[a:b], out, axis=1)).max(initial=0.0)
            if stray > 0:
                raise ReadError(f"MLP {part.name!r} writes outside its output's dimensions")
            coords = np.array(part.points, dtype=np.float64)
            if coords.size == 0:
                continue
            update = self._mlp_part(
                layer, part, lin, coords, wo, out, out_reading, out_terms, b_out
            )
            updates.append(update)
            written[out] = True
        for out, abs_err, mag, grid in updates:
            self.err.grid[out] = grid
            carried = (self.err.absolute[out] > 0) | (self.err.relative[out] > 0)
            self.err.absolute[out] = (
                self.err.absolute[out] + abs_err + np.where(carried, U * mag, 0)
            )
            self.err.relative[out] = self.err.relative[out] + np.where(carried, U, 0.0)
            self.err.magnitude[out] = mag
        self._check_untouched(w_out, written, f"layer {layer} mlp")
        # BOS/PAD: no decisions (ReLU is 1-Lipschitz), errors propagate
        pre, pre_err = special_linear(self.special.x, self.special.e, w_in, b_in)
        h = np.maximum(pre, 0.0)
        off = pre + pre_err < 0  # surely off: exactly 0, no error
        h_err = np.where(off, 0.0, pre_err)
        out_val = h @ w_out + b_out
        n = np.count_nonzero(w_out, axis=0) + 1
        out_err = h_err @ np.abs(w_out) + gamma(n) * ((h + h_err) @ np.abs(w_out) + np.abs(b_out))
        out_err = np.where(
            (h_err.max(axis=1, initial=0) == 0)[:, None] & (h.max(axis=1, initial=0) == 0)[:, None],
            np.abs(b_out) * 0,
            out_err,
        )
        x = self.special.x + out_val
        self.special = _Specials(x, (self.special.e + out_err + U * np.abs(x)) * SLACK)

    def _mlp_part(
        self,
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
        # Units with identical input weights (a step's pair) share their input error exactly.
        # (the bos/pad rows are 0 at real positions: the BOS/PAD gate may differ within a pair)
        W = lin.W.copy()
        W[[self.bos, self.pad]] = 0.0
        groups: dict[bytes, list[int]] = {}
        for j in range(W.shape[1]):
            groups.setdefault(np.ascontiguousarray(W[:, j]).tobytes(), []).append(j)
        shape = Groups(groups, wo)
        big = np.abs(W).max(axis=0)  # [H]
        outputs = np.array(part.outputs)
        chunk = max(1, MAX_STATES // max(W.shape[1], 1))
        if W.shape[1] == 0:  # no hidden unit: the part writes its bias, nothing is decided
            intended = encode(out_reading, np.array(part.outputs), out)
            dev = np.abs(b_out[out][None, :] - intended).max(axis=0, initial=0.0)
            self.checks.append(
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
        worst = (math.inf, 0.0, 0.0, 0, 0)  # (ratio, distance, total, point, unit)
        max_total = 0.0
        abs_err = np.zeros(len(out))
        mag = np.zeros(len(out))
        grid = np.zeros(len(out), dtype=np.int64)
        for start in range(0, coords.shape[0], chunk):
            c = coords[start : start + chunk]
            r = self._mlp_chunk(
                lin,
                part,
                c,
                wo,
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
        state = state_label(self.reach.readings, part.readings, coords[worst[3]])
        self.checks.append(
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

    def _mlp_chunk(
        self,
        lin: Linear,
        part: MLPReach,
        coords: np.ndarray,
        wo: np.ndarray,
        out: np.ndarray,
        out_reading: Reading,
        outputs: np.ndarray,
        out_terms: np.ndarray,
        b_out: np.ndarray,
        groups: Groups,
        big: np.ndarray,
    ) -> tuple[tuple[float, float, float, int, int], float, np.ndarray, np.ndarray, np.ndarray]:
        ev = lin.at(part.readings, coords)  # [P, H]
        pre = ev.value
        shared = ev.error  # [P, H]: input error (+ view departures): identical within a group
        own = lin.own(ev)  # [P, H]: each unit's own rounding
        # A column with at most two non-zero products is computed with one addition: the same
        # float in every order and in every unit with the same weights. Where that float lies in
        # [2^23, 2^24) it is an integer: the unit's pre-activation is that integer plus its
        # (integer) bias, exactly, and its rounding is common to its group (it cancels in a pair).
        dot = pre - lin.bias[None, :]
        det = (lin.terms - 1 <= 2) & (lin.bias == np.round(lin.bias))  # [H]
        slack_band = shared + own + 1.0
        in_band = det[None, :] & (dot - slack_band >= 2.0**23) & (dot + slack_band < 2.0**24)
        # one of the two products carries the large weight times an exact 1 (the hot context or
        # `one`): it is exact; the other rounds once (u·|s·x|); the sum rounds to an integer (1/2)
        band_round = U * np.maximum(ev.magnitude - big[None, :], 0.0) * 1.01 + 0.5
        shared = np.where(in_band, shared + band_round, shared)
        own = np.where(in_band, 0.0, own)
        total = (shared + own) * SLACK
        # decisions: |pre| > total, or an exact 0 with no error
        distance = np.abs(pre)
        decided = (distance > total) | ((pre == 0) & (total == 0))
        ratio = np.where(total > 0, distance / np.where(total > 0, total, 1), math.inf)
        ratio = np.where(decided, ratio, -1.0)
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
        act = (pre > 0).astype(np.float64)  # [P, H]
        h = np.maximum(pre, 0.0)
        awo = np.abs(wo)
        ideal = sparse_product(h, wo) + b_out[out]  # [P, O]
        lin_err = groups.shared_error(act, shared)  # cancels within pairs
        own_err = sparse_product(act * own, awo)
        n = out_terms[out]
        h_sum = sparse_product(h, awo)
        sum_err = gamma(n) * (h_sum + sparse_product(total * act, awo) + np.abs(b_out[out]))
        # activations known exactly (band units, exact units, off) on a dyadic grid, times W_out on
        # a dyadic grid, summing to less than 2^24 grid steps: the output sum is exact in any order
        exact_h = (total == 0) | in_band
        h_grid = np.where(act > 0, np.where(in_band, 0, dyadic_exponent(pre)), 0).max(axis=1)
        dyadic = np.all(exact_h | (act == 0), axis=1)  # [P]
        grid = np.maximum(dyadic_exponent(wo).max(axis=0, initial=0), dyadic_exponent(b_out[out]))
        steps = h_grid[:, None] + grid[None, :]  # [P, O]
        size = (h_sum + np.abs(b_out[out])) * 2.0 ** np.minimum(steps, 60)
        exact_sum = dyadic[:, None] & (steps <= 60) & (size < 2.0**24)
        sum_err = np.where(exact_sum, 0.0, sum_err)
        intended = encode(out_reading, outputs, out)  # [P, O]
        dev = np.abs(ideal - intended)
        # below 1e-9 relative, a difference is float64's own rounding of this evaluation, not the
        # model's (the weights are float32 numbers; exact real arithmetic on them is the model)
        dev = np.where(dev <= 1e-9 * (1.0 + np.abs(intended)), 0.0, dev)
        err = (lin_err + own_err + sum_err) * SLACK + dev
        return (
            worst,
            float(total.max(initial=0.0)),
            (err + U * err).max(axis=0),
            np.abs(intended).max(axis=0),
            dyadic_exponent(intended).max(axis=0, initial=0),
        )

    def _check_untouched(self, w_out: np.ndarray, written: np.ndarray, where: str) -> None:
        touched = np.abs(w_out).max(axis=0, initial=0.0) > 0  # a layer may have no heads or units
        if np.any(touched & ~written):
            d = int(np.flatnonzero(touched & ~written)[0])
            raise ReadError(
                f"{where} writes residual dimension {self.residual[d]!r}, "
                "which the reach does not say it writes"
            )
        for d in (self.one, self.bos, self.pad):
            if touched[d]:
                raise ReadError(f"{where} writes the {self.residual[d]!r} dimension")

    # -- decoder --------------------------------------------------------------------------------

    def _decoder(self) -> None:
        w_u, b_u = self.w["unembed.W_U"], self.w["unembed.b_U"]
        reading = self.reach.readings[self.reach.output]
        lin = Linear(
            w_u,
            b_u,
            self.reach.readings,
            (self.reach.output,),
            self.err,
            (self.one, self.bos, self.pad),
        )
        coords = product(self.reach.readings, (self.reach.output,))
        ev = lin.at((self.reach.output,), coords)
        err = lin.rounding(ev)  # [P, C]
        name, op = str(self.output.get("name", reading.name)), "unembed"
        if reading.categorical:
            logits = ev.value
            k = coords[:, 0].astype(np.int64)
            rows = np.arange(len(k))
            win = logits[rows, k]
            rest = logits.copy()
            rest[rows, k] = -np.inf
            rival = rest.argmax(axis=1) if logits.shape[1] > 1 else k
            margin = win - (rest[rows, rival] if logits.shape[1] > 1 else -np.inf)
            bound = err[rows, k] + (err[rows, rival] if logits.shape[1] > 1 else 0)
            kind, labels = "argmax", [reading.labels[j] for j in k]
        else:
            x = coords[:, 0]
            value = ev.value[:, 0]
            listed = sorted({float(v) for v in self.output.get("values") or [] if is_number(v)})
            if listed:
                pts = np.array(listed)
                pos = np.searchsorted(pts, x)
                lo = np.where(pos > 0, pts[np.maximum(pos - 1, 0)], -np.inf)
                hi = np.where(pos + 1 < len(pts), pts[np.minimum(pos + 1, len(pts) - 1)], np.inf)
                margin = np.minimum(x - (x + lo) / 2, (x + hi) / 2 - x)
            elif self.output.get("type") == "ints":
                margin = np.full_like(x, 0.5)
            else:
                margin = 1e-6 * np.maximum(1.0, np.abs(x))  # the promise: numbers within 1e-6
            bound = err[:, 0] + np.abs(value - x)
            kind = "snap"
            labels = [
                reading.labels[j] if j < len(reading.labels) else str(x[j]) for j in range(len(x))
            ]
        i = int(np.argmin(margin - bound))
        self.checks.append(
            Check(
                "decoder",
                name,
                op,
                kind,
                float(margin[i]),
                float(bound[i]),
                f"output {labels[i]}",
                float(bound.max()),
            )
        )


__all__ = ["Certificate", "Check", "certify", "recheck"]

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
- selection: the keys each reachable query's exact scores put on top are the ones its select
  chooses (the reach's atoms), or BOS alone where it chooses none (`certify_select`).
- MLP: at every reachable point every hidden unit's exact pre-activation is farther from 0 than its
  error, so each ReLU is on or off whatever the rounding (its output error then propagates linearly;
  units with identical input weights, like a step's pair, cancel their shared input error).
- decoder: the argmax's winning logit beats the others by more than their errors; a number snaps to
  the value the program computes (it lies closer to it than to any other listed value).

Values written by a block are compared with what the program means (`reach`: the value a head's key
copies, an MLP's output at each point); a difference counts as error, so a wrong block fails here too.

The walk starts from an embedding checked against the program: at every token id and real position
it writes the values the reach records for the readings only it writes (`certify_embed`).

This module runs the walk (`certify`, `recheck`) and checks the decoder; the embedding, attention
and MLP checks are `certify_embed`, `certify_attention` and `certify_mlp`, over the state in
`certify_walk`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from compiler.bounds import DimErrors, Linear, ReadError, U
from compiler.certificate import Certificate, Check
from compiler.certify_attention import check_attention
from compiler.certify_embed import check_embedding, special_dims
from compiler.certify_mlp import check_mlp
from compiler.certify_parts import is_number, product
from compiler.certify_walk import OutOfRange, OverBudget, Specials, Walk
from compiler.float64_weights import Float64Weights
from compiler.grid import GRID_KEYS
from compiler.grid_margin import grid_margin
from compiler.grids import dyadic_column_max
from compiler.reach import HeadReach, Reach, Reading, decoding_digest, value_label


def certify(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    reach: Reach,
    output: dict[str, Any],
    max_len: int,
    residual: list[str],
    tokens: Sequence[Any] = (),
) -> Certificate:
    """Check every decision of the model; never raises for a bad model (the certificate says why).
    `tokens`: the vocabulary, by token id (it names a token where the embedding is wrong)."""
    checks: list[Check] = []
    try:
        walk = _embedding(weights, reach, max_len, residual, checks, tokens)
        _check_blocks(weights, reach, int(config["n_layers"]))
        for layer in range(int(config["n_layers"])):
            check_attention(walk, layer)
            check_mlp(walk, layer)
        _check_decoder(walk, output)
        if all(check.ok for check in checks):
            # last, and only where every decision held: the walk's refusal of an edited file (a
            # swapped token row, an edited output list, an off-grid denominator) says more
            _check_runtime(reach, config, output, tokens, max_len)
    except OutOfRange as err:
        # after a failed decision the walk's bounds are that failure's: it says why, located
        # (the range alone named no s-op and read as a model the certifier could not walk)
        if any(not check.ok for check in checks):
            return Certificate(tuple(checks))
        located = err.as_check(reach)
        if located is not None:
            return Certificate((*checks, located))
        return Certificate((), (str(err),))
    except ReadError as err:
        return Certificate((), (str(err),))
    except OverBudget as over:
        return Certificate((*checks, over.check))
    return Certificate(tuple(checks))


def _check_blocks(weights: dict[str, np.ndarray], reach: Reach, n_layers: int) -> None:
    """Every head and MLP part the reach lists is in a layer the file has, and every part's units
    are units of its MLP. The walk checks the file's layers: a block past them was never checked
    (a file with its last layer cut off re-checked as proved, its output read from dimensions no
    block wrote), and a part's units past the MLP's were sliced away unseen."""
    for block in (*reach.heads, *reach.mlps):
        if not 0 <= block.layer < n_layers:
            kind = "head" if isinstance(block, HeadReach) else "MLP part"
            raise ReadError(
                f"the reach's {kind} {block.name!r} is in layer {block.layer}, but the file has "
                f"{n_layers} layer{'s' if n_layers != 1 else ''}"
            )
    for part in reach.mlps:
        units = weights[f"blocks.{part.layer}.mlp.W_in"].shape[1]
        a, b = part.hidden
        if not 0 <= a <= b <= units:
            raise ReadError(
                f"the reach's MLP part {part.name!r} has units {a}-{b - 1} of layer "
                f"{part.layer}, whose MLP has {units}"
            )


# what reading a file's reach wrongly raises
_UNREADABLE = (KeyError, TypeError, ValueError, IndexError, OverflowError, zlib.error)


def recheck(tensors: dict[str, np.ndarray], metadata: dict[str, Any]) -> Certificate:
    """Certify a model file's tensors against the reach stored in its metadata (trusting none of
    the stored margins). A file without a reach gets a certificate that says so. The reach itself
    is trusted here: `rasp verify --model` first rebuilds it from the program
    (`rasp.tools.rebuild`), since a reach edited with the weights would prove another program."""
    reach_json = metadata.get("reach")
    if not isinstance(reach_json, dict):
        return Certificate((), ("the file holds no reach to certify against",))
    try:
        reach = Reach.from_json(reach_json)
        reach.check_indices(int(metadata["config"]["d_model"]))
    except _UNREADABLE as err:
        return Certificate((), (f"the file's reach is malformed ({err})",))
    try:
        return certify(
            tensors,
            metadata["config"],
            reach,
            metadata["output"],
            int(metadata["max_len"]),
            list(metadata["residual"]),
            _tokens(metadata),
        )
    except _UNREADABLE as err:
        # a hand edit the checks above let through (a point's coordinate dropped, a head index
        # 1.5, a column past int64) breaks the walk that reads the reach as the compiler writes
        # it: not proved, never a crash (a compile's own reach is certified by `certify` alone)
        return Certificate((), (f"the file's reach is malformed ({type(err).__name__}: {err})",))


def _check_runtime(
    reach: Reach,
    config: dict[str, Any],
    output: dict[str, Any],
    tokens: Sequence[Any],
    max_len: int,
) -> None:
    """What the runtime reads from the file besides the weights is what the compile meant (the
    reach pins it): each head's mask and causal attention (which keys a query sees), the
    vocabulary (which id each token is encoded as), the longest input (the value sets end there)
    and the output entry (how logits decode). An edited one is refused: the walk proves the
    weights for the reach's, not the file's."""
    if reach.tokens is None or reach.decoding is None or reach.max_len is None:
        raise ReadError(
            "the file's reach does not record the vocabulary, max_len and decoding it was "
            "compiled for (written by an older compiler): recompile it to certify them"
        )
    if max_len != reach.max_len:
        # a model without W_pos runs any length its n_ctx allows: hist compiled at N = 3 and
        # edited to max_len 6 counted 5 a's as 3 under a certificate of the length-3 reach
        raise ReadError(
            f"the file's max_len is {max_len}, but the model was compiled for inputs of at most "
            f"{reach.max_len} tokens"
        )
    causal = config.get("attention_dir", "bidirectional") == "causal"
    if causal != reach.causal:
        raise ReadError(
            f"the file's config has {'causal' if causal else 'bidirectional'} attention, but "
            f"the model was compiled for {'causal' if reach.causal else 'bidirectional'} attention"
        )
    shapes = config.get("layers") or []
    for head in reach.heads:
        # as the runtime reads them (transformer.config.LayerShape.mask): none listed, none
        shape = shapes[head.layer] if 0 <= head.layer < len(shapes) else {}
        masks = shape.get("masks") or []
        mask = masks[head.head] if 0 <= head.head < len(masks) else ""
        if mask != head.mask:
            raise ReadError(
                f"the file's config gives layer {head.layer} head {head.head} ({head.name!r}) the "
                f'mask {mask!r}, but its select sees the keys {head.mask!r} ("": every key)'
            )
    labels = tuple(value_label(t) for t in tokens)
    if labels != reach.tokens:
        raise ReadError(
            f"the file's vocabulary is {', '.join(labels)}, but the model was compiled for "
            f"{', '.join(reach.tokens)} (token ids in that order)"
        )
    if decoding_digest(output) != reach.decoding:
        raise ReadError(
            f"the file's output entry ({output.get('name', '?')!r}: how its logits decode) is not "
            "the one the model was compiled with"
        )


def _tokens(metadata: dict[str, Any]) -> list[Any]:
    vocab = metadata.get("vocab")
    tokens = vocab.get("tokens") if isinstance(vocab, dict) else None
    return list(tokens) if isinstance(tokens, list) else []


def _embedding(
    weights: dict[str, np.ndarray],
    reach: Reach,
    max_len: int,
    residual: list[str],
    checks: list[Check],
    tokens: Sequence[Any],
) -> Walk:
    """The walk's start: the embedding checked against the reach's record of what it holds
    (`certify_embed`), its error at real positions (a sum of two float32 rows), and BOS and PAD
    residuals evaluated concretely."""
    w = Float64Weights(weights)  # (exact: converted a layer at a time, as the walk reads them)
    inputs = check_embedding(w, reach, residual, max_len, tokens)
    one, bos, pad = special_dims(residual)
    w_e = w["embed.W_E"]
    w_pos = w.get("pos_embed.W_pos", np.zeros((max_len + 1, w_e.shape[1])))  # none: all zero
    n_tok = w_e.shape[0] - 2  # BOS and PAD are the last two ids
    real_e, real_p = w_e[:n_tok], w_pos[1 : max_len + 1]
    top_e, top_p = np.abs(real_e).max(axis=0), np.abs(real_p).max(axis=0)
    both = (top_e > 0) & (top_p > 0)
    mag = top_e + top_p
    grid = np.maximum(dyadic_column_max(real_e), dyadic_column_max(real_p))
    err = DimErrors(np.zeros_like(mag), np.where(both, U, 0.0), mag, grid)
    e_rows = np.vstack([w_e[n_tok], np.tile(w_e[n_tok + 1], (max_len, 1))])
    p_rows = w_pos[: max_len + 1]
    x = e_rows + p_rows
    # a sum of two float32 numbers is exact when one of them is 0
    special = Specials(x, np.where((e_rows != 0) & (p_rows != 0), U * np.abs(x), 0.0))
    walk = Walk(w, reach, residual, max_len, err, special, checks, one, bos, pad)
    walk.check_range("the embedding")
    written = np.abs(w_e).max(axis=0) + np.abs(w_pos).max(axis=0) > 0
    walk.claim(sorted(set(np.flatnonzero(written).tolist()) | inputs), "the embedding")
    return walk


# A listed value this close (relative) to the exact output is that output up to float64 rounding
# (the compiler lists such twins once: compiler.fits.merge_noise). Matching within it is safe: the
# margin is measured from the program's value x (not from the value p it decodes as), the bound
# counts |float64 output - x|, and p decodes where the program has x, which the compiler promises
# for numbers (within 1e-6, rasp.atoms.same_value) except for two different whole numbers (ints,
# compared exactly), never twins here. Likewise for ints and bools (x within it of a whole number
# is a float) and on a grid (x within it of k / d is a float; an int's x * d is exact wherever a
# bound leaves a margin: a float32 model sums at most 24 + log2(N) bits exactly, far below 2^53).
# tests/compiler/test_matching_tolerances.py
SNAP_NOISE = 1e-9


def _check_decoder(walk: Walk, output: dict[str, Any]) -> None:
    """The argmax wins by more than the logits' errors; a number snaps to the program's value."""
    w_u, b_u = walk.w["unembed.W_U"], walk.w["unembed.b_U"]
    walk.check_read((walk.reach.output,), "the unembedding")
    reading = walk.reach.readings[walk.reach.output]
    lin = Linear(
        w_u,
        b_u,
        walk.reach.readings,
        (walk.reach.output,),
        walk.err,
        (walk.one, walk.bos, walk.pad),
    )
    coords = product(walk.reach.readings, (walk.reach.output,))
    ev = lin.at((walk.reach.output,), coords)
    err = lin.rounding(ev)  # [P, C]
    name, op = str(output.get("name", reading.name)), "unembed"
    if reading.categorical:
        _check_listed(reading, output, name, w_u.shape[1])
        logits = ev.value
        k = coords[:, 0].astype(np.int64)
        rows = np.arange(len(k))
        win = logits[rows, k]
        # the weakest rival is the column nearest the winner after both errors, not the one with
        # the highest exact logit: a lower logit with a larger error can overtake the winner
        slack = (win[:, None] - logits) - (err[rows, k][:, None] + err)  # [P, C]
        slack[rows, k] = np.inf
        rival = slack.argmin(axis=1) if logits.shape[1] > 1 else k
        margin = win - (logits[rows, rival] if logits.shape[1] > 1 else -np.inf)
        bound = err[rows, k] + (err[rows, rival] if logits.shape[1] > 1 else 0)
        kind, labels = "argmax", [reading.labels[j] for j in k]
    else:
        x = coords[:, 0]
        value = ev.value[:, 0]
        numbers = [v for v in output.get("values") or [] if is_number(v)]
        listed = sorted({float(v) for v in numbers})
        grid = next((output[key] for key in GRID_KEYS.values() if output.get(key)), None)
        if any(float(v) != v for v in numbers):
            # a whole number past 2^53 that float64 does not hold (10^17 + 1 decodes as 10^17):
            # no snap of a float gives it back; the one-hot output lists it exactly
            margin = np.zeros_like(x)
        elif grid:
            margin = _grid_margin(x, grid)
        elif listed:
            pts = np.array(listed)
            # x snaps to its nearest listed value p, which need not be x itself: a float64 twin of
            # x (0.6 for 0.6000000000000001) is listed once. The margin is x's distance to the
            # midpoints around p; a p farther from x than float64 noise decodes wrongly (margin 0).
            right = np.clip(np.searchsorted(pts, x), 0, len(pts) - 1)
            left = np.maximum(right - 1, 0)
            pos = np.where(np.abs(x - pts[left]) < np.abs(pts[right] - x), left, right)
            p = pts[pos]
            lo = np.where(pos > 0, pts[np.maximum(pos - 1, 0)], -np.inf)
            hi = np.where(pos + 1 < len(pts), pts[np.minimum(pos + 1, len(pts) - 1)], np.inf)
            margin = np.minimum(x - (p + lo) / 2, (p + hi) / 2 - x)
            twin = np.abs(p - x) <= SNAP_NOISE * np.maximum(1.0, np.abs(x))
            # A twin decodes as p where the program has x: right as the compiler promises numbers
            # (within 1e-6, rasp.atoms.same_value), except two different whole numbers, which may
            # be ints the interpreter computes exactly (10^10 + 1 beside 10^10, within SNAP_NOISE
            # from 10^9 on), one decoded as the other. Past 2^53 too, where float64 holds only
            # whole numbers: an int 2^53 + 2 decoded as 2^53 was certified.
            whole = (np.rint(x) == x) & (np.rint(p) == p)
            twin &= ~(whole & (p != x))
            margin = np.where(twin, np.maximum(margin, 0.0), 0.0)
        elif output.get("type") in ("ints", "bools"):
            # the runtime rounds (ints) or compares with 1/2 (bools): right only where the
            # program's value is whole (0 or 1 for bools), by its distance from the half-way point
            off = np.abs(x - np.rint(x))
            whole = off <= SNAP_NOISE * np.maximum(1.0, np.abs(x))
            if output.get("type") == "bools":
                whole &= (np.rint(x) == 0) | (np.rint(x) == 1)
            margin = np.where(whole, 0.5 - off, 0.0)
        else:
            margin = 1e-6 * np.maximum(1.0, np.abs(x))  # the promise: numbers within 1e-6
        bound = err[:, 0] + np.abs(value - x)
        kind = "snap"
        labels = [
            reading.labels[j] if j < len(reading.labels) else str(x[j]) for j in range(len(x))
        ]
    i = int(np.argmin(margin - bound))
    walk.checks.append(
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


def _check_listed(reading: Reading, output: dict[str, Any], name: str, columns: int) -> None:
    """A one-hot output decodes logit column k as the file's `values[k]`: that must be the
    program's value k (the output reading's), or a right argmax decodes a wrong value."""
    values = output.get("values")
    if output.get("encoding") != "categorical" or not isinstance(values, list):
        raise ReadError(f"the output {name!r} is one-hot, but the file does not decode it so")
    if not len(values) == columns == reading.size:
        raise ReadError(
            f"the output {name!r} has {reading.size} values, but the file lists {len(values)} "
            f"and the unembedding has {columns} columns"
        )
    for k, (value, label) in enumerate(zip(values, reading.labels, strict=True)):
        if value_label(value) != label:
            raise ReadError(
                f"the file decodes logit column {k} of the output {name!r} as "
                f"{value_label(value)}, where the program's value is {label}"
            )


def _grid_margin(x: np.ndarray, denominators: list[int]) -> np.ndarray:
    """How far each output value x may drift and still decode as itself on a per-position (or
    per-length) grid: position i decodes round(x * d_i) / d_i, right while the drift is below
    (1/2 - off) / d_i, where off is x's own distance from the grid (float64 noise) in steps of
    1/d_i (compiler.grid_margin).

    Which positions (lengths) x occurs at is the value analysis's fact (compiler.grid), not the
    weights': the margin is the smallest over every grid x lies on, and 0 (refused) for an x on
    none of them.
    """
    return grid_margin(x, denominators, SNAP_NOISE)


__all__ = ["Certificate", "Check", "certify", "recheck"]

"""Assembly: scheduled blocks in Dim coordinates -> TransformerLens arrays + the format's metadata.

Per head, besides the builder's query/key columns, assembly adds two columns:
- `bos`: key `bos` x (query `one` * bos_score + BIG * (query `bos` + query `pad`)); the key's `bos`
  row also subtracts the BOS residual's reading of the builder's columns, so the BOS key is 0 there.
  So a real query scores BOS at exactly `bos_score` (and the score does not depend on the noise the
  query carries), and the BOS and PAD queries attend only to BOS: the BOS and PAD residual streams
  never depend on the input, and assembly computes them exactly (by running the layers built so far).
- `pad`: key `pad` x query `one` * -BIG_PAD, so a real query gives every PAD key weight exactly 0.
BIG and BIG_PAD are derived from bounds on every score (residual bounds from the value sets), plus
SOFTMAX_GAP. sqrt(d_head) is folded into W_K. A layer with a head that averages keys has d_head a
power of 4, so the fold and the runtime's division are exact, and so has one with a head whose
scores are exact (`HeadSpec.exact_scores`); a layer whose heads each select at most one key has
the width it needs (the certifier bounds the scaling's rounding).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from compiler.assemble_metadata import model_metadata
from compiler.attention import SOFTMAX_GAP
from compiler.blocks import BOS, ONE, PAD, Atom, Dim, Encoded, HeadSpec, MLPSpec, Plan
from compiler.build_limits import check_float32_range, check_params
from compiler.certify_embed import record_inputs
from compiler.layout import Layout
from compiler.model import (
    CompiledModel,
    Sketch,
    attention_residual,
    embed_residual,
    mlp_residual,
    model_config,
)
from compiler.out_rows import OutRows
from compiler.reach import decoding_digest, value_label
from compiler.reach_builder import ReachBuilder
from compiler.schedule import Schedule
from rasp.errors import Source

# BIG_PAD is rounded up to a multiple of this (a coarse dyadic grid keeps exact score sums exact).
PAD_GRID = 256


def assemble(
    schedule: Schedule,
    layout: Layout,
    plan: Plan,
    vocab: Sequence[Atom],
    max_len: int,
    *,
    config: dict[str, Any],
    name: str,
    source: Source | None = None,
    max_params: int | None = None,
    tuples: bool = False,
) -> CompiledModel:
    """The model of a planned build; `config` is its sketch's (`sketch_model`), which the
    driver compared with other builds before any weight. `tuples`: the program is tracr's, whose
    strings starting with the tuple mark are its tuples and lists (`rasp.tracr.boxes`); an output
    that can hold one says so (`output.tuples`)."""
    shapes = config["layers"]
    check_params(config, plan, max_params)  # before any weight: W_E alone is |V| x d_model
    weights = _embeddings(layout, plan, vocab, max_len)  # [d_vocab or n_ctx, d_model]
    labels = layout.labels()
    check_float32_range(weights, labels)
    bounds = _real_bounds(layout, plan, max_len)
    special_ids = np.array(
        [[len(vocab)] + [len(vocab) + 1] * max_len]
    )  # BOS, then PAD at every position
    reach = ReachBuilder(layout)
    # The BOS/PAD rows never see the input: the float32 weights so far, evaluated exactly (float64,
    # `run_residuals`' steps), one layer at a time (each layer's weights are final once gated).
    causal_run = config["attention_dir"] == "causal"
    # (W_E's BOS and PAD rows alone, ids from 0: rounding all |V| + 2 rows took seconds at 5,000)
    special_rows = {k: v[len(vocab) :] if k == "embed.W_E" else v for k, v in weights.items()}
    resid = embed_residual(
        _stored(special_rows, ("embed.", "pos_embed.")), special_ids - len(vocab)
    )
    for index, layer in enumerate(schedule.layers):
        specials = resid[0]
        shape = shapes[index]
        weights.update(_attention_arrays(index, layer.heads, layout, shape, specials, bounds))
        weights.update(_mlp_arrays(index, layer.mlps, layout, shape["d_mlp"]))
        check_float32_range(weights, labels, f"blocks.{index}.")
        # A layer's weights are final once built (its MLP's once gated): from then on only their
        # float32 values are kept, so one layer at a time is held in float64 (a 4,096-wide head
        # over 5,000 residual dims is 170 MB an array in float64).
        attn = _stored(weights, (f"blocks.{index}.attn.",))
        resid = resid + attention_residual(attn, index, resid, causal_run, shape.get("masks"))
        del attn
        mid = resid[0]
        _gate_specials(weights, index, mid, layout)
        mlp = _stored(weights, (f"blocks.{index}.mlp.",))
        resid = resid + mlp_residual(mlp, index, resid)
        del mlp
        for h, head in enumerate(layer.heads):
            reach.head(index, h, head)
        start = 0
        for spec in layer.mlps:
            reach.mlp(index, start, spec)
            start += spec.hidden
    weights.update(_unembed(plan.output, layout))
    check_float32_range(weights, labels, "unembed.")
    # what the embedding means at each token and position, from the intended (float64) rows
    built = record_inputs(
        reach.build(plan.output),
        weights["embed.W_E"],
        weights.get("pos_embed.W_pos"),
        layout.labels(),
    )
    # (the layers' arrays are float32 already: no second copy of them)
    weights = {k: v.astype(np.float32, copy=False) for k, v in weights.items()}
    metadata = model_metadata(config, schedule, layout, plan, vocab, max_len, name, source, tuples)
    # what the runtime reads besides the weights, pinned for the certifier (compiler.reach.Reach)
    built = dataclasses.replace(
        built,
        causal=causal_run,
        tokens=tuple(value_label(t) for t in metadata["vocab"]["tokens"]),
        decoding=decoding_digest(metadata["output"]),
        max_len=max_len,
    )
    metadata["reach"] = built.to_json()
    return CompiledModel(config, weights, metadata)


def sketch_model(
    schedule: Schedule,
    layout: Layout,
    plan: Plan,
    vocab: Sequence[Atom],
    max_len: int,
    causal: bool = False,
) -> Sketch:
    """The shape the assembled model will have (its `config`, residual and head widths), known
    before any weight of a layer is allocated."""
    widths = [_head_widths(layer.heads) for layer in schedule.layers]
    config = model_config(
        [_layer_shape(layer.heads, layer.mlps) for layer in schedule.layers],
        d_model=layout.d_model,
        n_ctx=max_len + 1,
        d_vocab=len(vocab) + 2,
        d_vocab_out=len(plan.output.values) if plan.output.is_categorical else 1,
        causal=causal,
    )
    if _positional_embedding(layout, plan, max_len) is None:  # (no token embedding: |V| x d_model)
        config["positional"] = False
    return Sketch(config, tuple(layout.labels()), tuple(max(w + [0]) for w in widths))


def _layer_shape(heads: Sequence[HeadSpec], mlps: Sequence[MLPSpec]) -> dict[str, Any]:
    """One layer's own sizes: its heads, their width, its hidden units (no padding to the
    widest layer: the file stores what the program uses), and its heads' masks if one has one."""
    widths = _head_widths(heads)
    if not widths:
        return {"n_heads": 0, "d_head": 0, "d_mlp": sum(m.hidden for m in mlps)}
    masks = {"masks": [h.mask for h in heads]} if any(h.mask for h in heads) else {}
    if all(h.domain.single for h in heads) and not any(h.exact_scores for h in heads):
        # Every head selects at most one key: its weight is exactly 1 whatever the scores' last
        # bits, so the width needed will do; the certifier bounds the scaling's rounding. (Exact
        # scores stay exact only where the scaling is: a power of 4, below.)
        d_head = max(widths)
    else:
        # A power of 4: sqrt(d_head) is a power of 2, so dividing scores by it (or scaling q
        # first, as fused kernels do) is exact, and keys of equal scores get equal weights.
        d_head = 4 ** math.ceil(math.log(max(widths), 4))
    return {"n_heads": len(heads), "d_head": d_head, "d_mlp": sum(m.hidden for m in mlps), **masks}


def _head_widths(heads: Sequence[HeadSpec]) -> list[int]:
    """The columns each head uses: its query/key columns and assembly's `bos` and `pad` ones, or
    its value/output columns."""
    return [max(_qk_width(h) + 2, h.W_O.shape[0]) for h in heads]


def _qk_width(head: HeadSpec) -> int:
    return max([len(v) for v in (*head.W_Q.values(), *head.W_K.values())] + [0])


# -- embeddings -----------------------------------------------------------------------------------


def _embeddings(
    layout: Layout, plan: Plan, vocab: Sequence[Atom], max_len: int
) -> dict[str, np.ndarray]:
    ix = layout.index
    w_e = np.zeros((len(vocab) + 2, layout.d_model))
    w_e[: len(vocab), ix[ONE]] = 1.0
    for t, dim in enumerate(layout.token_dims):  # none where nothing reads the tokens
        w_e[t, ix[dim]] = 1.0
    w_e[len(vocab), ix[ONE]] = w_e[len(vocab), ix[BOS]] = 1.0
    w_e[len(vocab) + 1, ix[PAD]] = 1.0
    w_pos = _positional_embedding(layout, plan, max_len)
    if w_pos is None:
        return {"embed.W_E": w_e}
    return {"embed.W_E": w_e, "pos_embed.W_pos": w_pos}


def _positional_embedding(layout: Layout, plan: Plan, max_len: int) -> np.ndarray | None:
    """`W_pos` [n_ctx, d_model], or None where no s-op reads a position (no block of zeros in the
    file)."""
    ix = layout.index
    w_pos = np.zeros((max_len + 1, layout.d_model))
    for dim in layout.index_dims:
        w_pos[int(dim.value) + 1, ix[dim]] = 1.0
    if layout.numeric_index is not None:
        w_pos[1:, ix[layout.numeric_index]] = np.arange(max_len)
    if layout.square_index is not None:
        w_pos[1:, ix[layout.square_index]] = np.arange(max_len) ** 2  # exact: (N-1)^2 < 2^24
    for dim in layout.positional:  # float32-exact by construction (compiler.positional)
        w_pos[1:, ix[dim]] = plan.positional[dim]
    return w_pos if w_pos.any() else None


def _real_bounds(layout: Layout, plan: Plan, max_len: int) -> np.ndarray:
    """|value| bound of every residual dim at real positions, with slack for float32 noise."""
    bound = np.ones(layout.d_model)
    bound[layout.index[BOS]] = bound[layout.index[PAD]] = 0.0
    if layout.numeric_index is not None:
        bound[layout.index[layout.numeric_index]] = max_len - 1
    if layout.square_index is not None:
        bound[layout.index[layout.square_index]] = (max_len - 1) ** 2
    for dim, b in plan.dim_bounds.items():
        if dim in layout.index:
            bound[layout.index[dim]] = b
    return bound * (1 + 1e-3) + 1e-3 * (bound > 0)


# -- attention ------------------------------------------------------------------------------------


def _rows(mapping: dict[Dim, np.ndarray] | object, layout: Layout, out: np.ndarray) -> np.ndarray:
    """`mapping`'s rows added into `out` (zeros, [d_model, d_head]: a head's slice of the layer's
    array, filled where it lies rather than copied there)."""
    for dim, vec in mapping.items():  # type: ignore[attr-defined]
        out[layout.index[dim], : len(vec)] += vec
    return out


def _attention_arrays(
    index: int,
    heads: Sequence[HeadSpec],
    layout: Layout,
    shape: dict[str, int],  # this layer's n_heads and d_head
    specials: np.ndarray,  # [1 + max_len, d_model]: BOS, then PAD at positions 1..max_len
    bounds: np.ndarray,  # [d_model]
) -> dict[str, np.ndarray]:
    d_model, n_heads, d_head = layout.d_model, shape["n_heads"], shape["d_head"]
    w_q, w_k = (
        np.zeros((n_heads, d_model, d_head)),
        np.zeros((n_heads, d_model, d_head)),
    )
    w_v, w_o = (
        np.zeros((n_heads, d_model, d_head)),
        np.zeros((n_heads, d_head, d_model)),
    )
    one, bos, pad = layout.index[ONE], layout.index[BOS], layout.index[PAD]
    for h, head in enumerate(heads):
        width = _qk_width(head)
        q, k = _rows(head.W_Q, layout, w_q[h]), _rows(head.W_K, layout, w_k[h])
        # The BOS key's intended reading on the builder's columns: 0, or where the builder puts
        # BOS among the keys (numerical addressing: a virtual index -1), its own `bos` row.
        k_intended = k[bos].copy()  # [d_head]
        r_bos, r_pads = specials[0], specials[1:]
        k_bos = r_bos @ k  # [d_head]
        k_pads = r_pads @ k  # [max_len, d_head]
        k_real_max = np.abs(k).T @ bounds  # [d_head]: bound of a real key's reading per column
        q_real_max = np.abs(q).T @ bounds
        # Real queries never attend to PAD: PAD scores below the BOS score, which is always present.
        big_pad = (
            float(np.max(np.abs(k_pads) @ q_real_max, initial=0.0))
            + abs(head.bos_score)
            + float(np.abs(k_intended) @ q_real_max)
            + SOFTMAX_GAP
        )
        # a multiple of 2^8: a real query's row stays on matching's coarse grid (multiples of
        # c/2, see addressing.Match), where its scores are exact sums
        big_pad = float(math.ceil(big_pad / PAD_GRID) * PAD_GRID)
        # BOS and PAD queries attend only to BOS.
        q_bos = r_bos @ q
        bos_other = (
            max(
                float(np.abs(q_bos) @ k_real_max),
                float(np.max(k_pads @ q_bos, initial=-np.inf)) - big_pad,
            )
            - head.bos_score
            - float(q_bos @ k_intended)
        )
        q_pads = r_pads @ q
        pad_other = max(
            float(np.max(np.abs(q_pads) @ k_real_max, initial=0.0)),
            float(np.max(q_pads @ k_pads.T, initial=0.0)),
        ) - float(np.min(q_pads @ k_intended, initial=0.0))
        big = float(math.ceil(max(bos_other, pad_other, 0.0) + SOFTMAX_GAP))
        c_bos, c_pad = width, width + 1
        # The BOS key reads `k_intended` on the builder's columns: its residual (which carries
        # whatever the MLPs computed at BOS) is cancelled through the `bos` row, which is 0 at
        # every other key.
        k[bos, :width] -= k_bos[:width] - k_intended[:width]
        q[one, c_bos] += head.bos_score
        q[bos, c_bos] += big
        q[pad, c_bos] += big
        k[bos, c_bos] = 1.0
        q[one, c_pad] = -big_pad
        k[pad, c_pad] = 1.0
        k *= math.sqrt(d_head)  # (k is w_k[h]; q is w_q[h])
        d_v = head.W_O.shape[0]
        _rows(head.W_V, layout, w_v[h])
        # The BOS key's value must be exactly the builder's `bos` row (the aggregate's default):
        # cancel what the rest of the BOS residual contributes through the value columns.
        w_v[h][bos] -= r_bos @ w_v[h] - w_v[h][bos]
        for j, dim in enumerate(head.out_dims):
            w_o[h, :d_v, layout.index[dim]] += head.W_O[:, j]
    prefix = f"blocks.{index}.attn."
    return {
        prefix + "W_Q": w_q,
        prefix + "W_K": w_k,
        prefix + "W_V": w_v,
        prefix + "W_O": w_o,
        prefix + "b_Q": np.zeros((n_heads, d_head)),
        prefix + "b_K": np.zeros((n_heads, d_head)),
        prefix + "b_V": np.zeros((n_heads, d_head)),
        prefix + "b_O": np.zeros(d_model),
    }


# -- MLP and unembedding --------------------------------------------------------------------------


def _mlp_arrays(
    index: int, mlps: Sequence[MLPSpec], layout: Layout, d_mlp: int
) -> dict[str, np.ndarray]:
    w_in, b_in = np.zeros((layout.d_model, d_mlp)), np.zeros(d_mlp)
    w_out, b_out = np.zeros((d_mlp, layout.d_model)), np.zeros(layout.d_model)
    start = 0
    for spec in mlps:
        stop = start + spec.hidden
        for dim, vec in spec.W_in.items():
            w_in[layout.index[dim], start:stop] += vec
        b_in[start:stop] = spec.b_in
        cols = [layout.index[dim] for dim in spec.out_dims]
        rows = spec.out_rows
        if len(set(cols)) == len(cols):
            # distinct columns: each entry once, 0 + W_out as below (a column at a time, a
            # one-hot's 4,969 columns over 9,937 units strode the whole array 4,969 times); from
            # the entries where W_out was never made dense (its zeros add +0.0 to +0.0)
            if isinstance(rows, OutRows) and "W_out" not in vars(spec):
                w_out[start + rows.units, np.asarray(cols, dtype=np.int64)[rows.columns]] += (
                    rows.values
                )
            else:
                w_out[start:stop, cols] += spec.W_out
        else:
            for j, col in enumerate(cols):
                w_out[start:stop, col] += spec.W_out[:, j]
        start = stop
    prefix = f"blocks.{index}.mlp."
    return {
        prefix + "W_in": w_in,
        prefix + "b_in": b_in,
        prefix + "W_out": w_out,
        prefix + "b_out": b_out,
    }


def _stored(weights: dict[str, np.ndarray], prefixes: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The weights under `prefixes` as the file stores them (float32), in float64; `weights`
    keeps them in float32 from here on (the same values the end of assembly would round to)."""
    out = {}
    for k in [k for k in weights if k.startswith(prefixes)]:
        weights[k] = weights[k].astype(np.float32)  # (one array at a time: the float64 one goes)
        out[k] = weights[k].astype(np.float64)
    return out


def _gate_specials(
    weights: dict[str, np.ndarray], index: int, specials: np.ndarray, layout: Layout
) -> None:
    """Switch every hidden unit off at BOS and PAD: their MLP outputs are never needed (BOS's values
    are cancelled to the defaults), and a step bank fed their residuals would compute huge
    garbage that grows layer after layer (up to float32 overflow). specials: [1 + N, d_model]
    after this layer's attention; the `bos`/`pad` rows get -G, G above every unit's input there."""
    w_in = weights[f"blocks.{index}.mlp.W_in"]
    b_in = weights[f"blocks.{index}.mlp.b_in"]
    pre = specials @ w_in.astype(np.float32).astype(np.float64) + b_in  # [1 + N, d_mlp]
    size = np.abs(specials) @ np.abs(w_in) + np.abs(b_in)
    gate = np.ceil(np.maximum(pre.max(axis=0), 0.0) + 1e-3 * size.max(axis=0) + 1.0)
    w_in[layout.index[BOS]] -= gate
    w_in[layout.index[PAD]] -= gate


def _unembed(output: Encoded, layout: Layout) -> dict[str, np.ndarray]:
    columns = output.one_hot if output.is_categorical else (output.number,)
    w_u = np.zeros((layout.d_model, len(columns)))
    for c, terms in enumerate(columns):
        for dim, coef in terms:
            w_u[layout.index[dim], c] += coef
    return {"unembed.W_U": w_u, "unembed.b_U": np.zeros(len(columns))}

"""An adversarial-rounding evaluator for compiled models (tests only).

Every dot product and sum of the forward pass is computed exactly (float64 on the float32 weights)
and then moved the way float32 may move it under SOME evaluation order:

- at most two non-zero products: float32 rounds each product and adds them once, whatever the
  order (what the certifier's band steps rely on);
- products on one dyadic grid whose sum stays within 2^24 grid steps: exact in any order;
- otherwise: the exact value plus or minus gamma_n * sum |products| (the worst any order can do),
  with a random sign per element (`rng`).

The bias is added after the reduction, as the runtime's `x @ W + b` does. Every intermediate is
stored in float32, and softmax runs in float32, as the runtime's do. A model
whose certificate holds decodes to the same values here as in exact arithmetic.
"""

from __future__ import annotations

import numpy as np

from transformer.model import seen_keys

U = 2.0**-24


def _gamma(n: np.ndarray) -> np.ndarray:
    n = np.maximum(n.astype(np.float64), 1.0)
    return n * U / (1 - n * U)


def _dyadic(v: np.ndarray, limit: int = 40) -> np.ndarray:
    out = np.full(v.shape, 99)
    for k in range(limit, -1, -1):
        scaled = v * 2.0**k
        out = np.where(scaled == np.round(scaled), k, out)
    return out


def adversarial_dot(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """x [..., d] @ w [d, c], moved as float32 may move a reduction, then + b [c] (the runtime's
    formula: a matrix product, then an elementwise bias add). Returns float32."""
    f32 = np.float32
    prods32 = x.astype(f32)[..., :, None] * w.astype(f32)  # float32 products: rounded
    prods = x.astype(np.float64)[..., :, None] * w.astype(np.float64)
    exact = prods.sum(axis=-2)
    nonzero = (prods != 0).sum(axis=-2)
    size = np.abs(prods).sum(axis=-2)
    grid = _dyadic(prods).max(axis=-2, initial=0)  # a layer may have no units (format 2)
    on_grid = (grid <= 60) & (size * 2.0 ** np.minimum(grid, 60) < 2.0**24)
    sign = rng.choice(np.array([-1.0, 1.0]), size=exact.shape)
    moved = exact + sign * _gamma(nonzero) * size
    # at most two non-zero products: one float32 addition of two rounded products, in any order
    two = prods32.sum(axis=-2, dtype=f32)
    dot = np.where(nonzero <= 2, two, np.where(on_grid, exact, moved).astype(f32))
    return (dot.astype(f32) + np.asarray(b, dtype=f32)).astype(f32)


def adversarial_logits(
    weights: dict[str, np.ndarray],
    config: dict,
    ids: np.ndarray,
    rng: np.random.Generator,
    trace: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Logits [batch, pos, d_vocab_out] of the compiled model on ids [batch, pos]; `trace` gets the
    residual stream after every sublayer."""
    f32 = np.float32
    n_pos = ids.shape[1]
    resid = weights["embed.W_E"][ids].astype(f32)
    if "pos_embed.W_pos" in weights:  # absent where the program reads no position
        resid = (resid + weights["pos_embed.W_pos"][:n_pos][None]).astype(f32)
    causal = config.get("attention_dir") == "causal"
    shapes = config.get("layers") or []
    for layer in range(int(config["n_layers"])):
        p = f"blocks.{layer}.attn."
        masks = tuple(shapes[layer].get("masks", [])) if shapes else ()
        # [heads, q, k] (one row for every head when none is masked): the runtime's mask rule
        seen = seen_keys(masks, n_pos, causal)
        out = np.zeros_like(resid, dtype=np.float64)
        d_head = weights[p + "W_Q"].shape[2]  # this layer's own (format 2)
        for h in range(weights[p + "W_Q"].shape[0]):
            q = adversarial_dot(resid, weights[p + "W_Q"][h], weights[p + "b_Q"][h], rng)
            k = adversarial_dot(resid, weights[p + "W_K"][h], weights[p + "b_K"][h], rng)
            v = adversarial_dot(resid, weights[p + "W_V"][h], weights[p + "b_V"][h], rng)
            scores = np.stack(
                [
                    adversarial_dot(q[bi], k[bi].T, np.zeros(k.shape[1]), rng)
                    for bi in range(q.shape[0])
                ]
            ) / f32(np.sqrt(d_head))  # [batch, q, k]
            if seen is not None:
                scores = np.where(seen[h if masks else 0].numpy(), scores, -np.inf)
            scores = (scores - scores.max(axis=-1, keepdims=True)).astype(f32)
            e = np.exp(scores).astype(f32)
            pattern = (e / e.sum(axis=-1, keepdims=True, dtype=f32)).astype(f32)
            z = np.stack(
                [
                    adversarial_dot(pattern[bi], v[bi], np.zeros(v.shape[-1]), rng)
                    for bi in range(v.shape[0])
                ]
            )  # [batch, pos, d_head]
            out += adversarial_dot(z, weights[p + "W_O"][h], np.zeros(resid.shape[-1]), rng)
        resid = (resid + (out + weights[p + "b_O"]).astype(f32)).astype(f32)
        if trace is not None:
            trace.append(resid)
        m = f"blocks.{layer}.mlp."
        pre = adversarial_dot(resid, weights[m + "W_in"], weights[m + "b_in"], rng)
        post = np.maximum(pre, f32(0))
        resid = (
            resid + adversarial_dot(post, weights[m + "W_out"], weights[m + "b_out"], rng)
        ).astype(f32)
        if trace is not None:
            trace.append(resid)
    return adversarial_dot(resid, weights["unembed.W_U"], weights["unembed.b_U"], rng)

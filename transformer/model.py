"""The compiled-model transformer: TransformerLens's block without LayerNorm, in one readable file.

    resid_pre  = W_E[ids] + W_pos[pos]              # block 0 (no W_pos: config.positional false)
    resid_mid  = resid_pre + attn(resid_pre)
    resid_post = resid_mid + relu(resid_mid @ W_in + b_in) @ W_out + b_out
    logits     = resid_post(last block) @ W_U + b_U

Parameter names are the file's tensor names (`blocks.0.attn.W_Q`, ...), so `load_state_dict` takes
the file's tensors as they are. A head may carry a mask (format version 3, `seen_keys`): it sees
only the keys whose position compares with the query's as the mask says, and always BOS; a causal
model sees no later key. There is no padding mask: the compiled weights give PAD keys a score
so low that float32 softmax weighs them exactly 0, as in any TransformerLens-compatible runtime.
Products are IEEE float32 during `forward` whatever TF32, matmul-precision or autocast setting the
process has (transformer/precision.py): the certificate bounds float32 rounding only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import torch
from torch import Tensor, nn

from transformer.config import LayerShape, ModelConfig
from transformer.hooks import Cache, HookFn, RunHooks, no_hooks
from transformer.precision import ieee_float32_call

# `hooks(name, value)` at each hook point: the value the forward pass goes on with (a hook may
# replace it; transformer/hooks.py), recorded where a cache is kept
Hooks = Callable[[str, Tensor], Tensor]


def _param(*shape: int) -> nn.Parameter:
    # Compiled weights are data, not trained: no gradients.
    return nn.Parameter(torch.zeros(*shape, dtype=torch.float32), requires_grad=False)


class Embed(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.W_E = _param(cfg.d_vocab, cfg.d_model)

    def forward(self, ids: Tensor) -> Tensor:
        return self.W_E[ids]  # [batch, pos] -> [batch, pos, d_model]


class PosEmbed(nn.Module):
    """`W_pos[pos]`; a model whose program reads no position (config.positional false) has no
    W_pos and embeds every position to zero."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.W_pos = _param(cfg.n_ctx, cfg.d_model) if cfg.positional else None
        # Without W_pos, the zero embedding: a buffer (not in the state dict), so that it moves
        # and changes dtype with the model; zeros made at each call would take torch's default
        # dtype (float64 after `torch.set_default_dtype`), not the weights'. On the CPU even while
        # the model is built on the meta device (io._build): a buffer holds data.
        zero = torch.zeros(1, 1, cfg.d_model, dtype=torch.float32, device="cpu")
        self.register_buffer("zero", None if cfg.positional else zero, persistent=False)

    def forward(self, ids: Tensor) -> Tensor:
        batch, n_pos = ids.shape
        if self.W_pos is None:
            return self.zero.expand(batch, n_pos, -1)
        return self.W_pos[:n_pos].unsqueeze(0).expand(batch, -1, -1)  # [batch, pos, d_model]


def seen_keys(masks: tuple[str, ...], n_ctx: int, causal: bool = False) -> Tensor | None:
    """[heads, query, key] bool, True where a query may attend to a key: the key's position
    compared with the query's by the head's mask (config.HEAD_MASKS; "" sees every key), and
    with `causal` no key after the query. BOS (key 0) is seen by every query. None when every
    head sees every key."""
    if not any(masks) and not causal:
        return None
    # on the CPU even while the model is built on the meta device (io._build): a buffer holds data
    pos = torch.arange(n_ctx, device="cpu")
    key, query = pos[None, :], pos[:, None]  # [1, key], [query, 1]
    relation = {
        "": lambda: torch.ones(n_ctx, n_ctx, dtype=torch.bool, device="cpu"),
        "<": lambda: key < query,
        "<=": lambda: key <= query,
        "==": lambda: key == query,
        ">=": lambda: key >= query,
        ">": lambda: key > query,
        "!=": lambda: key != query,
    }  # each built only where a head has it
    seen = torch.stack([relation[m]() for m in masks or ("",)])  # [heads, query, key]
    if causal:
        seen = seen & (key <= query)
    return seen | (key == 0)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, shape: LayerShape, name: str) -> None:
        super().__init__()
        self.name = name  # hook prefix, e.g. "blocks.0.attn"
        # Which keys each head sees (per-head masks, causal attention), or None: every key. A
        # buffer (moved with the model), not a weight (not in the state dict), built for the
        # longest input run so far (`_seen`), not for n_ctx: a file without W_pos states n_ctx in
        # its header alone, and `max_len` 10**6 there asked for a terabyte at load.
        self.masks = tuple(shape.mask(h) for h in range(shape.n_heads))
        self.causal = cfg.attention_dir == "causal"
        self.register_buffer(
            "seen", seen_keys(self.masks, min(cfg.n_ctx, 64), self.causal), persistent=False
        )
        n_heads, d_head = shape.n_heads, shape.d_head  # this layer's own (format version 2)
        self.scale = math.sqrt(d_head) if d_head > 0 else 1.0
        self.W_Q = _param(n_heads, cfg.d_model, d_head)
        self.W_K = _param(n_heads, cfg.d_model, d_head)
        self.W_V = _param(n_heads, cfg.d_model, d_head)
        self.b_Q = _param(n_heads, d_head)
        self.b_K = _param(n_heads, d_head)
        self.b_V = _param(n_heads, d_head)
        self.W_O = _param(n_heads, d_head, cfg.d_model)
        self.b_O = _param(cfg.d_model)

    def forward(self, x: Tensor, hooks: Hooks = no_hooks) -> Tensor:
        # x: [batch, pos, d_model]
        name = self.name
        q = torch.einsum("bpm,hmd->bphd", x, self.W_Q) + self.b_Q  # [batch, pos, head, d_head]
        q = hooks(f"{name}.hook_q", q)
        k = hooks(f"{name}.hook_k", torch.einsum("bpm,hmd->bphd", x, self.W_K) + self.b_K)
        v = hooks(f"{name}.hook_v", torch.einsum("bpm,hmd->bphd", x, self.W_V) + self.b_V)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.scale  # [batch, head, q, k]
        if self.seen is not None:
            # a key the head does not see (a per-head mask, or after the query in a causal
            # model): weight exactly 0
            scores = scores.masked_fill(~self._seen(x.shape[1]), float("-inf"))
        scores = hooks(f"{name}.hook_attn_scores", scores)
        # Standard softmax subtracts the row max, so a score 110 below it underflows to exactly 0
        # (in float32, the format's dtype; a float64 copy of the model computes in float64).
        pattern = hooks(f"{name}.hook_pattern", torch.softmax(scores, dim=-1))  # [b, head, q, k]
        z = hooks(f"{name}.hook_z", torch.einsum("bhqk,bkhd->bqhd", pattern, v))  # [b, q, h, d]
        return torch.einsum("bqhd,hdm->bqm", z, self.W_O) + self.b_O  # [batch, q, d_model]

    def _seen(self, n_pos: int) -> Tensor:
        """`seen [heads, n_pos, n_pos]`, the buffer grown (on its device) where it is smaller."""
        seen = self.seen
        if seen.shape[-1] < n_pos:
            grown = seen_keys(self.masks, n_pos, self.causal)
            assert grown is not None  # some head is masked, or the model is causal
            seen = self.seen = grown.to(seen.device)
        return seen[:, :n_pos, :n_pos]


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig, shape: LayerShape, name: str) -> None:
        super().__init__()
        self.name = name  # hook prefix, e.g. "blocks.0.mlp"
        self.W_in = _param(cfg.d_model, shape.d_mlp)
        self.b_in = _param(shape.d_mlp)
        self.W_out = _param(shape.d_mlp, cfg.d_model)
        self.b_out = _param(cfg.d_model)

    def forward(self, x: Tensor, hooks: Hooks = no_hooks) -> Tensor:
        pre = hooks(f"{self.name}.hook_pre", x @ self.W_in + self.b_in)  # [batch, pos, d_mlp]
        post = hooks(f"{self.name}.hook_post", torch.relu(pre))  # [batch, pos, d_mlp]
        return post @ self.W_out + self.b_out  # [batch, pos, d_model]


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, index: int) -> None:
        super().__init__()
        self.name = f"blocks.{index}"
        shape = cfg.layer(index)
        self.attn = Attention(cfg, shape, f"{self.name}.attn")
        self.mlp = MLP(cfg, shape, f"{self.name}.mlp")

    def forward(self, resid_pre: Tensor, hooks: Hooks = no_hooks) -> Tensor:
        name = self.name
        resid_pre = hooks(f"{name}.hook_resid_pre", resid_pre)  # [batch, pos, d_model]
        attn_out = hooks(f"{name}.hook_attn_out", self.attn(resid_pre, hooks))
        resid_mid = hooks(f"{name}.hook_resid_mid", resid_pre + attn_out)
        mlp_out = hooks(f"{name}.hook_mlp_out", self.mlp(resid_mid, hooks))
        return hooks(f"{name}.hook_resid_post", resid_mid + mlp_out)


class Unembed(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.W_U = _param(cfg.d_model, cfg.d_vocab_out)
        self.b_U = _param(cfg.d_vocab_out)

    def forward(self, resid: Tensor) -> Tensor:
        return resid @ self.W_U + self.b_U  # [batch, pos, d_vocab_out]


class Transformer(nn.Module):
    """`forward(ids [batch, pos]) -> logits [batch, pos, d_vocab_out]`; float32, on any device."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = Embed(cfg)
        self.pos_embed = PosEmbed(cfg)
        self.blocks = nn.ModuleList(Block(cfg, index) for index in range(cfg.n_layers))
        self.unembed = Unembed(cfg)

    def forward(self, ids: Tensor, hooks: Hooks = no_hooks) -> Tensor:
        if ids.ndim != 2 or ids.shape[1] > self.cfg.n_ctx:
            raise ValueError(
                f"ids must be [batch, pos] with pos <= n_ctx = {self.cfg.n_ctx}, "
                f"got {tuple(ids.shape)}"
            )
        self.check_dtype()
        # the certificate bounds float32 products: TF32, bfloat16 or autocast ones are off for
        # this call (computed again where another thread reduced them during it); hooks inside
        return ieee_float32_call(lambda: self._forward(ids, hooks), self.embed.W_E.device.type)

    def _forward(self, ids: Tensor, hooks: Hooks) -> Tensor:
        embed = hooks("hook_embed", self.embed(ids))  # [batch, pos, d_model]
        pos_embed = hooks("hook_pos_embed", self.pos_embed(ids))  # [batch, pos, d_model]
        resid = embed + pos_embed
        for block in self.blocks:
            resid = block(resid, hooks)
        return self.unembed(resid)

    def check_dtype(self) -> None:
        """Refuse weights narrower than float32, or of two dtypes: `model.model.to(torch.bfloat16)`
        converts this module in place, past CompiledTransformer.to's refusal (a bfloat16 sort
        decoded every input wrongly, without an error)."""
        # every tensor, not W_E's alone: a bias converted by itself (`blocks[0].mlp.b_in`) is
        # promoted back to float32 where it is added, its bfloat16 rounding kept (a compiled sort
        # then decoded wrongly without an error); a converted matrix fails in its product
        first = self.embed.W_E.dtype
        if first in (torch.float32, torch.float64) and all(
            t.dtype is first or not (t.is_floating_point() or t.is_complex())
            for t in itertools.chain(self.parameters(), self.buffers())
        ):  # (the common case, without the names: this runs at every forward)
            return
        for name, tensor in itertools.chain(self.named_parameters(), self.named_buffers()):
            dtype = tensor.dtype
            if not (dtype.is_floating_point or dtype.is_complex):  # index and mask buffers
                continue
            which = "weights are" if name == "embed.W_E" else f"weight {name} is"
            if dtype not in (torch.float32, torch.float64):
                narrower = dtype.is_floating_point and torch.finfo(dtype).bits < 32
                raise ValueError(
                    f"the model's {which} {dtype}, {'narrower than' if narrower else 'not'} "
                    "float32, whose rounding the model's certificate bounds: its outputs would "
                    "be wrong without an error (load the file again; float32 or float64 only)"
                )
            if dtype != first:  # float32 and float64 mixed: torch's products refuse them
                raise ValueError(
                    f"the model's {which} {dtype}, its embedding {first}: give every weight "
                    "one dtype (model.to(dtype=torch.float64) or load the file again)"
                )

    def run_with_cache(self, ids: Tensor) -> tuple[Tensor, Cache]:
        """Logits and every activation, under TransformerLens's hook names."""
        cache: Cache = {}
        logits = self.forward(ids, RunHooks({}, cache))
        return logits, cache

    def run_with_hooks(
        self, ids: Tensor, fns: dict[str, list[HookFn]], cache: Cache | None = None
    ) -> Tensor:
        """Logits with the hook functions `fns` (per hook name, transformer/hooks.py) applied,
        every activation recorded in `cache` as the hooks left it, where one is given."""
        return self.forward(ids, RunHooks(fns, cache))

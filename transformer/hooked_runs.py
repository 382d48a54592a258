"""Runs with forward hooks and activation caches (`CompiledTransformer.run_with_hooks`,
`run_with_cache`), as functions of the plain `Transformer` and the call's arguments.

    logits = run_with_hooks(model, ids, [("blocks.0.hook_resid_post", fn)])
    logits, cache = run_with_cache(model, ids, names_filter=lambda name: "pattern" in name)

Hook names and their resolution are transformer/hooks.py's; the cache type is
transformer/activations.py's; docs/runtime.md ("The model and its cache", "Interventions").
"""

from __future__ import annotations

import torch
from torch import Tensor

from transformer.activations import ActivationCache, NamesFilter, chosen_names
from transformer.arguments import checked_ids
from transformer.errors import ModelInputError
from transformer.hooks import Cache, FwdHooks, hook_names, resolve
from transformer.model import Transformer


class HookedLogits(Tensor):
    """The logits of a run with forward hooks. They are a tensor like any other, and stay one of
    these through torch operations (slicing, `clone`, `cpu`, `cat` with others), so that `decode`
    can tell them from an unhooked run's: it then refuses an undecided position, as `run_hooked`
    does, where the weights alone never leave one on an input the program has a value for."""


def run_with_hooks(
    model: Transformer, ids: Tensor, fwd_hooks: FwdHooks = (), cache: Cache | None = None
) -> Tensor:
    """Logits of `model` on `ids` with `fwd_hooks` applied for this call only (`HookedLogits`
    where any are given); each activation recorded in `cache` where given. Hooks are resolved
    (and refused) before the ids are checked."""
    fns = resolve(fwd_hooks, hook_names(model.cfg.n_layers))
    ids = checked_ids(ids, model.cfg, model.embed.W_E.device)
    with torch.inference_mode():
        logits = model.run_with_hooks(ids, fns, cache)
        return logits.as_subclass(HookedLogits) if fns else logits


def run_with_cache(
    model: Transformer,
    ids: Tensor,
    fwd_hooks: FwdHooks = (),
    names_filter: NamesFilter = None,
    remove_batch_dim: bool = False,
) -> tuple[Tensor, ActivationCache]:
    """Logits and the activations `names_filter` chooses (every one: None), after `fwd_hooks`;
    `remove_batch_dim` drops the batch dimension of a one-row batch."""
    names = hook_names(model.cfg.n_layers)
    kept = chosen_names(names_filter, names)  # refused before the run
    if remove_batch_dim and (ids.ndim != 2 or ids.shape[0] != 1):
        # TransformerLens keeps row 0 of any batch, silently dropping the others
        raise ModelInputError(
            f"remove_batch_dim takes a batch of one row, got ids of shape {list(ids.shape)}"
        )
    everything: Cache = {}
    logits = run_with_hooks(model, ids, fwd_hooks, everything)
    cache = ActivationCache(names)
    cache.update(
        (name, everything[name][0] if remove_batch_dim else everything[name]) for name in kept
    )
    return logits, cache

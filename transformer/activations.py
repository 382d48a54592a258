"""The cache `run_with_cache` returns, read as a TransformerLens user reads one.

    logits, cache = model.run_with_cache(ids, names_filter=lambda name: name.endswith("pattern"))
    cache["blocks.1.attn.hook_pattern"]     # a hook name
    cache["pattern", 1]                     # TransformerLens's shorthand (utils.get_act_name)

A name the cache lacks is a `KeyError` naming the close ones: a typo (`hook_patern`) or a name
left out by `names_filter` says so, rather than echoing the key alone.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

from torch import Tensor

from transformer.errors import ModelInputError

NamesFilter = str | Sequence[str] | Callable[[str], bool] | None

# TransformerLens's short names (utils.get_act_name) and where each lies in a block
_IN_BLOCK = {
    **{name: f"hook_{name}" for name in ("resid_pre", "resid_mid", "resid_post")},
    **{name: f"hook_{name}" for name in ("attn_out", "mlp_out")},
    **{name: f"attn.hook_{name}" for name in ("q", "k", "v", "z", "pattern", "attn_scores")},
    "attn": "attn.hook_pattern",
    "scores": "attn.hook_attn_scores",
    "pre": "mlp.hook_pre",
    "post": "mlp.hook_post",
}


class ActivationCache(dict[str, Tensor]):
    """A dict of hook name -> activation that also takes `(short name, layer)` keys and says
    which names it holds when one is missing."""

    def __init__(self, names: Sequence[str] = ()) -> None:
        super().__init__()
        self._names = tuple(names)  # every hook name of the model (for the KeyError)

    def __missing__(self, key: Any) -> Tensor:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], int):
            name, layer = key
            full = _IN_BLOCK.get(name) if isinstance(name, str) else None
            if full is not None and f"blocks.{layer}.{full}" in self:
                return self[f"blocks.{layer}.{full}"]
        if isinstance(key, str) and f"hook_{key}" in self:  # ("embed" as TransformerLens's)
            return self[f"hook_{key}"]
        text = key if isinstance(key, str) else repr(key)
        close = difflib.get_close_matches(str(text), list(self), n=3, cutoff=0.6)
        if isinstance(key, str) and key in self._names:
            why = "not recorded (run_with_cache's names_filter left it out)"
        else:
            why = "not a hook name of this model (docs/runtime.md lists them)"
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"{text}: {why}{hint}")


def chosen_names(names_filter: NamesFilter, names: tuple[str, ...]) -> tuple[str, ...]:
    """The hook names `names_filter` keeps, as TransformerLens reads it (None: all; a name; a
    list of names; a predicate); an unknown name, or a filter keeping none, is refused."""
    if names_filter is None:
        return names
    if isinstance(names_filter, str):
        names_filter = [names_filter]
    if callable(names_filter):
        kept = tuple(name for name in names if names_filter(name))
        if not kept:  # a filter for another model's names would record nothing, silently
            raise ModelInputError(
                f"names_filter chooses none of the model's {len(names)} hook names "
                f"({names[0]} ... {names[-1]})"
            )
        return kept
    if not isinstance(names_filter, Sequence) or not all(
        isinstance(name, str) for name in names_filter
    ):
        raise ModelInputError(
            "names_filter must be a hook name, a list of them or a predicate name -> bool, "
            f"got {type(names_filter).__name__}"
        )
    for name in names_filter:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ModelInputError(f"names_filter: unknown hook name {name!r}{hint}")
    return tuple(name for name in names if name in set(names_filter))

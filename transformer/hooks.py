"""Forward hooks for one run, with TransformerLens's semantics (`run_with_hooks`).

    logits = model.run_with_hooks(ids, fwd_hooks=[("blocks.0.hook_resid_post", fn)])
    def fn(value, hook):           # hook.name is the hook's name
        value[:, 2, 5] = 0.0       # edit in place and return None, or return a new tensor
        return value

A hook is `(name, fn)` where `name` is a hook name (`hook_names`) or a predicate `name -> bool`
choosing several. Hooks are an argument of one call, never registered on the modules: none can
outlive the call, whatever a hook raises. Several hooks at one name run in the order given, each
seeing the value the previous one left. The precision guard (transformer/precision.py) is around
the whole forward pass, hooks included.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from torch import Tensor

from transformer.errors import ModelInputError

Cache = dict[str, Tensor]

_ATTN = ("hook_q", "hook_k", "hook_v", "hook_attn_scores", "hook_pattern", "hook_z")


@dataclass(frozen=True)
class HookPoint:
    """What a hook function receives beside the value: `hook.name`, as in TransformerLens."""

    name: str

    def layer(self) -> int:
        """The block index in the name (`blocks.3.attn.hook_z` -> 3)."""
        found = re.match(r"blocks\.(\d+)\.", self.name)
        if found is None:
            raise ValueError(f"hook {self.name} is not inside a block")
        return int(found.group(1))


HookFn = Callable[[Tensor, HookPoint], Tensor | None]
NameFilter = str | Callable[[str], bool]
FwdHooks = Sequence[tuple[NameFilter, HookFn]]


def hook_names(n_layers: int) -> tuple[str, ...]:
    """Every hook name of a model of `n_layers` blocks, in the order the forward pass meets them."""
    names = ["hook_embed", "hook_pos_embed"]
    for layer in range(n_layers):
        block = f"blocks.{layer}"
        names.append(f"{block}.hook_resid_pre")
        names.extend(f"{block}.attn.{hook}" for hook in _ATTN)
        names.extend(f"{block}.{hook}" for hook in ("hook_attn_out", "hook_resid_mid"))
        names.extend(f"{block}.mlp.{hook}" for hook in ("hook_pre", "hook_post"))
        names.extend(f"{block}.{hook}" for hook in ("hook_mlp_out", "hook_resid_post"))
    return tuple(names)


def resolve(fwd_hooks: FwdHooks, names: tuple[str, ...]) -> dict[str, list[HookFn]]:
    """The hook functions per name, in the order given; a `ModelInputError` for an unknown
    name (with the close ones), a predicate that chooses no name, or a malformed entry."""
    if isinstance(fwd_hooks, str | bytes | dict) or not isinstance(fwd_hooks, Iterable):
        raise ModelInputError(
            f"fwd_hooks must be a list of (name, fn) pairs, got {type(fwd_hooks).__name__}"
        )
    fwd_hooks = list(fwd_hooks)  # any iterable, as TransformerLens takes it (a generator too)
    known = set(names)
    chosen: dict[str, list[HookFn]] = {}
    for index, entry in enumerate(fwd_hooks):
        if not isinstance(entry, tuple | list) or len(entry) != 2 or not callable(entry[1]):
            raise ModelInputError(
                f"fwd_hooks[{index}] must be a (name, fn) pair with a callable fn(value, hook)"
            )
        name, fn = entry
        if isinstance(name, str):
            if name not in known:
                raise ModelInputError(_unknown(name, names))
            matched = [name]
        elif callable(name):
            matched = [candidate for candidate in names if name(candidate)]
            if not matched:  # a filter for another model's layers would patch nothing, silently
                raise ModelInputError(
                    f"the name filter of fwd_hooks[{index}] chooses none of the model's "
                    f"{len(names)} hook names ({names[0]} ... {names[-1]})"
                )
        else:
            raise ModelInputError(
                f"fwd_hooks[{index}]'s name must be a hook name or a predicate name -> bool, "
                f"got {type(name).__name__}"
            )
        for hook in matched:
            chosen.setdefault(hook, []).append(fn)
    return chosen


def _unknown(name: str, names: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    last = (len(names) - 2) // 13 - 1  # 13 hooks per block
    blocks = f"blocks.0 to blocks.{last}" if last >= 0 else "no blocks"
    return (
        f"unknown hook name {name!r}{hint} (this model has hook_embed, hook_pos_embed and "
        f"{blocks}; docs/runtime.md lists the names)"
    )


class RunHooks:
    """One forward pass's hooks and cache: `hooks(name, value)` runs the hook functions at `name`
    and records the value they leave in the cache (when there is one), which it returns for the
    forward pass to go on with."""

    def __init__(self, fns: dict[str, list[HookFn]], cache: Cache | None) -> None:
        self.fns = fns
        self.cache = cache

    def __call__(self, name: str, value: Tensor) -> Tensor:
        fns = self.fns.get(name)
        if fns:
            # a fresh tensor: hook_pos_embed is a view of W_pos, which an in-place edit would change
            value = value.clone()
            point = HookPoint(name)
            for fn in fns:
                out = fn(value, hook=point)  # by keyword, as TransformerLens calls it
                if out is not None:
                    # a copy: the replacement may be the caller's (another run's cache entry),
                    # which the next hook here would otherwise edit in place
                    value = _checked(name, value, out).clone()
        if self.cache is not None:
            # with hooks, a copy: a later in-place edit (blocks.1.hook_resid_pre is the tensor of
            # blocks.0.hook_resid_post) must not change what was recorded here; hook_pos_embed
            # always, a view of W_pos (or the zero embedding) an edit of the entry would change
            copy = self.fns or name == "hook_pos_embed"
            self.cache[name] = value.clone() if copy else value
        return value


def _checked(name: str, value: Tensor, out: object) -> Tensor:
    """A hook's replacement, refused unless it has the value's shape, dtype and device: a float64
    tensor would compute the rest in float64, a broadcast one patch positions it did not mean."""
    if (
        not isinstance(out, Tensor)
        or out.shape != value.shape
        or out.dtype != value.dtype
        or out.device != value.device
    ):
        got = (
            f"{out.dtype} {list(out.shape)} on {out.device}"
            if isinstance(out, Tensor)
            else type(out).__name__
        )
        raise ModelInputError(
            f"the hook at {name} returned {got}; a hook returns None or a tensor like its value: "
            f"{value.dtype} {list(value.shape)} on {value.device}"
        )
    return out


def no_hooks(name: str, value: Tensor) -> Tensor:
    """The plain forward pass's `hooks`: nothing runs, nothing is recorded."""
    return value

"""Scheduling: which layer computes each head and MLP.

A block is `attention then MLP`, so the sub-layers form the sequence attn_0, mlp_0, attn_1, mlp_1, ...
Every block is placed as early as the dimensions it reads allow (a reader goes after every writer of
those dimensions; the embedding writes at "-1"). That gives the minimal attention depth. Heads that
land in the same layer and attend identically (same selector) are merged into one head; all MLPs of a
layer run side by side as one wide MLP. An MLP that needs only the embedding shares layer 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compiler import attention
from compiler.blocks import Dim, HeadSpec, MLPDomain, MLPSpec, PlannedHead


@dataclass(frozen=True)
class Layer:
    heads: tuple[HeadSpec, ...]
    mlps: tuple[MLPSpec, ...]


@dataclass(frozen=True)
class Schedule:
    layers: tuple[Layer, ...]

    @property
    def n_layers(self) -> int:
        return len(self.layers)


def head_reads(spec: HeadSpec) -> set[Dim]:
    return set(spec.W_Q) | set(spec.W_K) | set(spec.W_V)


def _domain_reads(block: HeadSpec | MLPSpec) -> set[Dim]:
    """The dims of the readings the certifier evaluates a block at: written before the block too,
    though its weights may leave some out (an MLP whose output is one number, 0 or 0.0, reads only `one`)."""
    domain = block.domain
    if domain is None:
        return set()
    if isinstance(domain, MLPDomain):
        readings = list(domain.readings)
    else:
        readings = [*domain.query, *domain.key]
        readings += [p.reading for p in domain.parts if p.reading is not None]
        readings += [e for a in domain.atoms for e in (a.query, a.key)]
    return {dim for e in readings for dim in e.dims()}


def schedule_blocks(heads: Sequence[PlannedHead], mlps: Sequence[MLPSpec]) -> Schedule:
    """Layers for every block, as early as dependencies allow (at least one layer)."""
    pending: list[tuple[bool, object]] = [(True, h) for h in heads] + [(False, m) for m in mlps]
    reads = [
        (head_reads(b.spec) | _domain_reads(b.spec)) if is_head else set(b.W_in) | _domain_reads(b)  # type: ignore[union-attr]
        for is_head, b in pending
    ]
    writes = [b.spec.out_dims if is_head else b.out_dims for is_head, b in pending]  # type: ignore[union-attr]
    writer_of = {d: i for i, ws in enumerate(writes) for d in ws}
    placed: dict[int, int] = {}  # block -> sub-layer slot (2l: attention of layer l, 2l+1: its MLP)

    def place(i: int, visiting: frozenset[int]) -> int:
        if i not in placed:
            if i in visiting:
                raise ValueError("cyclic block dependencies")  # a compiler bug: the IR is acyclic
            deps = {writer_of[d] for d in reads[i] if d in writer_of and writer_of[d] != i}
            earliest = max((place(j, visiting | {i}) + 1 for j in deps), default=0)
            placed[i] = _round_up(earliest, head=pending[i][0])
        return placed[i]

    for i in range(len(pending)):
        place(i, frozenset())
    n_layers = max([s // 2 + 1 for s in placed.values()], default=1)
    layer_heads: list[list[PlannedHead]] = [[] for _ in range(n_layers)]
    layer_mlps: list[list[MLPSpec]] = [[] for _ in range(n_layers)]
    for i, (is_head, block) in enumerate(pending):
        (layer_heads if is_head else layer_mlps)[placed[i] // 2].append(block)  # type: ignore[arg-type]
    return Schedule(
        tuple(Layer(_merge(hs), tuple(ms)) for hs, ms in zip(layer_heads, layer_mlps, strict=True))
    )


def _round_up(slot: int, *, head: bool) -> int:
    """The first attention (even) or MLP (odd) slot at or after `slot`."""
    if head:
        return slot + (slot % 2)
    return slot if slot % 2 == 1 else slot + 1


def _merge(heads: list[PlannedHead]) -> tuple[HeadSpec, ...]:
    """One head per merge key (aggregates of one selector), but for heads that score their keys
    differently: two aggregates of one `select(indices, indices, ==)`, one copy addressed by its
    query's number and one by the selector's mask, stay two heads (merging them was a
    ValueError)."""
    groups: dict[tuple, list[list[HeadSpec]]] = {}
    for h in heads:
        alike = groups.setdefault(h.merge_key, [])
        for group in alike:
            if attention.shares_selector(group[0], h.spec):
                group.append(h.spec)
                break
        else:
            alike.append([h.spec])
    return tuple(
        g[0] if len(g) == 1 else attention.merge_heads(g)
        for alike in groups.values()
        for g in alike
    )

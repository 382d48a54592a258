"""What the encoding planners share: a read-only context and the question "how is node i read".

`PlanContext` holds what no planner changes (the graph, the value sets, the vocabulary, the build's
options) and the facts that follow from them alone. `Reader` is the one question planners ask of
each other: how a node is read from the residual stream. `compiler.encode.Readings` answers it by
dispatching to the planners (maps, selectors, widths, aggregates), which receive it as a
collaborator; they import this protocol, never `encode`, so the planners and the dispatcher do not
import each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from compiler import chain_walk, numeric, vector_maps
from compiler.blocks import Atom, Encoded, Encoding, all_numbers, is_number
from compiler.build_trials import BuildOptions
from compiler.graph import Graph, IRNode, Op
from compiler.picks import Pick, pick_error
from compiler.values import ValueSets
from rasp import sops

# A copy of more numbers than this is also built as one number (`BuildOptions.numeric_copies`), and
# kept where smaller: a one-hot of fewer is small, and the second build is not free.
NUMERIC_COPY_MIN_VALUES = 4

# The options a plan reads through `PlanContext.option` alone, each where its value decides
# something: a build refused while planning that never read one plans the same with it changed
# (compiler.plan_reuse gives its refusal to such builds without planning them again).
TRACKED_OPTIONS = frozenset(
    {"numeric_copies", "addressed_copies", "empty_copies", "category_gates"}
)


@dataclass(frozen=True)
class PlanContext:
    graph: Graph
    value_sets: ValueSets
    vocab: tuple[Atom, ...]
    # how this build plans (compiler.build_trials): planners read `ctx.options.NAME`, and those of
    # TRACKED_OPTIONS through `option` alone
    options: BuildOptions = BuildOptions()
    causal: bool = False  # the model's attention is causal: every query sees keys up to itself
    # `select(indices, indices, op)` is a head's mask (format version 3) instead of N x N scores
    head_masks: bool = True
    # the program was written with `rasp.tracr` (tracr's API): its refusals' hints say so
    tracr: bool = False
    # the TRACKED_OPTIONS this plan has read (`option`), shared with the driver that planned it
    options_read: set[str] = field(default_factory=set, compare=False, repr=False)

    @property
    def max_len(self) -> int:
        return self.value_sets.max_len

    def values(self, index: int) -> tuple[Atom, ...]:
        return self.value_sets.values[index]

    def seq_type(self, node: IRNode) -> sops.SeqType:
        """The node's type as the interpreter labels it (`make_seq`): None (tracr's undefined
        value) has no type of its own, so `[None, True]` is bools; NONE where it is all None."""
        types = {sops.type_of_value(v) for v in self.values(node.index)} - {sops.SeqType.NONE}
        if not types:
            return sops.SeqType.NONE
        if types <= {sops.SeqType.INTS, sops.SeqType.FLOATS} and sops.SeqType.FLOATS in types:
            return sops.SeqType.FLOATS
        return next(iter(types)) if len(types) == 1 else sops.SeqType.STRINGS

    def is_mean(self, node: IRNode) -> bool:
        """A numerical aggregate: numbers, and several keys may be selected (or, with
        `numeric_copies` or named in `sum_copies`, one key of more than NUMERIC_COPY_MIN_VALUES
        numbers and a number as the default)."""
        vals = self.values(node.inputs[1])
        if not (self.max_len >= 2 and vals and all_numbers(vals)):
            return False
        if not self.value_sets.at_most_one[node.inputs[0]]:
            return True
        if len(vals) <= NUMERIC_COPY_MIN_VALUES or not is_number(node.value):
            return False
        if not (self.option("numeric_copies") or node.name in self.options.sum_copies):
            return False
        return self.value_sets.never_empty[node.inputs[0]] or self.option("empty_copies")

    def option(self, name: str) -> bool:
        """The option `name` (one of TRACKED_OPTIONS, read nowhere else), noted as read: a plan
        that never read it is the same with it changed."""
        if name not in TRACKED_OPTIONS:
            raise ValueError(f"{name!r} is not a tracked build option")
        self.options_read.add(name)
        return bool(getattr(self.options, name))

    def is_positional(self, index: int) -> bool:
        """A map of `indices` (and constants) alone: a function of the position, which the
        positional embedding writes for free (`indices % 2 == 0`). (`Graph.reads_position_only`,
        which the value analysis asks too, decides it, once per graph.)"""
        return self.graph.reads_position_only(index)

    def is_position_class(self, index: int) -> bool:
        """A map of the position with at most half as many values as positions: read as its own
        one-hot from the positional embedding, narrower than the index one-hot it regroups."""
        return self.is_positional(index) and 2 * len(self.values(index)) <= self.max_len

    def is_numeric_source(self, index: int) -> bool:
        """A node read as one number: a width, the length, a mean, or a map with more than two
        number values once it is computed on its own (a class of the position is categorical)."""
        node = self.graph[index]
        if node.op is Op.MAP:
            if self.is_position_class(index):
                return False
            vals = self.values(index)
            return len(vals) > 2 and all_numbers(vals)
        return node.op in (Op.LENGTH, Op.SELECTOR_WIDTH) or (
            node.op is Op.AGGREGATE and self.is_mean(node)
        )

    def x_error(self, index: int) -> numeric.ErrorBound | None:
        """Worst float32 error of a numeric source's reading (None: only its own rounding)."""
        node = self.graph[index]
        if node.op in (Op.LENGTH, Op.SELECTOR_WIDTH):
            return self.frac_error()
        if node.op is Op.AGGREGATE:
            values = [float(v) for v in self.values(node.inputs[1])]
            return numeric.mean_error(self.max_len + 1, values, float(node.value))
        if node.op is Op.MAP and isinstance(node.fn, Pick):
            means = node.inputs[1:]
            return pick_error([self.values(m) for m in means], [self.x_error(m) for m in means])
        return None

    def frac_error(self) -> numeric.ErrorBound:
        """The error of a width's or the length's reading 1/(w+1): a mean of one 1 (BOS) and w
        zeros, relative to itself (1/1024 is known to about 6e-8, not to 1.2e-7 as 1 is)."""
        return numeric.mean_error(self.max_len + 1, [0.0, 1.0], 1.0)

    def chain_value(self, index: int, env: Mapping[int, Atom]) -> tuple[bool, Atom]:
        """A chain of maps' value for the values `env` of the s-ops it is computed from ((False,
        None) where it raises): compiler.chain_walk's walk, iterative, as chains may be thousands
        of maps long."""
        return chain_walk.chain_value(self.graph, index, env)

    def chain_function(
        self, index: int, sources: Sequence[int]
    ) -> Callable[[Sequence[Atom]], tuple[bool, Atom]]:
        """`combo -> chain_value(index, dict(zip(sources, combo)))`, with the chain's walk done
        once and each of its maps called once per combination (compiler.chain_walk: for the map
        planners, which evaluate a chain at tens of thousands of combinations)."""
        return chain_walk.chain_function(self.graph, index, sources)

    def chain_values(
        self, index: int, sources: Sequence[int], combos: Sequence[Sequence[Atom]]
    ) -> list[Atom | None] | None:
        """`chain_function(index, sources)` at every combination (None where it raises), computed
        on columns by compiler.vector_maps (exactly Python's results), or None where that module
        does not compute one of the chain's maps or values: then call the function per row."""
        if not combos:
            return []
        at = {s: k for k, s in enumerate(sources)}  # the last of equal sources, as dict() keeps
        slots = list(zip(*combos, strict=True))
        done: dict[int, vector_maps.Column | None] = {}
        # each node after its inputs (Graph.first_visits: a chain may be thousands of maps long)
        g = self.graph
        for i in g.first_visits(index, lambda j: j not in at and g[j].op is not Op.CONST):
            node = g[i]
            if i in at:
                col = vector_maps.column(slots[at[i]])
            elif node.op is Op.CONST:
                one = vector_maps.column([node.value])
                col = None if one is None else vector_maps.broadcast(one, len(combos))
            else:
                parts = [done[j] for j in node.inputs]
                col = None
                if all(p is not None for p in parts):
                    col = vector_maps.apply_columns(node.fn, parts)  # type: ignore[arg-type]
            done[i] = col
        col = done[index]
        return None if col is None else vector_maps.atoms(col)


class Reader(Protocol):
    """How node i is read from the residual stream (building what the reading needs, once)."""

    def reading(self, index: int, encoding: Encoding) -> Encoded:
        """Node `index` as a one-hot (categorical) or as one number (numerical)."""
        ...

    def number(self, index: int) -> Encoded:
        """A numeric source as one number: `1/(w+1)` for a width or the length read by its head,
        else its numerical reading; `x_of` says where each value sits on it."""
        ...

    def x_of(self, index: int, value: Atom) -> float:
        """Where a numeric source's value sits on `number(index)`."""
        ...

    def reads_frac(self, index: int) -> bool:
        """Whether `number(index)` is a width's `1/(w+1)` (not its decoded whole number)."""
        ...

    def read_in_full(self, index: int) -> bool:
        """Whether node `index` already has its categorical reading (one column per value)."""
        ...

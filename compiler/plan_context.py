"""What the encoding planners share: a read-only context and the question "how is node i read".

`PlanContext` holds what no planner changes (the graph, the value sets, the vocabulary) and the facts
that follow from them alone. `Reader` is the one question planners ask of each other: how a node is
read from the residual stream. `compiler.encode.Readings` answers it by dispatching to the planners
(maps, selectors, widths, aggregates), which receive it as a collaborator; they import this protocol,
never `encode`, so the planners and the dispatcher do not import each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from compiler import chain_walk, numeric, vector_maps
from compiler.blocks import Atom, Encoded, Encoding, all_numbers, is_number
from compiler.graph import Graph, IRNode, Op
from compiler.map_values import apply_map
from compiler.picks import Pick, pick_error
from compiler.values import ValueSets
from rasp import sops

# A copy of more numbers than this is also built as one number (`PlanContext.numeric_copies`), and
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
    causal: bool = False  # the model's attention is causal: every query sees keys up to itself
    matching: bool = True  # compiler.addressing.plan_match may be used (the driver's fallback: off)
    # `select(indices, indices, op)` is a head's mask (format version 3) instead of N x N scores
    head_masks: bool = True
    # a step MLP may read a width as its head's 1/(w+1) (the driver's fallback: off, each width
    # decoded to its whole number first, which costs an MLP but is exact)
    fractions: bool = True
    # sides of fewer values are matched too (compiler.addressing.EAGER_MATCH_MIN_VALUES)
    eager_matching: bool = False
    # an aggregate that selects at most one key copies many numbers as one number, as a mean does
    # (compiler.alternatives: kept where smaller and proved), not as their one-hot
    numeric_copies: bool = False
    # maps whose support is expanded through every input map (compiler.alternatives, where the
    # default build is refused: `fa * fb > 0.2` stepped over fa and fb, not over the product)
    fused_maps: frozenset[str] = frozenset()
    # a map that is affine in one number for each value of a categorical context is gated units,
    # a few per context value (compiler.gates; the driver's fallback: off, steps)
    gates: bool = True
    # a single-key copy of numbers (`numeric_copies`) is addressed exactly, as a categorical copy
    # is (compiler.addressing.plan_address: no matched query, which can cost a layer); off, by
    # the selector's atoms (matching), fewer parameters where the query's number is already there
    addressed_copies: bool = True
    # `numeric_copies` of copies that may select no key too (their default given there: tracr's
    # None, a number standing in for it, compiler.resolve); off, only of those that always select
    # one: two copies read by `x == y` are cheaper as one-hots where one of them may be empty
    empty_copies: bool = True
    # maps computed from their direct inputs, each input map computed first (compiler.
    # alternatives, where a map's step over a fused input map's source with a context is refused:
    # the context's error times its weights; the inputs first, a table over their values)
    direct_maps: frozenset[str] = frozenset()
    # a map of a number and a categorical number (`indices / length`) that is affine in the latter
    # for each value of the former, read by no map, is gated units over the categorical one, with
    # the number read as a one-hot (compiler.alternatives: kept where smaller, or where the
    # default's output snap is not proved)
    category_gates: bool = False
    # a table over inputs not known exact writes each row with a saturating pair, whose output
    # carries none of their error (compiler.mlp.table_mlp; compiler.alternatives' fallback where
    # a build with such tables is not proved: dyck2's `(b1 < 0) or (b2 < 0)` at N = 256)
    clamped_tables: bool = False
    # affine maps of means read as the view of one term per mean, each mean decoded to its values
    # first (compiler.decoded_sums; the driver's last build where the output's snap of the plain
    # sum is not proved: `0.5 * m0 + 2 * m1` over selects of the tokens)
    decoded_sums: frozenset[str] = frozenset()
    # an interpolation through a number's points takes that number's error as its writers' output
    # error, not its own rounding alone (compiler.map_steps; compiler.alternatives' build where
    # the default is not proved and a map reads an interpolation: chained lines compound)
    chained_lines: bool = False
    # maps a select reads, computed from means, as a table over their inputs' one-hots (each
    # mean decoded first), clamped: the side's one-hot exact (compiler.side_tables)
    table_sides: frozenset[str] = frozenset()
    # ... each of those tables' inputs that is a one-hot of two values not known exact (a head's)
    # written again by a step over one column first (compiler.side_tables.snapped): exact
    snapped_sides: bool = False
    # maps a select reads (or a side map reads) of one mean and one exact s-op of a few values,
    # stepped over the mean with that s-op's one-hot as context (compiler.threshold_sides)
    threshold_sides: frozenset[str] = frozenset()
    # maps whose function states an affine form (`a + b`), read as that line of their inputs'
    # numbers where an input is a one-hot too (a copy's values, a decoded count): a free view
    # (compiler.known_sums; the driver's last build, where every other is not proved)
    known_sums: frozenset[str] = frozenset()
    # ... each one-hot of a few values such a line reads written again exactly first
    # (compiler.snap_one_hot): a copy of a map's one-hot carries that map's step rounding
    snapped_sums: bool = False
    # the program was written with `rasp.tracr` (tracr's API): its refusals' hints say so
    tracr: bool = False
    _positional: dict[int, bool] = field(default_factory=dict, compare=False, repr=False)
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
        `numeric_copies`, one key of more than NUMERIC_COPY_MIN_VALUES numbers and a number as
        the default)."""
        vals = self.values(node.inputs[1])
        if not (self.max_len >= 2 and vals and all_numbers(vals)):
            return False
        if not self.value_sets.at_most_one[node.inputs[0]]:
            return True
        if len(vals) <= NUMERIC_COPY_MIN_VALUES or not is_number(node.value):
            return False
        if not self.option("numeric_copies"):
            return False
        return self.value_sets.never_empty[node.inputs[0]] or self.option("empty_copies")

    def option(self, name: str) -> bool:
        """The option `name` (one of TRACKED_OPTIONS, read nowhere else), noted as read: a plan
        that never read it is the same with it changed."""
        if name not in TRACKED_OPTIONS:
            raise ValueError(f"{name!r} is not a tracked build option")
        self.options_read.add(name)
        return bool(getattr(self, name))

    def is_positional(self, index: int) -> bool:
        """A map of `indices` (and constants) alone: a function of the position, which the
        positional embedding writes for free (`indices % 2 == 0`)."""
        # iterative (a chain of thousands of maps): inputs that are maps are decided first
        stack = [index]
        while stack:
            top = stack[-1]
            if top in self._positional:
                stack.pop()
                continue
            node = self.graph[top]
            inputs = [self.graph[i] for i in node.inputs]
            if node.op is Op.MAP:
                pending = [
                    i.index for i in inputs if i.op is Op.MAP and i.index not in self._positional
                ]
                if pending:
                    stack.extend(pending)
                    continue
            stack.pop()
            self._positional[top] = (
                node.op is Op.MAP
                and any(i.op is not Op.CONST for i in inputs)
                and all(
                    i.op in (Op.INDICES, Op.CONST) or (i.op is Op.MAP and self._positional[i.index])
                    for i in inputs
                )
            )
        return self._positional[index]

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
        None) where it raises)."""
        if index in env:
            return True, env[index]
        node = self.graph[index]
        if node.op is Op.CONST:
            return True, node.value
        args = []
        for i in node.inputs:
            ok, v = self.chain_value(i, env)
            if not ok:
                return False, None
            args.append(v)
        return apply_map(node.fn, args)

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

        def build(i: int) -> vector_maps.Column | None:
            if i in done:
                return done[i]
            node = self.graph[i]
            if i in at:
                col = vector_maps.column(slots[at[i]])
            elif node.op is Op.CONST:
                one = vector_maps.column([node.value])
                col = None if one is None else vector_maps.broadcast(one, len(combos))
            else:
                parts = [build(j) for j in node.inputs]
                col = None
                if all(p is not None for p in parts):
                    col = vector_maps.apply_columns(node.fn, parts)  # type: ignore[arg-type]
            done[i] = col
            return col

        col = build(index)
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

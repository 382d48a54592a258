"""Encodings: how every s-op is read from the residual stream, and the blocks that compute it.

`plan_encodings` makes one `Readings`, which answers "how is node i read" (`plan_context.Reader`) by
dispatching on the node's operation, and hands the work to planners that each own one file:

- tokens are categorical *views* of the raw token one-hot (`tokens_int` groups raw tokens by `int()`);
  indices are the positional one-hot `indices:i` (or the numerical `indices` dim); constants read
  `one` (here);
- length and selector_width: one head writing `1/(w+1)`, or a signed sum of conjunction widths
  (`widths.WidthPlanner`); a map of them is a step MLP over that fraction;
- maps are fused and computed by views, step MLPs or table MLPs (`maps.MapPlanner`, `map_steps`);
- aggregates are one head each, categorical or a numerical mean (`aggregates.AggregatePlanner`);
- selectors become conjunctions of atoms, or one atom over joint readings
  (`selectors.SelectorPlanner`);
- numbers that are equal (1, 1.0) share one categorical column (`readings.decode_numeric`).

They share a read-only `PlanContext`, the blocks built so far (`plan_state.Built`) and once-only
construction with located failures (`plan_state.Memo`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from compiler.aggregates import AggregatePlanner
from compiler.blocks import (
    ONE,
    Atom,
    Dim,
    Encoded,
    Encoding,
    Plan,
    all_numbers,
    is_number,
    value_key,
)
from compiler.build_trials import BuildOptions
from compiler.encode_messages import as_written, bools_collide, mixed_types_fix, not_averaged
from compiler.fits import snap_targets
from compiler.graph import Graph, IRNode, Op
from compiler.grid import MAX_OUTPUT_VALUES, output_grid, widened_relation
from compiler.maps import MapPlanner
from compiler.none_output import apart, listed, stand_in_of
from compiler.output_grid import OutputGrid
from compiler.output_types import is_whole, whole_types
from compiler.plan_context import PlanContext
from compiler.plan_state import Built, Memo
from compiler.readings import decode_numeric, view_numerical
from compiler.relations import Relation
from compiler.selectors import SelectorPlanner
from compiler.threshold_sides import threshold_side
from compiler.values import ValueSets
from compiler.widths import WidthPlanner
from rasp import sops
from rasp.errors import CompileError, Diagnostic

F32_HUGE = 2.0**127  # float32's largest numbers: a number from here on is an output's label only


def plan_encodings(
    graph: Graph,
    values: ValueSets,
    vocab: tuple[Atom, ...],
    options: BuildOptions = BuildOptions(),
    *,
    causal: bool = False,
    head_masks: bool = True,
    options_read: set[str] | None = None,
    tracr: bool = False,
) -> Plan:
    """Choose every reading and build every block; one CompileError with every reason. `options`:
    how this build plans (`compiler.build_trials.BuildOptions`, each field says what it changes;
    `options.output` forces the output's encoding, else `output_encoding` picks);
    `head_masks=False` scores `select(indices, indices, op)` instead of masking the head;
    `options_read`: where the plan notes the options of `plan_context.TRACKED_OPTIONS` it reads
    (`PlanContext.option`). `tracr`: a program in tracr's API, whose hints are written in it."""
    ctx = PlanContext(
        graph,
        values,
        vocab,
        options,
        causal=causal,
        head_masks=head_masks,
        options_read=set() if options_read is None else options_read,
        tracr=tracr,
    )
    return Readings(ctx, options.output).run()


# a numerical output's snap targets, grid and whole-number types (`Readings._numerical_output`)
NumberOut = tuple[tuple[Atom, ...], OutputGrid | None, tuple[str, ...] | None]


class Readings:
    """How each node is read (`plan_context.Reader`), built on first request by its planner."""

    def __init__(self, ctx: PlanContext, output: Encoding | None = None) -> None:
        self.ctx = ctx
        self.forced_output = output
        self.built = Built()
        self.memo = Memo()
        self.maps = MapPlanner(ctx, self, self.built)
        self.selectors = SelectorPlanner(ctx, self, self.built, self.memo, self.maps)
        self.widths = WidthPlanner(ctx, self.built, self.memo, self.selectors)
        self.aggregates = AggregatePlanner(ctx, self, self.built, self.selectors)
        self._sharing: set[int] = set()  # maps whose one-hot is being built for their number

    # -- driver -----------------------------------------------------------------------------------

    def run(self) -> Plan:
        ctx, guard = self.ctx, self.memo.guard
        live = self._live()
        for node in ctx.graph.nodes:  # attention first, so independent failures are all reported
            if node.index not in live:
                continue
            if node.op is Op.AGGREGATE:
                guard(lambda n=node: self.reading(n.index, self.preferred(n)))
            elif node.op in (Op.LENGTH, Op.SELECTOR_WIDTH):  # reads_frac may hit a failed input
                guard(
                    lambda n=node: (
                        self.widths.frac(n)
                        if self.widths.reads_frac(n.index)
                        else self.reading(n.index, Encoding.NUMERICAL)
                    )
                )
        root = ctx.graph.output
        stand_in = self._stand_in_output(root)
        output = (
            stand_in[1]
            if stand_in
            else guard(lambda: self.reading(root.index, self.output_encoding(root)))
        )
        self._check_output_types(root, output)
        problems = self.memo.problems
        if problems or output is None:
            raise CompileError(problems or [Diagnostic("cannot compile the program", root.span)])
        built = self.built
        if stand_in is not None:
            values, grid, types = stand_in[2]
        elif output.is_categorical:
            values, grid, types = ctx.values(root.index), None, None
            if any(is_whole(v) for v in values):  # a listed 0.0 where positions give the int 0
                types = whole_types(self._output_relation(root), ctx.max_len, values, None)
        else:
            values, grid, types = self._numerical_output(root, output)
        return Plan(
            tuple(built.heads),
            tuple(built.mlps),
            output,
            ctx.seq_type(root),
            dict(built.bounds),
            values,
            grid,
            dict(built.positional),
            dict(built.embedded),
            output_types=types,
            output_none_at=None if stand_in is None else stand_in[0],
        )

    def _stand_in_output(self, root: IRNode) -> tuple[Atom | None, Encoded, NumberOut] | None:
        """A map back to None of a number standing in for it (compiler.none_output), output as
        that number where it is read as one anyway and no one-hot output is forced; else None."""
        marker = stand_in_of(root)
        if marker is None or self.forced_output is Encoding.CATEGORICAL:
            return None
        source = self.ctx.graph[root.inputs[0]]
        if self.preferred(source) is not Encoding.NUMERICAL:
            return None
        output = self.memo.guard(lambda: self.reading(source.index, Encoding.NUMERICAL))
        if output is None or output.is_categorical:
            return None
        if not apart(marker, (*self.ctx.values(source.index), *output.values)):
            return None  # a value the snap would merge with the stand-in (none_output.apart)
        values, grid, types = self._numerical_output(source, output)
        if len(values) > MAX_OUTPUT_VALUES:  # None must be a listed number
            return None
        relation = lambda: self._output_relation(source)  # noqa: E731
        none_at, grid, types = listed(marker, values, grid, types, relation, self.ctx.max_len)
        return none_at, output, (values, grid, types)

    def _live(self) -> set[int]:
        """The nodes the output may read: every input, except that an OR selector one side covers
        reads that side alone (`SelectorPlanner.atoms` compiles it so). The others are not built
        up front: `(s and not select(v2, v1, >)) or s` needs no block for v1 or v2 (v2 a mean of
        means: 22M parameters at N = 7). Any node a planner asks for after all is built then."""
        g = self.ctx.graph
        live: set[int] = set()
        stack = [g.output.index]
        while stack:
            index = stack.pop()
            if index in live:
                continue
            live.add(index)
            node = g[index]
            inputs: Sequence[int] = node.inputs
            if node.op is Op.OR:
                covering = self.memo.guard(lambda n=node: self.selectors.covering(n))
                if covering is not None:
                    inputs = (covering,)
            stack.extend(inputs)
        return live

    def _numerical_output(self, root: IRNode, output: Encoded) -> NumberOut:
        """A numerical output's snap targets, grid and whole-number types: the same in every
        build whose output reading lists the same values, so found once per value analysis (a
        product of a mean and the index at N = 32: 10 s of each of four builds' planning)."""
        ctx = self.ctx
        key = ("numerical output", root.index, tuple(value_key(v) for v in output.values))
        found = ctx.value_sets.memo.get(key)
        if found is None:
            values = snap_targets(ctx.values(root.index), output.values)
            relation = self._output_relation(root)
            grid = output_grid(relation, values, ctx.max_len)  # the list as written
            listed = values if grid is None and len(values) <= MAX_OUTPUT_VALUES else None
            types = whole_types(relation, ctx.max_len, listed, grid)
            found = ctx.value_sets.memo[key] = (values, grid, types)
        return found

    def _output_relation(self, root: IRNode) -> Relation | None:
        """The output's values per (position, length), widened where it has none (compiler.grid)."""
        ctx = self.ctx
        vs = ctx.value_sets
        key = ("output relation", root.index)  # the same in every build (7 s at N = 32)
        if key not in vs.memo:
            vs.memo[key] = widened_relation(
                ctx.graph, vs.values, vs.relation, root.index, ctx.max_len
            )
        return vs.memo[key]

    def _check_output_types(self, root: IRNode, output: Encoded | None) -> None:
        """A decoded number cannot tell False from 0 or True from 1: refuse an output where both can
        occur. The exception: a categorical aggregate whose values never collide and whose default
        is the only other type (`aggregate(sel, tokens == "a")` with the default 0, the original's
        `[0, T, F]`): it copies the selected key's column or BOS's default column, one per value."""
        vals = self.ctx.values(root.index)
        if bools_collide(vals):
            if (
                output is not None
                and output.is_categorical
                and root.op is Op.AGGREGATE
                and not bools_collide(self.ctx.values(root.inputs[1]))
            ):
                return
            bools = {v for v in vals if isinstance(v, bool)}
            origin = self._where_bools_meet_numbers(root)
            self.memo.problems.append(
                Diagnostic(
                    f"'{as_written(root)}' can be a bool or a number ({sorted(bools)} and "
                    "numbers equal to them)",
                    root.span or origin.span,
                    "a compiled model reads False as 0 and True as 1; "
                    + mixed_types_fix(origin, root, self.ctx.tracr),
                )
            )

    def _where_bools_meet_numbers(self, node: IRNode) -> IRNode:
        """The first node on the way to `node` whose values mix bools and numbers (none of its
        s-op inputs does): the one a hint can tell how to fix."""
        while True:
            mixed = [
                i
                for i in node.inputs
                if not self.ctx.graph[i].op.is_selector and bools_collide(self.ctx.values(i))
            ]
            if not mixed:
                return node
            node = self.ctx.graph[mixed[0]]

    # -- encoding choices -------------------------------------------------------------------------

    def preferred(self, node: IRNode) -> Encoding:
        if node.op is Op.AGGREGATE and self.ctx.is_mean(node):
            return Encoding.NUMERICAL
        return Encoding.CATEGORICAL

    def output_encoding(self, node: IRNode) -> Encoding:
        if self.forced_output is not None:
            return self.forced_output
        vals = self.ctx.values(node.index)
        if self.preferred(node) is Encoding.NUMERICAL:
            return Encoding.NUMERICAL
        # Numbers leave the model as one logit (decoded by snapping to the value set): one residual
        # dim and one unembedding column instead of a one-hot.
        # (not numbers beyond float32's range, `indices ^ indices`: their logit would be inf)
        if len(vals) > 2 and all(is_number(v) and abs(v) < F32_HUGE for v in vals):
            return Encoding.NUMERICAL
        if len(vals) == 2 and all(is_number(v) for v in vals) and self._maps_a_mean(node):
            # two numbers computed from a mean (`as_float` of a mean of two values): its logit,
            # read as the mean is, costs no decoding MLP, as with more values
            return Encoding.NUMERICAL
        return Encoding.CATEGORICAL

    def _maps_a_mean(self, node: IRNode) -> bool:
        """A map of one s-op (and constants) that is a numerical mean."""
        if node.op is not Op.MAP:
            return False
        read = {i for i in node.inputs if self.ctx.graph[i].op is not Op.CONST}
        return len(read) == 1 and self.preferred(self.ctx.graph[read.pop()]) is Encoding.NUMERICAL

    # -- Reader -----------------------------------------------------------------------------------

    def reading(self, index: int, encoding: Encoding) -> Encoded:
        node = self.ctx.graph[index]
        if encoding is Encoding.CATEGORICAL:
            return self.memo.once(("cat", index), node, lambda: self._categorical(node))
        if node.name in self.ctx.options.shared_readings and ("num", index) not in self.memo:
            shared = self._shared_number(node)
            if shared is not None:
                return shared
        return self.memo.once(("num", index), node, lambda: self._numerical(node))

    def _shared_number(self, node: IRNode) -> Encoded | None:
        """A map read as a number and as a one-hot (`BuildOptions.shared_readings`): the number
        as the free view of its one-hot, built first, not a second step MLP beside it. None
        where the one-hot is not its own dims (a view, or decoded from the number, which its
        build then made)."""
        if node.op is not Op.MAP or node.index in self._sharing:
            return None
        vals = self.ctx.values(node.index)
        if not all_numbers(vals, bools=True):
            return None
        self._sharing.add(node.index)  # (a one-hot decoded from the number asks for it)
        try:
            cat = self.reading(node.index, Encoding.CATEGORICAL)
        finally:
            self._sharing.discard(node.index)
        if ("num", node.index) in self.memo:
            return None  # built on the way: the one-hot reads it
        own = Encoded.materialised_categorical(node.name, cat.values)
        if cat.one_hot != own.one_hot:
            return None
        return self.memo.once(("num", node.index), node, lambda: view_numerical(node, cat, vals))

    def number(self, index: int) -> Encoded:
        if self.widths.reads_frac(index):
            return self.widths.frac(self.ctx.graph[index])
        return self.reading(index, Encoding.NUMERICAL)

    def x_of(self, index: int, value: Atom) -> float:
        return 1.0 / (value + 1) if self.widths.reads_frac(index) else float(value)

    def reads_frac(self, index: int) -> bool:
        return self.widths.reads_frac(index)

    def read_in_full(self, index: int) -> bool:
        return ("cat", index) in self.memo

    # -- readings per operation -------------------------------------------------------------------

    def _categorical(self, node: IRNode) -> Encoded:
        ctx, built = self.ctx, self.built
        vals = ctx.values(node.index)
        match node.op:
            case Op.TOKENS:
                return self._token_view(node, numerical=False)
            case Op.INDICES:
                return Encoded.materialised_categorical("indices", vals)
            case Op.CONST:
                return Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=(((ONE, 1.0),),))
            case Op.LENGTH | Op.SELECTOR_WIDTH if self.widths.reads_frac(node.index):
                frac = self.widths.frac(node)
                points = [(1.0 / (v + 1), v) for v in vals]
                return decode_numeric(
                    built, node, frac, points, Encoding.CATEGORICAL, ctx.frac_error()
                )
            case Op.SELECTOR_WIDTH:
                x = self.reading(node.index, Encoding.NUMERICAL)
                points = [(float(v), v) for v in vals]
                return decode_numeric(built, node, x, points, Encoding.CATEGORICAL)
            case Op.AGGREGATE:
                if ctx.is_mean(node):
                    x = self.reading(node.index, Encoding.NUMERICAL)
                    return decode_numeric(
                        built,
                        node,
                        x,
                        [(float(v), v) for v in vals],
                        Encoding.CATEGORICAL,
                        ctx.x_error(node.index),
                    )
                return self.aggregates.plan(node, Encoding.CATEGORICAL)
            case Op.MAP:
                return self._map(node, Encoding.CATEGORICAL)
        raise CompileError([Diagnostic(f"'{node.text}' is not an s-op", node.span)])

    def _numerical(self, node: IRNode) -> Encoded:
        ctx = self.ctx
        vals = ctx.values(node.index)
        if not all_numbers(vals, bools=True):
            averaged = ctx.values(node.inputs[1]) if node.op is Op.AGGREGATE else vals
            raise CompileError([not_averaged(node, averaged)])
        # (once per value analysis: each build of mixed seed 1820297 scanned a map's values again)
        key = ("one number", node.index)
        memo = ctx.value_sets.memo
        if key not in memo:
            memo[key] = _one_number(vals)
        number = memo[key]
        if number is not None and node.op not in (Op.TOKENS, Op.INDICES, Op.CONST):
            # one number at every position, of two types (a prefix mean of zeros is 0 at the
            # first position and 0.0 after it): the constant, exact and free, where a head's
            # reading would carry its float32 error into whatever adds it (`opens - closes`)
            return Encoded(node.name, Encoding.NUMERICAL, vals, number=((ONE, number),))
        match node.op:
            case Op.TOKENS:
                return self._token_view(node, numerical=True)
            case Op.INDICES:
                return Encoded.materialised_numerical("indices", vals)
            case Op.CONST:
                return Encoded(
                    node.name, Encoding.NUMERICAL, vals, number=((ONE, float(node.value)),)
                )
            case Op.LENGTH | Op.SELECTOR_WIDTH if self.widths.reads_frac(node.index):
                frac = self.widths.frac(node)
                points = [(1.0 / (v + 1), v) for v in vals]
                return decode_numeric(
                    self.built, node, frac, points, Encoding.NUMERICAL, ctx.frac_error()
                )
            case Op.SELECTOR_WIDTH:
                return self.widths.width_sum(node)
            case Op.AGGREGATE:
                if ctx.is_mean(node):
                    return self.aggregates.plan(node, Encoding.NUMERICAL)
                cat = self.reading(node.index, Encoding.CATEGORICAL)
                return view_numerical(node, cat, vals)
            case Op.MAP:
                return self._map(node, Encoding.NUMERICAL)
        raise CompileError([Diagnostic(f"'{node.text}' is not an s-op", node.span)])

    def _map(self, node: IRNode, encoding: Encoding) -> Encoded:
        if (
            node.name in self.ctx.options.threshold_sides
        ):  # steps over a mean per exact context value
            rows = self.maps.points.rows
            return threshold_side(self.ctx, self, self.built, node, encoding, rows)
        return self.maps.plan(node, encoding)

    def _token_view(self, node: IRNode, *, numerical: bool) -> Encoded:
        assert node.kind is not None
        kind = node.kind
        raw = [(Dim.categorical("tokens", t), sops.read_token(kind, t)) for t in self.ctx.vocab]
        vals = self.ctx.values(node.index)
        if not numerical:
            # grouped once: a scan of the vocabulary per value was quadratic (a 20,000-token
            # vocabulary spent minutes here before the size prediction could refuse it)
            tokens_of: dict[object, list[tuple[Dim, float]]] = {}
            for d, c in raw:
                tokens_of.setdefault(value_key(c), []).append((d, 1.0))
            one_hot = tuple(tuple(tokens_of.get(value_key(v), ())) for v in vals)
            return Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=one_hot)
        number = tuple((d, float(c)) for d, c in raw)
        return Encoded(node.name, Encoding.NUMERICAL, vals, number=number)


def _one_number(vals: Sequence[Atom]) -> float | None:
    """The one finite number that every value of `vals` equals (0 and 0.0, 1 and True), or None."""
    numbers = {float(v) for v in vals}
    if len(numbers) != 1:
        return None
    (number,) = numbers
    return number if math.isfinite(number) else None

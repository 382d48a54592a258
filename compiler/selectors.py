"""How a selector becomes attention scores: a conjunction of atoms (additive scores), or one atom
over a joint (product) reading for a disjunction or negated conjunction.

`SelectorPlanner.atoms(i)` is selector i as a list of `Atomic` predicates between categorical
readings (selected iff every atom holds). A select side with many values that matters only through a
few classes (the keys each value selects) is read as those classes, computed by a step MLP from its
numerical reading (`number_views`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import replace

from compiler import positional, step_mlp
from compiler.absorb import absorbing_side
from compiler.addressing import plan_match
from compiler.blocks import (
    ALL_TRUE,
    EVERY_POSITION,
    Atom,
    Atomic,
    Encoded,
    Encoding,
    Relation,
    all_numbers,
    mask_atom,
    positions_of,
    sort_values,
    value_key,
)
from compiler.fits import merge_points
from compiler.graph import IRNode, Op
from compiler.joint_readings import JointReadings
from compiler.maps import MapPlanner
from compiler.number_views import NumberViews
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built, Memo
from compiler.select_twins import TwinTables
from compiler.side_tables import side_table
from compiler.snap_one_hot import snapped
from compiler.squares import SquaredReadings
from rasp.errors import CompileError, Diagnostic

# The key positions a causal model's queries see: at or before their own.
CAUSAL = frozenset({"<", "=="})
# A select side with fewer values is read in full unless the positional embedding writes its
# classes (no block); with more, a step MLP may compute them.
MIN_CLASSED_VALUES = 32
# (query value, key value) pairs a select's table may compare: as many as the certifier checks
# for one head (certify_select.MAX_SELECTION_PAIRS). `select(tokens, tokens, ==)` over 20,000
# tokens compared 4e8 pairs and planned on them for minutes and 13 GB, before any size
# prediction could refuse it.
MAX_TABLE_PAIRS = 200_000_000
# A select side with at most this many values against a map of the position is compared through
# the position's classes, not matched (see `_select_atoms`).
FEW_VALUES = 4


class SelectorPlanner:
    def __init__(
        self, ctx: PlanContext, reader: Reader, built: Built, memo: Memo, maps: MapPlanner
    ) -> None:
        self.ctx, self.reader, self.built, self.memo, self.maps = ctx, reader, built, memo, maps
        self.numbers = NumberViews(ctx, reader)
        self.squares = SquaredReadings(ctx, reader, built, memo, maps, self.numbers)
        self._classes: dict[tuple, Encoded] = {}
        self.twins = TwinTables(ctx, built)  # each select's comparison over float64 twins
        self._covering: dict[int, int | None] = {}
        self.joint = JointReadings(ctx, reader, built, memo, maps, self.twins, self._class_reading)

    def covering(self, node: IRNode) -> int | None:
        """`absorbing_side` of OR `node`, checked once (the planner's live walk asks too)."""
        if node.index not in self._covering:
            self._covering[node.index] = absorbing_side(self.ctx, self.maps.support, node)
        return self._covering[node.index]

    def atoms(self, index: int) -> list[Atomic]:
        node = self.ctx.graph[index]
        return self.memo.once(("atoms", index), node, lambda: self._atoms(node))

    def _atoms(self, node: IRNode) -> list[Atomic]:
        match node.op:
            case Op.SELECT:
                return self._select(node, matching=True)
            case Op.AND:
                return [*self.atoms(node.inputs[0]), *self.atoms(node.inputs[1])]
            case Op.OR:
                covering = self.covering(node)
                if covering is not None:  # the other side adds no (query, key) pair
                    return self.atoms(covering)
            case Op.NOT:
                negated = self._negated(node.inputs[0])
                if negated is not None:
                    return negated
        return [self.joint.atom(node)]

    def _negated(self, index: int) -> list[Atomic] | None:
        """The atoms of `not` selector `index` that need no joint reading of their own, or None. `not
        not s` is s, and `not (a or b)` is `not a and not b` (De Morgan): additive atoms, where the
        disjunction's complement is one atom over joint readings of both sides' s-ops (an MLP, a
        layer)."""
        node = self.ctx.graph[index]
        if node.op is Op.NOT:
            return self.atoms(node.inputs[0])
        if node.op is Op.OR:
            covering = self.covering(node)
            if covering is not None:  # the other side adds no (query, key) pair
                return self._negated(covering)
            if not all(self._negatable(i) for i in node.inputs):
                return None  # before building any part: a joint reads them all
            parts = [self._negated(i) for i in node.inputs]
            return None if None in parts else [a for p in parts for a in p]  # type: ignore[union-attr]
        if node.op is not Op.SELECT:
            return None
        (inner,) = self.atoms(index)
        if inner.is_mask:
            outside = EVERY_POSITION - inner.positions
            # `not select(indices, indices, <=)`: the keys after the query
            return [mask_atom(outside)] if outside else None
        if not inner.is_match:
            return [Atomic(inner.query, inner.key, ~inner.table)]
        # `!=` has no matching form: the complement of the select's own table
        (atom,) = self._select(node, matching=False)
        return [Atomic(atom.query, atom.key, ~atom.table)]

    def _negatable(self, index: int) -> bool:
        """Whether `not` selector `index` may be atoms of its parts (`_negated`): a select, a
        negation, or a disjunction of such."""
        node = self.ctx.graph[index]
        if node.op is Op.OR:
            return all(self._negatable(i) for i in node.inputs)
        return node.op in (Op.SELECT, Op.NOT)

    def _select(self, node: IRNode, *, matching: bool) -> list[Atomic]:
        """One select's atom: a mask, a matching atom (unless `matching` is off: its complement
        has no matching form), or a table over categorical readings (of classes, for a side with
        many values that matters only through a few); with its relation on the s-ops' values."""
        atoms = self._select_atoms(node, matching=matching)
        if atoms[0].is_mask or atoms[0] is ALL_TRUE:
            return atoms
        keys, queries = node.inputs
        cmp = node.comparison
        assert cmp is not None
        relation = Relation(keys, queries, self.twins.compare(node), f"{cmp.value}")
        return [replace(atom, relation=relation) for atom in atoms]

    def _select_atoms(self, node: IRNode, *, matching: bool) -> list[Atomic]:
        reading, values = self.reader.reading, self.ctx.values
        keys, queries = node.inputs
        assert node.comparison is not None
        cmp = node.comparison
        g = self.ctx.graph
        both_indices = g[keys].op is Op.INDICES and g[queries].op is Op.INDICES
        positions = positions_of(cmp) if both_indices else None
        if positions is not None and self.ctx.causal:
            # a causal model hides every later key already
            positions = positions & CAUSAL
            if positions == CAUSAL:
                return [ALL_TRUE]  # key index <= query index: what the mask does
        if positions is not None and self.ctx.head_masks:
            # Which keys a query sees by position is the head's mask: no columns, where
            # reading indices on both sides costs an N x N block (a prefix select has
            # rank N: no narrower scores select it; frac_prevs, Dyck's prefix counts)
            return [mask_atom(positions)]
        # Whole numbers with many values: scored -c (q - k)^2 over each side's number and
        # square, a few columns instead of a one-hot per side (compiler.addressing). Not where
        # one side has a few values and the other is a map of the position: the embedding
        # writes the few classes the position falls into (`select(indices, 0, ==)`: 0 and the
        # rest), narrower than a number and its square on both sides.
        squared = self.squares.reading
        few_against_position = any(
            len(values(a)) <= FEW_VALUES and positional.of_position(self.ctx, b)
            for a, b in ((keys, queries), (queries, keys))
        )
        match = (
            plan_match(self.ctx, self.numbers, squared, node)
            if matching and not few_against_position
            else None
        )
        if match is not None:
            return [match]
        # The side with more values may only matter through a few classes (which keys it
        # selects): `plus - length + indices` has thousands of values, but only N of them
        # equal an index. Read it as those classes when that is cheap.
        pairs = len(values(queries)) * len(values(keys))
        if pairs > MAX_TABLE_PAIRS:
            raise CompileError([_too_many_pairs(node, pairs)])
        rows = self.twins.rows  # every value's row at once (millions of pairs at N = 24)
        if len(values(queries)) >= len(values(keys)):
            k = reading(keys, Encoding.CATEGORICAL)
            q = self._class_reading(
                queries, lambda vs: rows(node, vs, k.values, 1), node
            ) or reading(queries, Encoding.CATEGORICAL)
        else:
            q = reading(queries, Encoding.CATEGORICAL)
            k = self._class_reading(keys, lambda vs: rows(node, vs, q.values, 0), node) or reading(
                keys, Encoding.CATEGORICAL
            )
        if self.ctx.options.snapped_sides:  # a one-hot of a few values written again exactly
            k, q = snapped(self.built, k), snapped(self.built, q)
        table = self.twins.table(node, k.values, q.values)
        return [Atomic(q, k, table)]

    def _class_reading(
        self,
        index: int,
        rows: Callable[[Sequence[Atom]], list[tuple[bool, ...]]],
        select: IRNode,
        even_if_read: bool = False,
    ) -> Encoded | None:
        """A categorical reading of node `index` that tells apart only values with different `row`s
        (the keys a query value selects, or the queries a key value is selected by): one class per
        distinct row, each read as its first value. Written by the positional embedding for
        `indices` or a map of the position, else computed by a step MLP from the node's numerical
        reading (a numerical source, or an exact affine view of indices and numerical sources).
        None, and the caller reads the node in full, when it is already read in full, has few
        values, does not collapse to few classes, or has no such numerical reading."""
        vals = self.ctx.values(index)
        if self.reader.read_in_full(index) and not even_if_read:
            return None
        if not all_numbers(vals):
            return None
        classes: dict[tuple[bool, ...], Atom] = {}
        ordered = sort_values(vals)
        rep = {value_key(v): classes.setdefault(r, v) for v, r in zip(ordered, rows(ordered))}
        if 2 * len(classes) > len(vals):
            return None
        # Keyed by the whole partition: two partitions can share their representatives.
        key = (index, tuple(sorted((k, value_key(r)) for k, r in rep.items())))
        if key in self._classes:
            return self._classes[key]
        node = self.ctx.graph[index]
        name = f"{node.name}~{select.name or 'select'}"
        # one s-op read on both sides of one selector (keys `v1` by one select, queries `v1` by
        # another) may be partitioned twice: each partition its own columns
        taken = {encoded.name for encoded in self._classes.values()}
        if name in taken:
            name = next(f"{name}~{k}" for k in itertools.count(2) if f"{name}~{k}" not in taken)
        out = Encoded.materialised_categorical(name, sort_values(classes.values()))
        op = f"classes of {node.text} for {select.text}"
        if positional.of_position(self.ctx, index):  # the embedding writes them: no MLP, no layer
            at = positional.position_values(self.ctx, index)
            classed = [
                (ok and value_key(v) in rep, rep.get(value_key(v)) if ok else None) for ok, v in at
            ]
            out = positional.embed_one_hot(self.built, out, classed, op)
            self._classes[key] = out
            return out
        if node.name in self.ctx.options.table_sides and node.op is Op.MAP:
            # a table over the map's inputs' one-hots, not a step over its noisy number
            # (compiler.side_tables); where too large, the full reading (a table too)
            try:
                classed = side_table(
                    self.ctx, self.built, node, self.maps._read_rows, out.encoding, (out, rep)
                )
            except CompileError:
                return None
            self._classes[key] = classed
            return classed
        if len(vals) < MIN_CLASSED_VALUES:  # a step MLP (and maybe a layer) to save a few columns
            return None
        if self.twins.apart(index):  # a step MLP over its number reads its twins as one
            return None
        found = self.numbers.reading(index)
        if found is None:
            return None
        x, x_of, x_error = found
        try:
            points = merge_points(node, [(x_of(v), rep[value_key(v)]) for v in vals])
            spec = step_mlp.numeric_mlp(
                x,
                points,
                out,
                op=op,
                name=name,
                x_error=x_error,
                exact=self.built.exact,
            )
        except CompileError:
            return None  # the full reading is the fallback, with its own checks
        self.built.bound_one_hot(out)
        self.built.add_mlp(spec)
        self._classes[key] = out
        return out


def _too_many_pairs(node: IRNode, pairs: int) -> Diagnostic:
    keys, queries = node.inputs
    return Diagnostic(
        f"this select compares {pairs:,} (query value, key value) pairs, more than a select's "
        f"table may hold ({MAX_TABLE_PAIRS:,}): its sides have too many values to be one-hot "
        "readings",
        node.span,
        "use fewer tokens (a smaller vocabulary) or a smaller maximum length",
    )

"""How a selector becomes attention scores: a conjunction of atoms (additive scores), or one atom
over a joint (product) reading for a disjunction or negated conjunction.

`SelectorPlanner.atoms(i)` is selector i as a list of `Atomic` predicates between categorical
readings (selected iff every atom holds). A select side with many values that matters only through a
few classes (the keys each value selects) is read as those classes, computed by a step MLP from its
numerical reading (`number_views`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce

import numpy as np

from compiler import mlp, positional, step_mlp
from compiler.absorb import absorbing_side, select_leaves, side_nodes
from compiler.addressing import plan_match
from compiler.blocks import (
    ALL_TRUE,
    EVERY_POSITION,
    TRUE,
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
from compiler.maps import MapPlanner
from compiler.number_views import NumberViews
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built, Memo
from compiler.relations import combination_count, input_combinations
from compiler.select_twins import TwinTables
from compiler.selector_cases import checked_compare_table
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
# A joint reading reads a side s-op as classes only where the s-op meets at most this many
# (comparison, other-side value) pairs: each value's class is its row of outcomes.
MAX_COMPARED_VALUES = 16


Env = Mapping[int, Atom]  # s-op -> value, for one side of a selector


@dataclass
class _Side:
    """One side of a selector formula: its value combinations (`envs`), and either the reading of
    its one s-op or a joint reading's inputs (`readings`), `tuples` (one per env) and memo key."""

    envs: list[Env]
    reading: Encoded | None = None
    readings: list[Encoded] = field(default_factory=list)
    tuples: list[tuple[Atom, ...]] = field(default_factory=list)
    key: tuple = ()


class SelectorPlanner:
    def __init__(
        self, ctx: PlanContext, reader: Reader, built: Built, memo: Memo, maps: MapPlanner
    ) -> None:
        self.ctx, self.reader, self.built, self.memo, self.maps = ctx, reader, built, memo, maps
        self.numbers = NumberViews(ctx, reader)
        self.squares = SquaredReadings(ctx, reader, built, memo, maps, self.numbers)
        self._classes: dict[tuple, Encoded] = {}
        self.twins = TwinTables(ctx)  # each select's comparison over float64 twins
        self._covering: dict[int, int | None] = {}

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
        return [self._combined(node)]

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
        if len(vals) < MIN_CLASSED_VALUES:  # a step MLP (and maybe a layer) to save a few columns
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

    def _combined(self, node: IRNode) -> Atomic:
        """One atom for a whole selector formula, over one categorical reading per side. A joint
        side's tuples that select the same keys (or are selected by the same queries) share one
        column: the table tells them apart nowhere, and the residual stream need not either."""
        g = self.ctx.graph
        leaves = select_leaves(g, node.index)
        q_side = self._side(node, side_nodes(g, leaves, 1), 1)
        k_side = self._side(node, side_nodes(g, leaves, 0), 0)
        table = self._table(node.index, q_side.envs, k_side.envs, {})
        q, q_keep = self._side_reading(node, q_side, table)
        k, k_keep = self._side_reading(node, k_side, table.T, taken=q.name)
        return Atomic(q, k, table[np.ix_(q_keep, k_keep)])

    def _side(self, node: IRNode, nodes: tuple[int, ...], side: int) -> _Side:
        """What one side (0: keys, 1: queries) of selector `node` reads of the s-ops `nodes`: a
        reading of one s-op, or the tuples of a joint reading yet to be built."""
        if len(nodes) <= 1:
            if not nodes:
                return _Side([{}], reading=TRUE)
            enc = self.reader.reading(nodes[0], Encoding.CATEGORICAL)
            return _Side([{nodes[0]: v} for v in enc.values], reading=enc)
        # Several s-ops on one side: a product one-hot over what they are computed from (a map's own
        # sources, so the map itself needs no layer of its own).
        vs = self.ctx.value_sets
        sources = tuple(dict.fromkeys(i for n in nodes for i in self.maps.support(n)))

        def count(ids: Sequence[int]) -> int:
            return combination_count(ids, vs.relation, vs.values)

        if count(nodes) * 4 < count(sources):
            # The s-ops themselves combine in far fewer ways than their sources (hist2_bos: `hist`
            # has N values, the mean it is rounded from many more): read them, at one more layer.
            sources = nodes
        classed = self._compared_classes(node, nodes, sources, side)
        readings = [
            classed[i][0] if i in classed else self.reader.reading(i, Encoding.CATEGORICAL)
            for i in sources
        ]
        tuples = self._combinations(sources)
        if classed:  # each value stands for its class: one column per class, not per value
            tuples = [
                tuple(classed[i][1](v) if i in classed else v for i, v in zip(sources, t))
                for t in tuples
            ]
        unique: dict[tuple, tuple[Atom, ...]] = {}
        for t in tuples:
            unique.setdefault(tuple(value_key(v) for v in t), t)
        tuples = list(unique.values())
        key = ("joint", sources, tuple((i, classed[i][0].name) for i in sorted(classed)))
        return _Side(
            [dict(zip(sources, t)) for t in tuples], readings=readings, tuples=tuples, key=key
        )

    def _side_reading(
        self, node: IRNode, side: _Side, table: np.ndarray, taken: str | None = None
    ) -> tuple[Encoded, list[int]]:
        """The categorical reading of one side of selector `node`, and which of the side's value
        combinations (rows of `table`, [this side, other side]) its columns stand for. A joint
        reading gives tuples with equal rows one column (their first's) where that at least halves
        it; the joint's MLP is then the selector's own. `taken`: the query side's reading name, which
        a key side over the same s-ops but merged otherwise must not reuse (its one-hot would land on
        the query side's dimensions, two MLPs writing one column)."""
        if side.reading is not None:
            return side.reading, list(range(len(side.envs)))
        first: dict[bytes, int] = {}
        rep = [first.setdefault(row.tobytes(), a) for a, row in enumerate(table)]
        keep = sorted(first.values())
        merged = 2 * len(keep) <= len(rep)
        if not merged:
            rep, keep = list(range(len(rep))), list(range(len(rep)))
        key = side.key + ((tuple(rep),) if merged else ())

        def make() -> Encoded:
            name = "(" + ",".join(r.name for r in side.readings) + ")"
            op = f"joint {name} for {node.text}"
            if merged:
                name, op = f"{name}~{node.name or 'select'}", f"{op}, by the keys selected"
                if name == taken:
                    name = f"{name}~keys"
            out = Encoded.materialised_categorical(name, tuple(side.tuples[a] for a in keep))
            spec = mlp.table_mlp(
                side.readings,
                [(t, side.tuples[rep[a]]) for a, t in enumerate(side.tuples)],
                out,
                op=op,
                name=name,
                exact=self.built.exact,
            )
            self.built.add_mlp(spec)
            for d in out.dims():
                self.built.bounds[d] = 1.0
            return out

        return self.memo.once(key, node, make), keep

    def _compared_classes(
        self, node: IRNode, nodes: tuple[int, ...], sources: tuple[int, ...], side: int
    ) -> dict[int, tuple[Encoded, Callable[[Atom], Atom]]]:
        """Side s-ops that the selector compares only with s-ops of few values on the other side
        (`select(indices, 0, ==)` in the BOS trick `s or select(indices, 0, ==)`; a mean against
        `v % 2`): they matter to a joint reading only through the outcomes of comparing them with
        those values, so each is read as those few classes (a step MLP from its number,
        `_class_reading`), not as all its values. Per such s-op: its class reading and the
        representative of each value."""
        g = self.ctx.graph
        leaves = select_leaves(g, node.index)
        out: dict[int, tuple[Encoded, Callable[[Atom], Atom]]] = {}
        for i in sources:
            uses = [leaf for leaf in leaves if leaf.inputs[side] == i]
            if (
                i not in nodes
                or not uses
                or any(i in self.maps.support(n) for n in nodes if n != i)
            ):
                continue
            # every (comparison, other-side value) pair a value of s-op i meets; a reachable
            # (query, key) pair's other side takes one of its s-op's values
            against = [
                (self.twins.compare(leaf), c)
                for leaf in uses
                for c in sort_values(self.ctx.values(leaf.inputs[1 - side]))
            ]
            if len(against) > MAX_COMPARED_VALUES:
                continue

            def row(v: Atom, against: list = against) -> tuple[bool, ...]:
                # (key, query): v is the key on side 0, the query on side 1
                return tuple(compare(*((v, c) if side == 0 else (c, v))) for compare, c in against)

            # even where the s-op is read in full elsewhere: a joint of its N values is N times
            # wider than a joint of its few classes
            enc = self._class_reading(
                i, lambda vs, row=row: [row(v) for v in vs], node, even_if_read=True
            )
            if enc is not None:
                by_row = {row(r): r for r in enc.values}
                out[i] = (enc, lambda v, row=row, by_row=by_row: by_row[row(v)])
        return out

    def _combinations(self, support: tuple[int, ...]) -> list[tuple[Atom, ...]]:
        """input_combinations, in the values the categorical readings use (duplicates dropped)."""
        vs = self.ctx.value_sets
        out: dict[tuple, tuple[Atom, ...]] = {}
        for combo in input_combinations(support, vs.relation, vs.values):
            canon = tuple(self.built.canonical(s, v) for s, v in zip(support, combo))
            out.setdefault(tuple(value_key(v) for v in canon), canon)
        return list(out.values())

    def _table(
        self,
        index: int,
        q_envs: Sequence[Env],
        k_envs: Sequence[Env],
        values: dict[tuple[int, int], tuple[list[tuple[bool, Atom]], np.ndarray]],
    ) -> np.ndarray:
        """[query env, key env] of whether selector formula `index` holds. Each select compares
        the distinct values its sides take, not every pair of envs: a joint side has thousands
        of envs but its s-ops few values. `values`: each (s-op, side)'s, shared by the leaves."""
        node = self.ctx.graph[index]
        match node.op:
            case Op.SELECT:
                keys, queries = node.inputs
                assert node.comparison is not None
                k_vals, k_at = self._distinct(keys, k_envs, 0, values)
                q_vals, q_at = self._distinct(queries, q_envs, 1, values)
                small = checked_compare_table(self.twins.compare(node), k_vals, q_vals)
                return small[np.ix_(q_at, k_at)]
            case Op.AND:
                tables = (self._table(i, q_envs, k_envs, values) for i in node.inputs)
                return reduce(np.logical_and, tables)  # (pairwise: no stack of every table)
            case Op.OR:
                tables = (self._table(i, q_envs, k_envs, values) for i in node.inputs)
                return reduce(np.logical_or, tables)
            case Op.NOT:
                return ~self._table(node.inputs[0], q_envs, k_envs, values)
        raise TypeError(node.op)

    def _distinct(
        self,
        index: int,
        envs: Sequence[Env],
        side: int,
        values: dict[tuple[int, int], tuple[list[tuple[bool, Atom]], np.ndarray]],
    ) -> tuple[list[tuple[bool, Atom]], np.ndarray]:
        """The distinct (ok, value) of s-op `index` over `envs`, and which one each env has (ok
        False: its chain of maps raises there)."""
        if (index, side) not in values:
            distinct: dict[tuple, int] = {}
            found: list[tuple[bool, Atom]] = []
            at = np.empty(len(envs), dtype=np.int64)
            for e, env in enumerate(envs):
                ok, v = self.ctx.chain_value(index, env)
                key = (True, value_key(v)) if ok else (False,)
                if key not in distinct:
                    distinct[key] = len(found)
                    found.append((ok, v))
                at[e] = distinct[key]
            values[index, side] = (found, at)
        return values[index, side]


def _too_many_pairs(node: IRNode, pairs: int) -> Diagnostic:
    keys, queries = node.inputs
    return Diagnostic(
        f"this select compares {pairs:,} (query value, key value) pairs, more than a select's "
        f"table may hold ({MAX_TABLE_PAIRS:,}): its sides have too many values to be one-hot "
        "readings",
        node.span,
        "use fewer tokens (a smaller vocabulary) or a smaller maximum length",
    )

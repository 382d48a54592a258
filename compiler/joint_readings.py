"""One attention atom for a whole selector formula (a disjunction, or a negated conjunction, that
additive atoms cannot score): one categorical reading per side, a joint (product) reading where a
side reads several s-ops, built by a table MLP (`compiler.selectors.SelectorPlanner` asks for it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Protocol

import numpy as np

from compiler import mlp
from compiler.absorb import select_leaves, side_nodes
from compiler.blocks import TRUE, Atom, Atomic, Encoded, Encoding, sort_values, value_key
from compiler.graph import IRNode, Op
from compiler.maps import MapPlanner
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built, Memo
from compiler.relations import combination_count, input_combinations
from compiler.select_twins import TwinTables
from compiler.selector_cases import checked_compare_table
from compiler.snap_one_hot import snapped

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


class ClassReading(Protocol):
    """`SelectorPlanner._class_reading`: node `index` read as the classes its values' `rows` tell
    apart (None: read it in full)."""

    def __call__(
        self,
        index: int,
        rows: Callable[[Sequence[Atom]], list[tuple[bool, ...]]],
        select: IRNode,
        even_if_read: bool = False,
    ) -> Encoded | None: ...


class JointReadings:
    """The atom of a selector formula over joint readings, and the readings it builds (through
    `memo`, shared with the other planners)."""

    def __init__(
        self,
        ctx: PlanContext,
        reader: Reader,
        built: Built,
        memo: Memo,
        maps: MapPlanner,
        twins: TwinTables,
        class_reading: ClassReading,
    ) -> None:
        self.ctx, self.reader, self.built, self.memo, self.maps = ctx, reader, built, memo, maps
        self.twins, self.class_reading = twins, class_reading

    def atom(self, node: IRNode) -> Atomic:
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
            enc = self._snapped(self.reader.reading(nodes[0], Encoding.CATEGORICAL))
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
            classed[i][0]
            if i in classed
            else self._snapped(self.reader.reading(i, Encoding.CATEGORICAL))
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

    def _snapped(self, reading: Encoded) -> Encoded:
        """A one-hot of a few values not known exact written again exactly, where the build
        snaps select sides (`BuildOptions.snapped_sides`, compiler.snap_one_hot); else `reading`."""
        return snapped(self.built, reading) if self.ctx.options.snapped_sides else reading

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
            enc = self.class_reading(
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
                small = checked_compare_table(self.twins.joint_compare(node), k_vals, q_vals)
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

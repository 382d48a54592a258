"""How a selector becomes attention scores: a conjunction of atoms (additive scores), or one atom
over a joint (product) reading for a disjunction or negated conjunction. Mixed into
`compiler.encode._Encoder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from compiler import mlp
from compiler.blocks import ONE, Atom, Atomic, Encoded, Encoding
from compiler.graph import IRNode, Op
from rasp import sops

if TYPE_CHECKING:
    from compiler.encode import _Encoder as _Base
else:
    _Base = object

TRUE = Encoded("true", Encoding.CATEGORICAL, (True,), one_hot=(((ONE, 1.0),),))
ALL_TRUE = Atomic(TRUE, TRUE, np.ones((1, 1), dtype=bool))


class SelectorsMixin(_Base):
    def atoms(self, index: int) -> list[Atomic]:
        node = self.g[index]
        return self._memo(("atoms", index), node, lambda: self._atoms(node))

    def _atoms(self, node: IRNode) -> list[Atomic]:
        match node.op:
            case Op.SELECT:
                keys, queries = node.inputs
                q = self.reading(queries, Encoding.CATEGORICAL)
                k = self.reading(keys, Encoding.CATEGORICAL)
                assert node.comparison is not None
                table = np.array(
                    [[_compare(node.comparison, kv, qv) for kv in k.values] for qv in q.values],
                    dtype=bool,
                ).reshape(len(q.values), len(k.values))
                return [Atomic(q, k, table)]
            case Op.AND:
                return [*self.atoms(node.inputs[0]), *self.atoms(node.inputs[1])]
            case Op.NOT:
                inner = self.atoms(node.inputs[0])
                if len(inner) == 1:
                    return [Atomic(inner[0].query, inner[0].key, ~inner[0].table)]
        return [self._combined(node)]

    def _leaves(self, index: int) -> list[IRNode]:
        node = self.g[index]
        if node.op is Op.SELECT:
            return [node]
        return [leaf for i in node.inputs for leaf in self._leaves(i)]

    def _combined(self, node: IRNode) -> Atomic:
        """One atom for a whole selector formula, over one categorical reading per side."""
        leaves = self._leaves(node.index)
        q_nodes = tuple(
            dict.fromkeys(
                leaf.inputs[1] for leaf in leaves if self.g[leaf.inputs[1]].op is not Op.CONST
            )
        )
        k_nodes = tuple(
            dict.fromkeys(
                leaf.inputs[0] for leaf in leaves if self.g[leaf.inputs[0]].op is not Op.CONST
            )
        )
        q, q_rows = self._side(node, q_nodes)
        k, k_rows = self._side(node, k_nodes)
        table = np.zeros((len(q.values), len(k.values)), dtype=bool)
        for a, qenv in enumerate(q_rows):
            for b, kenv in enumerate(k_rows):
                table[a, b] = self._holds(node.index, qenv, kenv)
        return Atomic(q, k, table)

    def _side(self, node: IRNode, nodes: tuple[int, ...]) -> tuple[Encoded, list[dict[int, Atom]]]:
        if len(nodes) <= 1:
            if not nodes:
                return TRUE, [{}]
            enc = self.reading(nodes[0], Encoding.CATEGORICAL)
            return enc, [{nodes[0]: v} for v in enc.values]
        # Several s-ops on one side: a product one-hot over what they are computed from (a map's own
        # sources, so the map itself needs no layer of its own).
        sources = tuple(dict.fromkeys(i for n in nodes for i in self.support(n)))
        key = ("joint", sources)

        def make() -> tuple[Encoded, list[dict[int, Atom]]]:
            readings = [self.reading(i, Encoding.CATEGORICAL) for i in sources]
            tuples = self.combinations(sources)
            name = "(" + ",".join(self.g[i].name for i in sources) + ")"
            spec, enc = mlp.joint_mlp(readings, tuples, name, op=f"joint {name} for {node.text}")
            self.mlps.append(spec)
            for d in enc.dims():
                self.bounds[d] = 1.0
            return enc, [dict(zip(sources, t)) for t in enc.values]

        return self._memo(key, node, make)

    def _holds(self, index: int, qenv: Mapping[int, Atom], kenv: Mapping[int, Atom]) -> bool:
        node = self.g[index]
        match node.op:
            case Op.SELECT:
                keys, queries = node.inputs
                ok_k, kv = self.chain_value(keys, kenv)
                ok_q, qv = self.chain_value(queries, qenv)
                assert node.comparison is not None
                return ok_k and ok_q and _compare(node.comparison, kv, qv)
            case Op.AND:
                return all(self._holds(i, qenv, kenv) for i in node.inputs)
            case Op.OR:
                return any(self._holds(i, qenv, kenv) for i in node.inputs)
            case Op.NOT:
                return not self._holds(node.inputs[0], qenv, kenv)
        raise TypeError(node.op)


def _compare(comparison: sops.Comparison, key: Atom, query: Atom) -> bool:
    try:
        return comparison.apply(key, query)
    except TypeError:  # str vs number ordering: the interpreter errors, no promise to keep
        return False


# Inclusion-exclusion turns selector_width of a disjunction into this many conjunction widths at most.
MAX_WIDTH_PARTS = 4


class WidthPartsMixin(_Base):
    """selector_width of a selector that is not a conjunction, without a joint reading:
    |A or B| = |A| + |B| - |A and B|, each term a conjunction (one head each, all in one layer)."""

    def width_parts(self, index: int) -> list[tuple[int, list[Atomic]]] | None:
        key = ("parts", index)
        if key not in self.memo:
            self.memo[key] = (
                None if self._is_conjunction(index) else self._simplified(self._expand(index))
            )
        return self.memo[key]

    def _is_conjunction(self, index: int) -> bool:
        node = self.g[index]
        if node.op is Op.SELECT:
            return True
        if node.op is Op.AND:
            return all(self._is_conjunction(i) for i in node.inputs)
        return node.op is Op.NOT and self.g[node.inputs[0]].op is Op.SELECT

    def _expand(self, index: int) -> list[tuple[int, list[Atomic]]]:
        node = self.g[index]
        if self._is_conjunction(index):
            return [(1, self.atoms(index))]
        if node.op is Op.NOT:
            return [(1, [ALL_TRUE])] + [(-s, a) for s, a in self._expand(node.inputs[0])]
        left, right = (self._expand(i) for i in node.inputs)
        both = [(s1 * s2, a1 + a2) for s1, a1 in left for s2, a2 in right]
        if node.op is Op.AND:
            return both
        return left + right + [(-s, a) for s, a in both]

    def _simplified(
        self, terms: list[tuple[int, list[Atomic]]]
    ) -> list[tuple[int, list[Atomic]]] | None:
        """Atoms over the same readings merged (tables AND-ed), empty terms dropped, equal ones summed."""
        out: dict[tuple, tuple[int, list[Atomic]]] = {}
        for sign, atoms in terms:
            groups: dict[tuple[Encoded, Encoded], np.ndarray] = {}
            for atom in atoms:
                pair = (atom.query, atom.key)
                groups[pair] = (
                    groups[pair] & atom.table if pair in groups else np.asarray(atom.table, bool)
                )
            if any(not table.any() for table in groups.values()):
                continue  # selects nothing: width 0
            merged = [
                Atomic(q, k, t) for (q, k), t in groups.items() if not (q is TRUE and k is TRUE)
            ]
            ident = tuple(
                sorted(
                    (
                        a.query.name,
                        a.key.name,
                        hash(a.query),
                        hash(a.key),
                        a.table.tobytes(),
                    )
                    for a in merged
                )
            )
            previous = out.get(ident, (0, merged))[0]
            out[ident] = (previous + sign, merged or [ALL_TRUE])
        parts = [(s, a) for s, a in out.values() if s != 0]
        return parts if 0 < len(parts) <= MAX_WIDTH_PARTS else None

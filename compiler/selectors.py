"""How a selector becomes attention scores: a conjunction of atoms (additive scores), or one atom
over a joint (product) reading for a disjunction or negated conjunction. Mixed into
`compiler.encode._Encoder`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from compiler import mlp, numeric
from compiler.blocks import (
    ONE,
    Atom,
    Atomic,
    Dim,
    Encoded,
    Encoding,
    is_number,
    sort_values,
    value_key,
)
from compiler.fits import exact_affine_fit, merge_points
from compiler.graph import IRNode, Op
from compiler.values import apply_map, combination_count
from rasp import sops
from rasp.errors import CompileError

if TYPE_CHECKING:
    from compiler.encode import _Encoder as _Base
else:
    _Base = object

# A select side with fewer values is read in full; with more, it may be read as classes.
MIN_CLASSED_VALUES = 32
# A map over more input combinations than this is not checked for being affine (the check
# enumerates them).
MAX_VIEW_ROWS = 1 << 20

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
                assert node.comparison is not None
                cmp = node.comparison
                # The side with more values may only matter through a few classes (which keys it
                # selects): `plus - length + indices` has thousands of values, but only N of them
                # equal an index. Read it as those classes when that is cheap.
                if len(self.values(queries)) >= len(self.values(keys)):
                    k = self.reading(keys, Encoding.CATEGORICAL)
                    q = self._class_reading(
                        queries,
                        lambda v: tuple(_compare(cmp, kv, v) for kv in k.values),
                        node,
                    ) or self.reading(queries, Encoding.CATEGORICAL)
                else:
                    q = self.reading(queries, Encoding.CATEGORICAL)
                    k = self._class_reading(
                        keys,
                        lambda v: tuple(_compare(cmp, v, qv) for qv in q.values),
                        node,
                    ) or self.reading(keys, Encoding.CATEGORICAL)
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

    def _class_reading(
        self, index: int, row: Callable[[Atom], tuple[bool, ...]], select: IRNode
    ) -> Encoded | None:
        """A categorical reading of node `index` that tells apart only values with different `row`s
        (the keys a query value selects, or the queries a key value is selected by): one class per
        distinct row, each read as its first value. Computed by a step MLP from the node's numerical
        reading (a numerical source, or an exact affine view of indices and numerical sources).
        None, and the caller reads the node in full, when it is already read in full, has few
        values, does not collapse to few classes, or has no such numerical reading."""
        vals = self.values(index)
        if ("cat", index) in self.memo or len(vals) < MIN_CLASSED_VALUES:
            return None
        if not all(is_number(v) for v in vals):
            return None
        classes: dict[tuple[bool, ...], Atom] = {}
        rep = {value_key(v): classes.setdefault(row(v), v) for v in sort_values(vals)}
        if 2 * len(classes) > len(vals):
            return None
        # Keyed by the whole partition: two partitions can share their representatives.
        key = (
            "classes",
            index,
            tuple(sorted((k, value_key(r)) for k, r in rep.items())),
        )
        if key in self.memo:
            return self.memo[key]
        found = self._number_reading(index)
        if found is None:
            return None
        x, x_of, x_error = found
        node = self.g[index]
        name = f"{node.name}~{select.name or 'select'}"
        out = Encoded.materialised_categorical(name, sort_values(classes.values()))
        try:
            points = merge_points(node, [(x_of(v), rep[value_key(v)]) for v in vals])
            spec = mlp.numeric_mlp(
                x,
                points,
                out,
                op=f"classes of {node.text} for {select.text}",
                name=name,
                x_error=x_error,
                exact=self.exact,
            )
        except CompileError:
            return None  # the full reading is the fallback, with its own checks
        for terms in out.one_hot:
            self.bounds[terms[0][0]] = 1.0
        self.mlps.append(spec)
        self.memo[key] = out
        return out

    def _number_reading(
        self, index: int
    ) -> tuple[Encoded, Callable[[Atom], float], numeric.ErrorBound | None] | None:
        """Node `index` as one number in the residual stream, how its values sit on it, and the
        float32 error of that number; None unless it is a numerical source or an exact affine view
        (free) of numerical sources and indices."""
        node = self.g[index]
        if node.op is not Op.MAP:
            if not self.is_numeric_source(index):
                return None
            return (
                self.x_reading(index),
                lambda v: self.x_of(index, v),
                self.x_error(index),
            )
        form = self._affine_form(index)
        if form is None:
            return None
        coefs, const = form
        terms: dict[Dim, float] = {ONE: const}
        for src, a in coefs.items():
            for d, c in self.reading(src, Encoding.NUMERICAL).number:
                terms[d] = terms.get(d, 0.0) + a * c
        number = tuple((d, c) for d, c in terms.items() if c != 0.0)
        view = Encoded(node.name, Encoding.NUMERICAL, self.values(index), number=number)
        # The view adds its terms' errors (a mean's, scaled by its coefficient) and float32 rounding
        # of a sum whose partial sums stay below sum |a_k| max |source_k| + |b| (no cancellation).
        largest = {src: max(abs(float(v)) for v in self.values(src)) for src in coefs}
        size = abs(const) + sum(abs(a) * largest[src] for src, a in coefs.items())
        error = numeric.rounding_error(max(size, 1.0), len(view.number))
        for src, a in coefs.items():
            bound = self.x_error(src)
            if bound is not None:
                error += abs(a) * float(bound.at(np.array([largest[src]]))[0])
        return view, float, numeric.ErrorBound(error)

    def _affine_form(self, index: int) -> tuple[dict[int, float], float] | None:
        """Node `index` as sum_k a_k * source_k + b, when every map on the way is exactly affine in
        its own inputs (checked on every combination of their values, a superset of the reachable
        ones); sources are numerical s-ops, or indices and tokens with number values. None else."""
        key = ("affine", index)
        if key in self.memo:
            return self.memo[key]
        node = self.g[index]
        form: tuple[dict[int, float], float] | None = None
        vals = self.values(index)
        if node.op is Op.CONST:
            form = ({}, float(node.value)) if is_number(node.value) else None
        elif node.op is not Op.MAP:
            ok = self.is_numeric_source(index) or (
                node.op in (Op.INDICES, Op.TOKENS) and all(is_number(v) for v in vals)
            )
            form = ({index: 1.0}, 0.0) if ok else None
        else:
            inner = [self._affine_form(i) for i in node.inputs]
            fit = None if any(f is None for f in inner) else self._affine_fit(node)
            if fit is not None:
                coefs: dict[int, float] = {}
                const = fit[-1]
                for a, (sub, b) in zip(fit[:-1], inner):  # type: ignore[misc]
                    const += a * b
                    for src, c in sub.items():
                        coefs[src] = coefs.get(src, 0.0) + a * c
                form = ({s: c for s, c in coefs.items() if c != 0.0}, const)
        self.memo[key] = form
        return form

    def _affine_fit(self, node: IRNode) -> list[float] | None:
        """Coefficients [a_1, ..., a_k, b] with fn(x_1..x_k) == sum a_j x_j + b on every combination
        of the inputs' values (exactly, up to float64 noise), or None."""
        domains = [self.values(i) for i in node.inputs]
        if int(np.prod([len(d) for d in domains])) > MAX_VIEW_ROWS:
            return None
        rows: list[list[float]] = []
        ys: list[float] = []
        for combo in itertools.product(*domains):
            ok, out = apply_map(node.fn, list(combo))
            if not ok:
                continue
            if not all(is_number(v) for v in (*combo, out)):
                return None
            rows.append([float(v) for v in combo])
            ys.append(float(out))
        return exact_affine_fit(rows, ys) if rows else None

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
        count = lambda ids: combination_count(ids, self.vs.relation, self.vs.values)
        if count(nodes) * 4 < count(sources):
            # The s-ops themselves combine in far fewer ways than their sources (hist2_bos: `hist`
            # has N values, the mean it is rounded from many more): read them, at one more layer.
            sources = nodes
        key = ("joint", sources)

        def make() -> tuple[Encoded, list[dict[int, Atom]]]:
            readings = [self.reading(i, Encoding.CATEGORICAL) for i in sources]
            tuples = self.combinations(sources)
            name = "(" + ",".join(self.g[i].name for i in sources) + ")"
            spec, enc = mlp.joint_mlp(
                readings,
                tuples,
                name,
                op=f"joint {name} for {node.text}",
                exact=self.exact,
            )
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

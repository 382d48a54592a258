"""Encodings: how every s-op is read from the residual stream, and the blocks that compute it.

Decisions, per node:
- tokens are categorical *views* of the raw token one-hot (`tokens_int` groups raw tokens by `int()`);
  indices are the positional one-hot `indices:i` (or the numerical `indices` dim); constants read `one`.
- length and selector_width are attention heads writing `1/(w+1)` into a `<name>.frac` dim; a map of
  them is a step MLP over that fraction (with a categorical context for e.g. `length - indices - 1`).
- a chain of maps is fused: its *support* is the set of non-map s-ops it reads, and the whole chain is
  one function of the support. One categorical support is a free view; one numerical support (plus at
  most one categorical context) is a step MLP; several categorical supports are one table MLP.
- an aggregate is categorical (value one-hot -> output one-hot) when its values are strings or bools
  (the interpreter refuses several selected keys) or the selector provably selects <= 1 key; otherwise
  it is a numerical mean.
- a selector is a conjunction of atoms (additive scores). A disjunction or negated conjunction becomes
  ONE atom, over the shared query/key readings, or else over joint (product) readings built by an MLP.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from compiler import attention, mlp, numeric
from compiler.blocks import ONE, Atom, Atomic, Dim, Encoded, Encoding, HeadSpec, MLPSpec, Terms, value_key
from compiler.graph import Graph, IRNode, Op
from compiler.values import ValueSets, apply_map, input_combinations, is_number, sort_values
from rasp import sops
from rasp.errors import CompileError, Diagnostic

# A fused chain of maps over several categorical s-ops is one table up to this many input combinations.
MAX_FUSED_TABLE = 4096
# Numbers closer than this (relative) differ only by float64 rounding in the interpreter.
FLOAT64_NOISE = 1e-9

TRUE = Encoded("true", Encoding.CATEGORICAL, (True,), one_hot=(((ONE, 1.0),),))
ALL_TRUE = Atomic(TRUE, TRUE, np.ones((1, 1), dtype=bool))


@dataclass(frozen=True)
class PlannedHead:
    spec: HeadSpec
    merge_key: tuple[Any, ...]  # heads with equal keys attend identically and may share one head


@dataclass(frozen=True)
class Plan:
    heads: tuple[PlannedHead, ...]
    mlps: tuple[MLPSpec, ...]
    output: Encoded
    output_type: sops.SeqType
    dim_bounds: Mapping[Dim, float]  # |value| bound of each written dim at real positions


class _Skip(Exception):
    """A node that depends on an already-reported failure."""


def plan_encodings(graph: Graph, values: ValueSets, vocab: tuple[Atom, ...]) -> Plan:
    """Choose every reading and build every block; one CompileError with every reason."""
    return _Encoder(graph, values, vocab).run()


class _Encoder:
    def __init__(self, graph: Graph, values: ValueSets, vocab: tuple[Atom, ...]) -> None:
        self.g, self.vs, self.vocab, self.n_max = graph, values, vocab, values.max_len
        self.heads: list[PlannedHead] = []
        self.mlps: list[MLPSpec] = []
        self.bounds: dict[Dim, float] = {}
        self.memo: dict[tuple[Any, ...], Any] = {}
        self.failed: set[tuple[Any, ...]] = set()
        self.problems: list[Diagnostic] = []
        self.canon: dict[int, dict[tuple[str, Any], Atom]] = {}  # node -> value -> value its reading uses

    # -- driver -----------------------------------------------------------------------------------

    def run(self) -> Plan:
        for node in self.g.nodes:  # attention first, so independent failures are all reported
            if node.op is Op.AGGREGATE:
                self._guard(lambda n=node: self.reading(n.index, self.preferred(n)))
            elif node.op in (Op.SELECTOR_WIDTH, Op.LENGTH):
                self._guard(lambda n=node: self._frac(n))
        root = self.g.output
        output = self._guard(lambda: self.reading(root.index, self.output_encoding(root)))
        if self.problems or output is None:
            raise CompileError(self.problems or [Diagnostic("cannot compile the program", root.span)])
        return Plan(tuple(self.heads), tuple(self.mlps), output, self.seq_type(root), dict(self.bounds))

    def _guard(self, make: Callable[[], Any]) -> Any:
        try:
            return make()
        except _Skip:
            return None

    def _memo(self, key: tuple[Any, ...], node: IRNode, make: Callable[[], Any]) -> Any:
        """Build once; a failure is reported once (with the node's span) and skips its dependents."""
        if key in self.failed:
            raise _Skip
        if key not in self.memo:
            try:
                self.memo[key] = make()
            except CompileError as err:
                self.failed.add(key)
                for d in err.diagnostics:
                    self.problems.append(d if d.span else Diagnostic(d.message, node.span, d.hint))
                raise _Skip from None
            except _Skip:
                self.failed.add(key)
                raise
        return self.memo[key]

    # -- encoding choices -------------------------------------------------------------------------

    def values(self, index: int) -> tuple[Atom, ...]:
        return self.vs.values[index]

    def seq_type(self, node: IRNode) -> sops.SeqType:
        types = {sops.type_of_value(v) for v in self.values(node.index)}
        if types <= {sops.SeqType.INTS, sops.SeqType.FLOATS} and sops.SeqType.FLOATS in types:
            return sops.SeqType.FLOATS
        return next(iter(types)) if len(types) == 1 else sops.SeqType.STRINGS

    def is_mean(self, node: IRNode) -> bool:
        """A numerical aggregate: numbers, and several keys may be selected."""
        vals = self.values(node.inputs[1])
        return (
            not self.vs.at_most_one[node.inputs[0]]
            and self.n_max >= 2
            and bool(vals)
            and all(is_number(v) for v in vals)
        )

    def preferred(self, node: IRNode) -> Encoding:
        if node.op is Op.AGGREGATE and self.is_mean(node):
            return Encoding.NUMERICAL
        return Encoding.CATEGORICAL

    def output_encoding(self, node: IRNode) -> Encoding:
        vals = self.values(node.index)
        if self.preferred(node) is Encoding.NUMERICAL:
            return Encoding.NUMERICAL
        # Numbers leave the model as one logit (decoded by snapping to the value set): one residual
        # dim and one unembedding column instead of a one-hot.
        if len(vals) > 2 and all(is_number(v) for v in vals):
            return Encoding.NUMERICAL
        return Encoding.CATEGORICAL

    def reading(self, index: int, encoding: Encoding) -> Encoded:
        node = self.g[index]
        if encoding is Encoding.CATEGORICAL:
            return self._memo(("cat", index), node, lambda: self._categorical(node))
        return self._memo(("num", index), node, lambda: self._numerical(node))

    # -- readings of base s-ops -------------------------------------------------------------------

    def _categorical(self, node: IRNode) -> Encoded:
        vals = self.values(node.index)
        match node.op:
            case Op.TOKENS:
                return self._token_view(node, numerical=False)
            case Op.INDICES:
                return Encoded.materialised_categorical("indices", vals)
            case Op.CONST:
                return Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=(((ONE, 1.0),),))
            case Op.LENGTH | Op.SELECTOR_WIDTH:
                return self._decode_numeric(node, self._frac(node), [(1.0 / (v + 1), v) for v in vals],
                                            Encoding.CATEGORICAL)
            case Op.AGGREGATE:
                if self.is_mean(node):
                    x = self.reading(node.index, Encoding.NUMERICAL)
                    return self._decode_numeric(node, x, [(float(v), v) for v in vals], Encoding.CATEGORICAL,
                                                self.x_error(node.index))
                return self._aggregate(node, Encoding.CATEGORICAL)
            case Op.MAP:
                return self._map(node, Encoding.CATEGORICAL)
        raise CompileError([Diagnostic(f"'{node.text}' is not an s-op", node.span)])

    def _numerical(self, node: IRNode) -> Encoded:
        vals = self.values(node.index)
        if not all(is_number(v) or isinstance(v, bool) for v in vals):
            raise CompileError([Diagnostic(f"'{node.text}' has non-numeric values and cannot be averaged",
                                           node.span, "aggregate numbers, or select at most one key")])
        match node.op:
            case Op.TOKENS:
                return self._token_view(node, numerical=True)
            case Op.INDICES:
                return Encoded.materialised_numerical("indices", vals)
            case Op.CONST:
                return Encoded(node.name, Encoding.NUMERICAL, vals, number=((ONE, float(node.value)),))
            case Op.LENGTH | Op.SELECTOR_WIDTH:
                return self._decode_numeric(node, self._frac(node), [(1.0 / (v + 1), v) for v in vals],
                                            Encoding.NUMERICAL)
            case Op.AGGREGATE:
                if self.is_mean(node):
                    return self._aggregate(node, Encoding.NUMERICAL)
                return self._view_numerical(node, self.reading(node.index, Encoding.CATEGORICAL))
            case Op.MAP:
                return self._map(node, Encoding.NUMERICAL)
        raise CompileError([Diagnostic(f"'{node.text}' is not an s-op", node.span)])

    def _token_view(self, node: IRNode, *, numerical: bool) -> Encoded:
        assert node.kind is not None
        convert = sops._TOKEN_CONVERT[node.kind]
        raw = [(Dim.categorical("tokens", t), convert(t)) for t in self.vocab]
        vals = self.values(node.index)
        if not numerical:
            one_hot = tuple(tuple((d, 1.0) for d, c in raw if value_key(c) == value_key(v)) for v in vals)
            return Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=one_hot)
        return Encoded(node.name, Encoding.NUMERICAL, vals, number=tuple((d, float(c)) for d, c in raw))

    def _view_numerical(self, node: IRNode, cat: Encoded) -> Encoded:
        terms: dict[Dim, float] = {}
        for v, hot in zip(cat.values, cat.one_hot):
            for d, c in hot:
                terms[d] = terms.get(d, 0.0) + float(v) * c
        return Encoded(node.name, Encoding.NUMERICAL, self.values(node.index), number=tuple(terms.items()))

    def _frac(self, node: IRNode) -> Encoded:
        """The head writing 1/(w+1) (w = selector width, or the length) into `<name>.frac`."""
        key = ("frac", "length") if node.op is Op.LENGTH else ("frac", node.index)

        def make() -> Encoded:
            dim = Dim(f"{node.name}.frac")
            if node.op is Op.LENGTH:
                atoms, merge = [ALL_TRUE], ("sw", "all")
            else:
                atoms, merge = self.atoms(node.inputs[0]), ("sw", node.inputs[0])
            spec = attention.selector_width_head(atoms, dim, op=node.text, name=node.name)
            self.heads.append(PlannedHead(spec, merge))
            self.bounds[dim] = 1.0
            fracs = sort_values(1.0 / (v + 1) for v in self.values(node.index))
            return Encoded(dim.name, Encoding.NUMERICAL, fracs, number=((dim, 1.0),))

        return self._memo(key, node, make)

    def _decode_numeric(
        self, node: IRNode, x: Encoded, points: list[tuple[float, Atom]], encoding: Encoding,
        x_error: float | None = None,
    ) -> Encoded:
        merged = _merge_points(node, points)
        # A number is read back as one value: 1 and 1.0 (equal numbers) share one one-hot column.
        out = self._materialise(node, encoding, sort_values(v for _, v in merged))
        if encoding is Encoding.CATEGORICAL:
            xs = np.array([mx for mx, _ in merged])
            nearest = lambda x: merged[int(np.argmin(np.abs(xs - x)))][1]  # noqa: E731
            self.canon[node.index] = {value_key(v): nearest(x) for x, v in points}
        spec = mlp.numeric_mlp(x, merged, out, op=node.text, name=node.name, x_error=x_error)
        self.mlps.append(spec)
        return out

    def canonical(self, index: int, value: Atom) -> Atom:
        """The value a categorical reading of node `index` uses for `value` (see _decode_numeric)."""
        table = self.canon.get(index)
        return value if table is None else table.get(value_key(value), value)

    def combinations(self, support: tuple[int, ...]) -> list[tuple[Atom, ...]]:
        """input_combinations, in the values the categorical readings use (duplicates dropped)."""
        out: dict[tuple, tuple[Atom, ...]] = {}
        for combo in input_combinations(support, self.vs.relation, self.vs.values):
            canon = tuple(self.canonical(s, v) for s, v in zip(support, combo))
            out.setdefault(tuple(value_key(v) for v in canon), canon)
        return list(out.values())

    def _materialise(self, node: IRNode, encoding: Encoding, vals: tuple[Atom, ...]) -> Encoded:
        if encoding is Encoding.CATEGORICAL:
            out = Encoded.materialised_categorical(node.name, vals)
            for terms in out.one_hot:
                self.bounds[terms[0][0]] = 1.0
            return out
        out = Encoded.materialised_numerical(node.name, vals)
        self.bounds[Dim(node.name)] = max((abs(float(v)) for v in vals), default=1.0)
        return out

    def _aggregate(self, node: IRNode, encoding: Encoding) -> Encoded:
        selector, sop = node.inputs
        value = self.reading(sop, encoding)
        atoms = self.atoms(selector)
        # The head copies every value reading and the default, even those the analysis proved unreachable.
        vals = sort_values([*self.values(node.index), *value.values, node.value])
        out = self._materialise(node, encoding, vals)
        spec = attention.aggregate_head(atoms, value, node.value, out, op=node.text, name=node.name)
        self.heads.append(PlannedHead(spec, ("agg", selector)))
        return out

    # -- maps -------------------------------------------------------------------------------------

    def support(self, index: int) -> tuple[int, ...]:
        """The s-ops a map is computed from: its chain of maps is expanded (fused) input by input
        while one cheap block can still compute it; an input whose expansion would not be cheap is
        computed on its own first and read as a source."""
        node = self.g[index]
        if node.op is Op.CONST:
            return ()
        if node.op is not Op.MAP:
            return (index,)
        key = ("support", index)
        if key not in self.memo:
            out: dict[int, None] = {}
            for i in node.inputs:
                merged = out | dict.fromkeys(self.support(i))
                if self.cheap(tuple(merged)):
                    out = merged
                elif self.g[i].op is not Op.CONST:
                    out[i] = None
            self.memo[key] = tuple(out)
        return self.memo[key]

    def cheap(self, support: tuple[int, ...]) -> bool:
        """Whether one MLP (or a free view) computes a function of these s-ops."""
        numeric = [s for s in support if self.is_numeric_source(s)]
        sizes = [len(self.values(s)) for s in support if s not in numeric]
        if numeric:
            return len(numeric) == 1 and len(sizes) <= 1
        return len(sizes) <= 1 or int(np.prod(sizes)) <= MAX_FUSED_TABLE

    def chain_value(self, index: int, env: Mapping[int, Atom]) -> tuple[bool, Atom]:
        """The fused chain's value for support values `env` ((False, None) where it raises)."""
        if index in env:
            return True, env[index]
        node = self.g[index]
        if node.op is Op.CONST:
            return True, node.value
        args = []
        for i in node.inputs:
            ok, v = self.chain_value(i, env)
            if not ok:
                return False, None
            args.append(v)
        return apply_map(node.fn, args)

    def is_numeric_source(self, index: int) -> bool:
        node = self.g[index]
        if node.op is Op.MAP:  # a materialised map: numbers with more than two values are read as numbers
            vals = self.values(index)
            return len(vals) > 2 and all(is_number(v) for v in vals)
        return node.op in (Op.LENGTH, Op.SELECTOR_WIDTH) or (node.op is Op.AGGREGATE and self.is_mean(node))

    def x_of(self, index: int, value: Atom) -> float:
        """Where a numeric source's value sits on its numerical reading."""
        return 1.0 / (value + 1) if self.g[index].op in (Op.LENGTH, Op.SELECTOR_WIDTH) else float(value)

    def x_reading(self, index: int) -> Encoded:
        node = self.g[index]
        if node.op in (Op.LENGTH, Op.SELECTOR_WIDTH):
            return self._frac(node)
        return self.reading(index, Encoding.NUMERICAL)

    def x_error(self, index: int) -> float | None:
        """Worst float32 error of a numeric source's reading (None: only its own rounding)."""
        node = self.g[index]
        if node.op is Op.AGGREGATE:
            biggest = max((abs(float(v)) for v in self.values(node.inputs[1])), default=1.0)
            return numeric.mean_error_bound(self.n_max + 1, max(biggest, abs(float(node.value))))
        return None

    def _map(self, node: IRNode, encoding: Encoding) -> Encoded:
        vals = self.values(node.index)
        if encoding is Encoding.NUMERICAL and not all(is_number(v) or isinstance(v, bool) for v in vals):
            raise CompileError([Diagnostic(f"'{node.text}' is read as a number but has values {vals[:4]}",
                                           node.span)])
        direct = tuple(dict.fromkeys(i for i in node.inputs if self.g[i].op is not Op.CONST))
        if len(direct) > 1 and all(self.is_numeric_source(i) for i in direct):
            affine = self._affine_view(node, direct, list(direct), [])
            if affine is not None:  # e.g. n_opens - n_closes: free
                if encoding is Encoding.NUMERICAL:
                    return affine
                x = self.reading(node.index, Encoding.NUMERICAL)
                return self._decode_numeric(node, x, [(float(v), v) for v in vals], encoding)
        return self._map_over(node, self.support(node.index), encoding, last_resort=True)  # type: ignore[return-value]

    def _map_over(self, node: IRNode, support: tuple[int, ...], encoding: Encoding, *,
                  last_resort: bool) -> Encoded | None:
        """The map as a function of `support`, if one cheap block computes it (always, if last_resort)."""
        vals = self.values(node.index)
        if not support:
            const = Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=(((ONE, 1.0),),))
            return const if encoding is Encoding.CATEGORICAL else self._view_numerical(node, const)
        numeric = [s for s in support if self.is_numeric_source(s)]
        categorical = [s for s in support if s not in numeric]
        sizes = [len(self.values(s)) for s in categorical]
        if len(numeric) > 1 or (len(numeric) == 1 and len(categorical) > 1):
            affine = self._affine_view(node, support, numeric, categorical)
            if affine is not None and encoding is Encoding.NUMERICAL:
                return affine
            if not last_resort:
                return None
        elif len(categorical) > 1 and int(np.prod(sizes)) > MAX_FUSED_TABLE and not last_resort:
            return None
        one_block = (not numeric and len(categorical) == 1) or (len(numeric) == 1 and len(categorical) <= 1)
        # Readings first: a categorical reading decides which values it distinguishes (canonical).
        readings = [self.reading(s, Encoding.CATEGORICAL) for s in (categorical if one_block else support)]
        rows = self._rows(node, support)
        if not numeric and len(categorical) == 1:
            return self._map_view(node, support[0], rows, encoding)
        if len(numeric) == 1 and len(categorical) <= 1:
            return self._map_steps(node, support, numeric[0], rows, encoding)
        out = self._materialise(node, encoding, vals)
        table = {combo: v for combo, v in rows}
        self.mlps.append(mlp.table_mlp(readings, table, out, op=node.text, name=node.name))
        return out

    def _rows(self, node: IRNode, support: tuple[int, ...]) -> list[tuple[tuple[Atom, ...], Atom]]:
        rows = []
        for combo in input_combinations(support, self.vs.relation, self.vs.values):
            ok, out = self.chain_value(node.index, dict(zip(support, combo)))
            if ok:
                rows.append((combo, out))
        if not any(s in self.canon for s in support):
            return rows
        merged: dict[tuple, tuple[tuple[Atom, ...], Atom]] = {}
        for combo, out in rows:
            canon = tuple(self.canonical(s, v) for s, v in zip(support, combo))
            key = tuple(value_key(v) for v in canon)
            if key in merged and merged[key][1] != out:
                raise CompileError([Diagnostic(
                    f"'{node.text}' gives {merged[key][1]!r} and {out!r} for inputs that are equal numbers",
                    node.span, "a compiled model reads numbers, so 1 and 1.0 cannot lead to different results")])
            merged.setdefault(key, (canon, out))
        return list(merged.values())

    def _affine_view(self, node: IRNode, support: tuple[int, ...], numeric: list[int],
                     categorical: list[int]) -> Encoded | None:
        """sum_k a_k * x_k + b over numeric sources (no categorical ones), when that is exact: a free view."""
        if categorical or not all(self.g[s].op not in (Op.LENGTH, Op.SELECTOR_WIDTH) for s in numeric):
            return None
        size = int(np.prod([len(self.values(s)) for s in support]))
        if size > MAX_FUSED_TABLE * 64:
            return None
        rows = self._rows(node, support)
        if not rows or not all(is_number(v) or isinstance(v, bool) for _, v in rows):
            return None
        xs = np.array([[float(c) for c in combo] + [1.0] for combo, _ in rows])  # [rows, k + 1]
        ys = np.array([float(v) for _, v in rows])
        coef, *_ = np.linalg.lstsq(xs, ys, rcond=None)
        coef = np.round(coef * 2**20) / 2**20  # affine maps in programs have simple coefficients
        if np.max(np.abs(xs @ coef - ys), initial=0.0) > 1e-9 * max(1.0, float(np.abs(ys).max())):
            return None
        terms: dict[Dim, float] = {}
        for a, s in zip(coef[:-1], support):
            for d, c in self.x_reading(s).number:
                terms[d] = terms.get(d, 0.0) + float(a) * c
        terms[ONE] = terms.get(ONE, 0.0) + float(coef[-1])
        number = tuple((d, c) for d, c in terms.items() if c != 0.0)
        return Encoded(node.name, Encoding.NUMERICAL, self.values(node.index), number=number)

    def _map_view(self, node: IRNode, source: int, rows: list, encoding: Encoding) -> Encoded:
        """A map of one categorical s-op: regroup its one-hot terms (free)."""
        src = self.reading(source, Encoding.CATEGORICAL)
        vals = self.values(node.index)
        groups: dict[tuple[str, Any], list[Terms]] = {value_key(v): [] for v in vals}
        for (u,), v in rows:
            groups[value_key(v)].append(src.one_hot[src.index_of(u)])
        one_hot = tuple(_add_terms(groups[value_key(v)]) for v in vals)
        cat = Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=one_hot)
        return cat if encoding is Encoding.CATEGORICAL else self._view_numerical(node, cat)

    def _map_steps(self, node: IRNode, support: tuple[int, ...], x_src: int, rows: list,
                   encoding: Encoding) -> Encoded:
        """A map of one numerical source (and at most one categorical context): one step MLP."""
        x = self.x_reading(x_src)
        xi = support.index(x_src)
        if len(support) == 1:
            points = [(self.x_of(x_src, c[0]), v) for c, v in rows]
            affine = _affine(points) if encoding is Encoding.NUMERICAL else None
            if affine is not None:  # e.g. 2 * mean: a free numerical view
                a, b = affine
                number = tuple((d, a * c) for d, c in x.number) + ((ONE, b),)
                return Encoded(node.name, Encoding.NUMERICAL, self.values(node.index), number=number)
            return self._decode_numeric(node, x, points, encoding, self.x_error(x_src))
        ci = 1 - xi
        context = self.reading(support[ci], Encoding.CATEGORICAL)
        per_context: dict[tuple[str, Any], tuple[Atom, list[tuple[float, Atom]]]] = {}
        for combo, v in rows:
            c = combo[ci]
            per_context.setdefault(value_key(c), (c, []))[1].append((self.x_of(x_src, combo[xi]), v))
        context_points = {c: _merge_points(node, pts) for c, pts in per_context.values()}
        out = self._materialise(node, encoding, self.values(node.index))
        spec = mlp.numeric_mlp(x, [], out, op=node.text, name=node.name, context=context,
                               context_points=context_points, x_error=self.x_error(x_src))
        self.mlps.append(spec)
        return out

    # -- selectors --------------------------------------------------------------------------------

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
                table = np.array([[_compare(node.comparison, kv, qv) for kv in k.values] for qv in q.values],
                                 dtype=bool).reshape(len(q.values), len(k.values))
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
        q_nodes = tuple(dict.fromkeys(leaf.inputs[1] for leaf in leaves if self.g[leaf.inputs[1]].op is not Op.CONST))
        k_nodes = tuple(dict.fromkeys(leaf.inputs[0] for leaf in leaves if self.g[leaf.inputs[0]].op is not Op.CONST))
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


def _number_key(v: Atom) -> tuple[str, Any]:
    """Equal numbers (1, 1.0) share a key; bools and strings keep their own."""
    if is_number(v):
        return ("number", float(v))
    return value_key(v)


def _add_terms(parts: list[Terms]) -> Terms:
    total: dict[Dim, float] = {}
    for terms in parts:
        for d, c in terms:
            total[d] = total.get(d, 0.0) + c
    return tuple((d, c) for d, c in total.items() if c != 0.0)


def _merge_points(node: IRNode, points: list[tuple[float, Atom]]) -> list[tuple[float, Atom]]:
    """One output per x a float32 model can tell apart.

    Equal numbers (1 and 1.0) are one point and must give equal outputs. Numbers that differ only by
    float64 rounding noise (e.g. 3 * (1/3) vs 1.0, relative FLOAT64_NOISE) are one point too; where
    their outputs differ, the output at the member exact arithmetic gives (nearest a short decimal) wins.
    """
    clusters: list[list[tuple[float, Atom]]] = []
    for x, v in sorted(points, key=lambda p: p[0]):
        if clusters and abs(x - clusters[-1][0][0]) <= FLOAT64_NOISE * max(1.0, abs(x)):
            clusters[-1].append((x, v))
        else:
            clusters.append([(x, v)])
    merged = []
    for cluster in clusters:
        x0, v0 = min(cluster, key=lambda p: abs(p[0] - round(p[0], 9)))
        for x, v in cluster:
            if x == x0 and v != v0:
                raise CompileError([Diagnostic(
                    f"'{node.text}' gives {v0!r} and {v!r} for inputs that are the same number ({x})",
                    node.span, "a compiled model reads numbers, so 1 and 1.0 cannot lead to different results")])
        merged.append((x0, v0))
    return merged


def _affine(points: list[tuple[float, Atom]]) -> tuple[float, float] | None:
    """(a, b) with out == a*x + b on every point (exactly, up to 1e-12), else None."""
    if not all(is_number(v) or isinstance(v, bool) for _, v in points):
        return None
    pts = sorted({x: float(v) for x, v in points}.items())
    if len(pts) < 2:
        return (0.0, pts[0][1]) if pts else None
    (x0, y0), (x1, y1) = pts[0], pts[-1]
    a = (y1 - y0) / (x1 - x0)
    b = y0 - a * x0
    ok = all(abs(a * x + b - y) <= 1e-12 * max(1.0, abs(y)) for x, y in pts)
    return (a, b) if ok else None

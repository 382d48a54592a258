"""How a map (a fused chain of elementwise maps) is computed: a free view, a step MLP or a table MLP.

A chain of maps is fused: its *support* is the set of s-ops it is computed from, expanded input by input
while one cheap block can still compute the whole chain. One categorical support is a free view (its
one-hot terms regrouped); one numerical support, plus at most one categorical context, is a step MLP;
several categorical supports are one table MLP; an exactly affine map of numerical s-ops is a free
numerical view. Mixed into `compiler.encode._Encoder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from compiler import mlp, numeric
from compiler.blocks import (
    ONE,
    Atom,
    Dim,
    Encoded,
    Encoding,
    Terms,
    is_number,
    sort_values,
    value_key,
)
from compiler.fits import affine_points, exact_affine_fit, merge_points
from compiler.graph import IRNode, Op
from compiler.values import apply_map, input_combinations
from rasp.errors import CompileError, Diagnostic

if TYPE_CHECKING:
    from compiler.encode import _Encoder as _Base
else:
    _Base = object

# A fused chain of maps over several categorical s-ops is one table up to this many input combinations.
MAX_FUSED_TABLE = 4096
# A map is tabulated over at most this many combinations of its inputs' values (a guard: beyond it,
# compiling takes minutes and gigabytes).
MAX_ROWS = 2_000_000
# A numerical s-op that matters to a map only through this many classes of its values is classified.
MAX_CLASSES = 8


class MapsMixin(_Base):
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
            direct = tuple(dict.fromkeys(i for i in node.inputs if self.g[i].op is not Op.CONST))
            if not self.cheap(tuple(out)) and self.cheap(direct):
                # Expanding one input made the rest costly (`vals if indices > plus else 0`: the
                # condition's sources plus vals): compute the inputs first, then one cheap block.
                out = dict.fromkeys(direct)
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
        if (
            node.op is Op.MAP
        ):  # a materialised map: numbers with more than two values are read as numbers
            vals = self.values(index)
            return len(vals) > 2 and all(is_number(v) for v in vals)
        return node.op in (Op.LENGTH, Op.SELECTOR_WIDTH) or (
            node.op is Op.AGGREGATE and self.is_mean(node)
        )

    def x_of(self, index: int, value: Atom) -> float:
        """Where a numeric source's value sits on its numerical reading."""
        return 1.0 / (value + 1) if self.reads_frac(index) else float(value)

    def x_reading(self, index: int) -> Encoded:
        node = self.g[index]
        if self.reads_frac(index):
            return self._frac(node)
        return self.reading(index, Encoding.NUMERICAL)

    def x_error(self, index: int) -> numeric.ErrorBound | None:
        """Worst float32 error of a numeric source's reading (None: only its own rounding)."""
        node = self.g[index]
        if node.op is Op.AGGREGATE:
            values = [float(v) for v in self.values(node.inputs[1])]
            return numeric.mean_error(self.n_max + 1, values, float(node.value))
        return None

    def _map(self, node: IRNode, encoding: Encoding) -> Encoded:
        vals = self.values(node.index)
        if encoding is Encoding.NUMERICAL and not all(
            is_number(v) or isinstance(v, bool) for v in vals
        ):
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.text}' is read as a number but has values {vals[:4]}",
                        node.span,
                    )
                ]
            )
        direct = tuple(dict.fromkeys(i for i in node.inputs if self.g[i].op is not Op.CONST))
        if len(direct) > 1 and all(self.is_numeric_source(i) for i in direct):
            affine = self._affine_view(node, direct, list(direct), [])
            if affine is not None:  # e.g. n_opens - n_closes: free
                if encoding is Encoding.NUMERICAL:
                    return affine
                x = self.reading(node.index, Encoding.NUMERICAL)
                return self._decode_numeric(node, x, [(float(v), v) for v in vals], encoding)
        return self._map_over(node, self.support(node.index), encoding, last_resort=True)  # type: ignore[return-value]

    def _map_over(
        self,
        node: IRNode,
        support: tuple[int, ...],
        encoding: Encoding,
        *,
        last_resort: bool,
    ) -> Encoded | None:
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
            if len(numeric) == 2 and not categorical:
                coarse = self._coarse_steps(node, support, encoding)
                if coarse is not None:
                    return coarse
                contextual = self._context_steps(node, support, encoding)
                if contextual is not None:
                    return contextual
        elif len(categorical) > 1 and int(np.prod(sizes)) > MAX_FUSED_TABLE and not last_resort:
            return None
        one_block = (not numeric and len(categorical) == 1) or (
            len(numeric) == 1 and len(categorical) <= 1
        )
        # Readings first: a categorical reading decides which values it distinguishes (canonical).
        readings = [
            self.reading(s, Encoding.CATEGORICAL) for s in (categorical if one_block else support)
        ]
        rows = self._rows(node, support)
        if not numeric and len(categorical) == 1:
            return self._map_view(node, support[0], rows, encoding)
        if len(numeric) == 1 and len(categorical) <= 1:
            return self._map_steps(node, support, numeric[0], rows, encoding)
        out = self._materialise(node, encoding, vals)
        table = {combo: v for combo, v in rows}
        self.mlps.append(
            mlp.table_mlp(readings, table, out, op=node.text, name=node.name, exact=self.exact)
        )
        return out

    def _rows(self, node: IRNode, support: tuple[int, ...]) -> list[tuple[tuple[Atom, ...], Atom]]:
        rows = []
        for n, combo in enumerate(input_combinations(support, self.vs.relation, self.vs.values)):
            if n >= MAX_ROWS:  # fail fast and located, not after minutes and gigabytes
                names = ", ".join(f"'{self.g[s].text}'" for s in support)
                raise CompileError(
                    [
                        Diagnostic(
                            f"'{node.text}' is computed from {names}, whose values combine in more "
                            f"than {MAX_ROWS:,} ways at this maximum length",
                            node.span,
                            "use a smaller maximum length, or compute it from s-ops with fewer "
                            "values (e.g. round a mean before using it)",
                        )
                    ]
                )
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
                raise CompileError(
                    [
                        Diagnostic(
                            f"'{node.text}' gives {merged[key][1]!r} and {out!r} for inputs that are equal numbers",
                            node.span,
                            "a compiled model reads numbers, so 1 and 1.0 cannot lead to different results",
                        )
                    ]
                )
            merged.setdefault(key, (canon, out))
        return list(merged.values())

    def _affine_view(
        self,
        node: IRNode,
        support: tuple[int, ...],
        numeric: list[int],
        categorical: list[int],
    ) -> Encoded | None:
        """sum_k a_k * x_k + b over numeric sources (no categorical ones), when that is exact: a free view."""
        if categorical:
            return None
        size = int(np.prod([len(self.values(s)) for s in support]))
        if size > MAX_FUSED_TABLE * 64:
            return None
        rows = self._rows(node, support)
        numbers = all(
            is_number(v) or isinstance(v, bool) for combo, out in rows for v in (*combo, out)
        )
        if not rows or not numbers:
            return None
        coef = exact_affine_fit(
            [[float(c) for c in combo] for combo, _ in rows],
            [float(v) for _, v in rows],
        )
        if coef is None:
            return None
        terms: dict[Dim, float] = {}
        for a, s in zip(coef[:-1], support):
            for d, c in self.reading(s, Encoding.NUMERICAL).number:  # a width: decoded first
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

    def _coarse_steps(
        self, node: IRNode, support: tuple[int, ...], encoding: Encoding
    ) -> Encoded | None:
        """A map of two numerical s-ops where one matters only through a few classes of its values
        (`indicator(width > 0) * length`): a step MLP sorts that one into classes, and the map is a
        step MLP over the other with the class as context. None when neither has few classes."""
        rows = self._rows(node, support)
        if not all(is_number(v) or isinstance(v, bool) for combo, _ in rows for v in combo):
            return None
        for k in (0, 1):
            source, other = support[k], support[1 - k]
            tables: dict[tuple, dict[tuple, tuple]] = {}
            members: dict[tuple, Atom] = {}
            for combo, out in rows:
                tables.setdefault(value_key(combo[k]), {})[value_key(combo[1 - k])] = value_key(out)
                members[value_key(combo[k])] = combo[k]
            representative: dict[frozenset, Atom] = {}
            class_of = {
                v: representative.setdefault(frozenset(t.items()), members[v])
                for v, t in tables.items()
            }
            if len(representative) > MAX_CLASSES or len(representative) == len(tables):
                continue
            name = f"{self.g[source].name}~{node.name}"
            classes = Encoded.materialised_categorical(name, sort_values(representative.values()))
            for terms in classes.one_hot:
                self.bounds[terms[0][0]] = 1.0
            points = [(self.x_of(source, members[v]), c) for v, c in class_of.items()]
            self.mlps.append(
                mlp.numeric_mlp(
                    self.x_reading(source),
                    merge_points(node, points),
                    classes,
                    op=f"classes of {self.g[source].text} for {node.text}",
                    name=name,
                    x_error=self.x_error(source),
                    exact=self.exact,
                )
            )
            per_class: dict[tuple, tuple[Atom, list[tuple[float, Atom]]]] = {}
            for combo, out in rows:
                c = class_of[value_key(combo[k])]
                x = self.x_of(other, combo[1 - k])
                per_class.setdefault(value_key(c), (c, []))[1].append((x, out))
            out_enc = self._materialise(node, encoding, self.values(node.index))
            self.mlps.append(
                mlp.numeric_mlp(
                    self.x_reading(other),
                    [],
                    out_enc,
                    op=node.text,
                    name=node.name,
                    context=classes,
                    context_points={c: merge_points(node, p) for c, p in per_class.values()},
                    x_error=self.x_error(other),
                    exact=self.exact,
                )
            )
            return out_enc
        return None

    def _context_steps(self, node: IRNode, support: tuple[int, ...], encoding: Encoding) -> Encoded:
        """A map of two numerical s-ops whose joint table is too big (`length * mean`, the
        original's `count`): the one with fewer values is read categorically as the context of a
        step MLP over the other, O(values) wide instead of O(product)."""
        sizes = [len(self.values(s)) for s in support]
        x_src = support[0] if sizes[0] >= sizes[1] else support[1]
        # The context's reading first: it decides which values it distinguishes (canonical).
        self.reading(support[1] if x_src == support[0] else support[0], Encoding.CATEGORICAL)
        rows = self._rows(node, support)
        return self._map_steps(node, support, x_src, rows, encoding)

    def _map_steps(
        self,
        node: IRNode,
        support: tuple[int, ...],
        x_src: int,
        rows: list,
        encoding: Encoding,
    ) -> Encoded:
        """A map of one numerical source (and at most one categorical context): one step MLP."""
        x = self.x_reading(x_src)
        xi = support.index(x_src)
        if len(support) == 1:
            points = [(self.x_of(x_src, c[0]), v) for c, v in rows]
            affine = affine_points(points) if encoding is Encoding.NUMERICAL else None
            if affine is not None:  # e.g. 2 * mean: a free numerical view
                a, b = affine
                number = tuple((d, a * c) for d, c in x.number) + ((ONE, b),)
                return Encoded(
                    node.name,
                    Encoding.NUMERICAL,
                    self.values(node.index),
                    number=number,
                )
            return self._decode_numeric(node, x, points, encoding, self.x_error(x_src))
        ci = 1 - xi
        context = self.reading(support[ci], Encoding.CATEGORICAL)
        per_context: dict[tuple[str, Any], tuple[Atom, list[tuple[float, Atom]]]] = {}
        for combo, v in rows:
            c = combo[ci]
            per_context.setdefault(value_key(c), (c, []))[1].append(
                (self.x_of(x_src, combo[xi]), v)
            )
        context_points = {c: merge_points(node, pts) for c, pts in per_context.values()}
        out = self._materialise(node, encoding, self.values(node.index))
        spec = mlp.numeric_mlp(
            x,
            [],
            out,
            op=node.text,
            name=node.name,
            context=context,
            context_points=context_points,
            x_error=self.x_error(x_src),
            exact=self.exact,
        )
        self.mlps.append(spec)
        return out


def _add_terms(parts: list[Terms]) -> Terms:
    total: dict[Dim, float] = {}
    for terms in parts:
        for d, c in terms:
            total[d] = total.get(d, 0.0) + c
    return tuple((d, c) for d, c in total.items() if c != 0.0)

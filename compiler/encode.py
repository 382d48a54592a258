"""Encodings: how every s-op is read from the residual stream, and the blocks that compute it.

Decisions, per node:
- tokens are categorical *views* of the raw token one-hot (`tokens_int` groups raw tokens by `int()`);
  indices are the positional one-hot `indices:i` (or the numerical `indices` dim); constants read `one`.
- length and selector_width of a conjunction are one head writing `1/(w+1)` into `<name>.frac`; a map
  of them is a step MLP over that fraction (with a categorical context for `length - indices - 1`).
  selector_width of a disjunction is a signed sum of conjunction widths (inclusion-exclusion,
  `selectors.WidthPartsMixin`).
- maps are fused and computed by views, step MLPs or table MLPs (`maps.MapsMixin`).
- an aggregate is categorical (value one-hot -> output one-hot) when its values are strings or bools
  (the interpreter refuses several selected keys) or the selector provably selects <= 1 key; otherwise
  it is a numerical mean.
- selectors become conjunctions of atoms, or one atom over joint readings (`selectors.SelectorsMixin`).
- numbers that are equal (1, 1.0) share one categorical column (`canonical`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compiler import attention, mlp, numeric
from compiler.blocks import (
    ONE,
    Atom,
    Dim,
    Encoded,
    Encoding,
    MLPSpec,
    Plan,
    PlannedHead,
    is_number,
    sort_values,
    value_key,
)
from compiler.fits import merge_points
from compiler.graph import Graph, IRNode, Op
from compiler.maps import MapsMixin
from compiler.selectors import ALL_TRUE, SelectorsMixin, WidthPartsMixin
from compiler.values import ValueSets, input_combinations
from rasp import sops
from rasp.errors import CompileError, Diagnostic


class _Skip(Exception):
    """A node that depends on an already-reported failure."""


def plan_encodings(graph: Graph, values: ValueSets, vocab: tuple[Atom, ...]) -> Plan:
    """Choose every reading and build every block; one CompileError with every reason."""
    return _Encoder(graph, values, vocab).run()


class _Encoder(MapsMixin, SelectorsMixin, WidthPartsMixin):
    def __init__(self, graph: Graph, values: ValueSets, vocab: tuple[Atom, ...]) -> None:
        self.g, self.vs, self.vocab, self.n_max = graph, values, vocab, values.max_len
        self.heads: list[PlannedHead] = []
        self.mlps: list[MLPSpec] = []
        self.bounds: dict[Dim, float] = {}
        # dims whose value is exact in any float32 order (integer activations, exact copies)
        self.exact: set[Dim] = set()
        self.memo: dict[tuple[Any, ...], Any] = {}
        self.failed: set[tuple[Any, ...]] = set()
        self.problems: list[Diagnostic] = []
        self.canon: dict[
            int, dict[tuple[str, Any], Atom]
        ] = {}  # node -> value -> value its reading uses

    # -- driver -----------------------------------------------------------------------------------

    def run(self) -> Plan:
        for node in self.g.nodes:  # attention first, so independent failures are all reported
            if node.op is Op.AGGREGATE:
                self._guard(lambda n=node: self.reading(n.index, self.preferred(n)))
            elif node.op in (
                Op.LENGTH,
                Op.SELECTOR_WIDTH,
            ):  # reads_frac may hit a failed input too
                self._guard(
                    lambda n=node: (
                        self._frac(n)
                        if self.reads_frac(n.index)
                        else self.reading(n.index, Encoding.NUMERICAL)
                    )
                )
        root = self.g.output
        output = self._guard(lambda: self.reading(root.index, self.output_encoding(root)))
        self._check_output_types(root, output)
        if self.problems or output is None:
            raise CompileError(
                self.problems or [Diagnostic("cannot compile the program", root.span)]
            )
        return Plan(
            tuple(self.heads),
            tuple(self.mlps),
            output,
            self.seq_type(root),
            dict(self.bounds),
            self.values(root.index),
        )

    def _check_output_types(self, root: IRNode, output: Encoded | None) -> None:
        """A decoded number cannot tell False from 0 or True from 1: refuse an output where both can
        occur. The exception: a categorical aggregate whose values never collide and whose default
        is the only other type (`aggregate(sel, tokens == "a")` with the default 0, the original's
        `[0, T, F]`): it copies the selected key's column or BOS's default column, one per value."""
        vals = self.values(root.index)
        if _collide(vals):
            if (
                output is not None
                and output.is_categorical
                and root.op is Op.AGGREGATE
                and not _collide(self.values(root.inputs[1]))
            ):
                return
            bools = {v for v in vals if isinstance(v, bool)}
            self.problems.append(
                Diagnostic(
                    f"'{root.text}' can be a bool or a number ({sorted(bools)} and numbers equal to them)",
                    root.span,
                    "a compiled model reads False as 0 and True as 1; make an aggregate's "
                    "default the same type as its values",
                )
            )

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
            case Op.LENGTH | Op.SELECTOR_WIDTH if self.reads_frac(node.index):
                return self._decode_numeric(
                    node,
                    self._frac(node),
                    [(1.0 / (v + 1), v) for v in vals],
                    Encoding.CATEGORICAL,
                )
            case Op.SELECTOR_WIDTH:
                x = self.reading(node.index, Encoding.NUMERICAL)
                return self._decode_numeric(
                    node, x, [(float(v), v) for v in vals], Encoding.CATEGORICAL
                )
            case Op.AGGREGATE:
                if self.is_mean(node):
                    x = self.reading(node.index, Encoding.NUMERICAL)
                    return self._decode_numeric(
                        node,
                        x,
                        [(float(v), v) for v in vals],
                        Encoding.CATEGORICAL,
                        self.x_error(node.index),
                    )
                return self._aggregate(node, Encoding.CATEGORICAL)
            case Op.MAP:
                return self._map(node, Encoding.CATEGORICAL)
        raise CompileError([Diagnostic(f"'{node.text}' is not an s-op", node.span)])

    def _numerical(self, node: IRNode) -> Encoded:
        vals = self.values(node.index)
        if not all(is_number(v) or isinstance(v, bool) for v in vals):
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.text}' has non-numeric values and cannot be averaged",
                        node.span,
                        "aggregate numbers, or select at most one key",
                    )
                ]
            )
        match node.op:
            case Op.TOKENS:
                return self._token_view(node, numerical=True)
            case Op.INDICES:
                return Encoded.materialised_numerical("indices", vals)
            case Op.CONST:
                return Encoded(
                    node.name,
                    Encoding.NUMERICAL,
                    vals,
                    number=((ONE, float(node.value)),),
                )
            case Op.LENGTH | Op.SELECTOR_WIDTH if self.reads_frac(node.index):
                return self._decode_numeric(
                    node,
                    self._frac(node),
                    [(1.0 / (v + 1), v) for v in vals],
                    Encoding.NUMERICAL,
                )
            case Op.SELECTOR_WIDTH:
                return self._width_sum(node)
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
            one_hot = tuple(
                tuple((d, 1.0) for d, c in raw if value_key(c) == value_key(v)) for v in vals
            )
            return Encoded(node.name, Encoding.CATEGORICAL, vals, one_hot=one_hot)
        return Encoded(
            node.name,
            Encoding.NUMERICAL,
            vals,
            number=tuple((d, float(c)) for d, c in raw),
        )

    def _view_numerical(self, node: IRNode, cat: Encoded) -> Encoded:
        terms: dict[Dim, float] = {}
        reachable = {value_key(v) for v in self.values(node.index)}
        for v, hot in zip(cat.values, cat.one_hot):
            if not (is_number(v) or isinstance(v, bool)) and value_key(v) not in reachable:
                continue  # a column the reading has but the node never takes (a select never true)
            for d, c in hot:
                terms[d] = terms.get(d, 0.0) + float(v) * c
        return Encoded(
            node.name,
            Encoding.NUMERICAL,
            self.values(node.index),
            number=tuple(terms.items()),
        )

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

    def reads_frac(self, index: int) -> bool:
        """length, and selector_width of a conjunction: one head writing 1/(w+1)."""
        node = self.g[index]
        return node.op is Op.LENGTH or (
            node.op is Op.SELECTOR_WIDTH and self.width_parts(node.inputs[0]) is None
        )

    def _width_sum(self, node: IRNode) -> Encoded:
        """selector_width as a signed sum of conjunction widths, each decoded by its own step MLP."""
        parts = self.width_parts(node.inputs[0])
        assert parts is not None
        widths = tuple(range(self.n_max + 1))
        terms: dict[Dim, float] = {}
        for k, (sign, atoms) in enumerate(parts):
            frac_dim, part_name = Dim(f"{node.name}.frac{k}"), f"{node.name}.part{k}"
            spec = attention.selector_width_head(
                atoms, frac_dim, op=f"{node.text} (term {k})", name=part_name
            )
            self.heads.append(PlannedHead(spec, ("sw-part", node.inputs[0], k)))
            frac = Encoded(
                frac_dim.name,
                Encoding.NUMERICAL,
                sort_values(1.0 / (w + 1) for w in widths),
                number=((frac_dim, 1.0),),
            )
            part = Encoded.materialised_numerical(part_name, widths)
            self.bounds[frac_dim], self.bounds[Dim(part_name)] = 1.0, float(self.n_max)
            self.mlps.append(
                mlp.numeric_mlp(
                    frac,
                    [(1.0 / (w + 1), w) for w in widths],
                    part,
                    op=f"{node.text} (term {k})",
                    name=part_name,
                    exact=self.exact,
                )
            )
            terms[Dim(part_name)] = terms.get(Dim(part_name), 0.0) + sign
        return Encoded(
            node.name,
            Encoding.NUMERICAL,
            self.values(node.index),
            number=tuple(terms.items()),
        )

    def _decode_numeric(
        self,
        node: IRNode,
        x: Encoded,
        points: list[tuple[float, Atom]],
        encoding: Encoding,
        x_error: float | numeric.ErrorBound | None = None,
    ) -> Encoded:
        merged = merge_points(node, points)
        # A number is read back as one value: 1 and 1.0 (equal numbers) share one one-hot column.
        out = self._materialise(node, encoding, sort_values(v for _, v in merged))
        if encoding is Encoding.CATEGORICAL:
            xs = np.array([mx for mx, _ in merged])
            nearest = lambda x: merged[int(np.argmin(np.abs(xs - x)))][1]
            self.canon[node.index] = {value_key(v): nearest(x) for x, v in points}
        spec = mlp.numeric_mlp(
            x,
            merged,
            out,
            op=node.text,
            name=node.name,
            x_error=x_error,
            exact=self.exact,
        )
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
        if encoding is Encoding.NUMERICAL and not (
            is_number(node.value) or isinstance(node.value, bool)
        ):
            raise CompileError(
                [
                    Diagnostic(
                        f"the default {node.value!r} of '{node.text}' is not a number, but the aggregate "
                        "averages numbers",
                        node.span,
                        "give the aggregate a numerical default, e.g. 0",
                    )
                ]
            )
        # The head copies the value's one-hot columns and the default: equal numbers the value's
        # reading does not tell apart (see _decode_numeric) stay one column here too.
        if sop in self.canon and encoding is Encoding.CATEGORICAL:
            canon = {value_key(v): self.canonical(sop, v) for v in self.values(node.index)}
            canon[value_key(node.value)] = node.value
            self.canon[node.index] = canon
        vals = sort_values(
            [
                *(self.canonical(node.index, v) for v in self.values(node.index)),
                *value.values,
                node.value,
            ]
        )
        out = self._materialise(node, encoding, vals)
        spec = attention.aggregate_head(
            atoms,
            value,
            node.value,
            out,
            op=node.text,
            name=node.name,
            single=self.vs.at_most_one[selector],
        )
        self.heads.append(PlannedHead(spec, ("agg", selector)))
        if out.is_categorical and self.vs.at_most_one[selector] and mlp.exact_reading(value, self.exact):
            # one key, weight exactly 1, copying an exact one-hot (or BOS's default): exact
            self.exact.update(d for t in out.one_hot for d, _ in t)
        return out


def _number_key(v: Atom) -> tuple[str, Any]:
    """Equal numbers (1, 1.0) share a key; bools and strings keep their own."""
    if is_number(v):
        return ("number", float(v))
    return value_key(v)


def _collide(vals: Sequence[Atom]) -> bool:
    """Whether a bool and a number equal to it (False and 0, True and 1) are both among `vals`."""
    bools = {v for v in vals if isinstance(v, bool)}
    return any(is_number(v) and float(v) in (0.0, 1.0) and bool(v) in bools for v in vals)

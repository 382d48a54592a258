"""A node as one number in the residual stream: a numerical source's reading, or a free affine view.

`NumberViews.reading(index)` gives the number, how the node's values sit on it, and its float32
error, when node `index` is a numerical source (a width, the length, a mean, a many-valued map) or a
chain of maps that is exactly affine in such sources and in indices or number tokens (`plus - length +
indices`). The selector planner reads a many-valued select side this way before sorting it into the
few classes that matter.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from compiler import numeric
from compiler.affine_fits import affine_fit
from compiler.blocks import ONE, Atom, Dim, Encoded, Encoding, all_numbers, is_number
from compiler.graph import IRNode, Op
from compiler.known_affine import known_affine, known_misfit
from compiler.map_values import apply_map
from compiler.plan_context import PlanContext, Reader

# A map over more input combinations than this is not checked for being affine (the check
# enumerates them).
MAX_VIEW_ROWS = 1 << 20

AffineForm = tuple[dict[int, float], float]  # ({source: coefficient}, constant)


class NumberViews:
    def __init__(self, ctx: PlanContext, reader: Reader) -> None:
        self.ctx, self.reader = ctx, reader
        self._forms: dict[int, AffineForm | None] = {}
        # per form found: a bound on |the node's value - its form| (`affine_fits.affine_fit`'s misfit,
        # through every map on the way)
        self._misfits: dict[int, float] = {}

    def reading(
        self, index: int
    ) -> tuple[Encoded, Callable[[Atom], float], numeric.ErrorBound | None] | None:
        """Node `index` as one number in the residual stream, how its values sit on it, and the
        float32 error of that number; None unless it is a numerical source or an exact affine view
        (free) of numerical sources and indices."""
        ctx, reader = self.ctx, self.reader
        node = ctx.graph[index]
        if node.op is Op.INDICES:  # the positional embedding's exact number
            return reader.reading(index, Encoding.NUMERICAL), float, None
        if node.op is not Op.MAP:
            if not ctx.is_numeric_source(index):
                return None
            return (
                reader.number(index),
                lambda v: reader.x_of(index, v),
                ctx.x_error(index),
            )
        form = self.affine_form(index)
        if form is None:
            return None
        coefs, const = form
        terms: dict[Dim, float] = {ONE: const}
        for src, a in coefs.items():
            for d, c in reader.reading(src, Encoding.NUMERICAL).number:
                terms[d] = terms.get(d, 0.0) + a * c
        number = tuple((d, c) for d, c in terms.items() if c != 0.0)
        misfit = self._misfits[index]
        for src, a in coefs.items():
            misfit += abs(a) * reader.reading(src, Encoding.NUMERICAL).misfit
        view = Encoded(
            node.name, Encoding.NUMERICAL, ctx.values(index), number=number, misfit=misfit
        )
        # The view adds its terms' errors (a mean's, scaled by its coefficient) and float32 rounding
        # of a sum whose partial sums stay below sum |a_k| max |source_k| + |b| (no cancellation).
        largest = {src: max(abs(float(v)) for v in ctx.values(src)) for src in coefs}
        size = abs(const) + sum(abs(a) * largest[src] for src, a in coefs.items())
        error = numeric.rounding_error(max(size, 1.0), len(view.number)) + misfit
        for src, a in coefs.items():
            # a width or the length enters as its decoded whole number (the step MLP's exact
            # output), not as the mean 1/(w+1) that ctx.x_error bounds
            if ctx.graph[src].op in (Op.LENGTH, Op.SELECTOR_WIDTH):
                continue
            bound = ctx.x_error(src)
            if bound is not None:
                error += abs(a) * float(bound.at(np.array([largest[src]]))[0])
        return view, float, numeric.ErrorBound(error)

    def own_number(
        self, index: int
    ) -> tuple[Encoded, Callable[[Atom], float], numeric.ErrorBound | None] | None:
        """`reading(index)`, or for a many-valued map that is no affine view the number its own
        step MLP computes (`(indices + 1) % length`, most_freq's sort key): an MLP, but one that
        addressing and matching read instead of a one-hot of its values."""
        found = self.reading(index)
        if found is None and self.ctx.is_numeric_source(index):
            return self.reader.reading(index, Encoding.NUMERICAL), float, None
        return found

    def affine_form(self, index: int) -> AffineForm | None:
        """Node `index` as sum_k a_k * source_k + b, when every map on the way is exactly affine in
        its own inputs (checked on every combination of their values, a superset of the reachable
        ones); sources are numerical s-ops, or indices and tokens with number values. None else."""
        if index in self._forms:
            return self._forms[index]
        ctx = self.ctx
        node = ctx.graph[index]
        form: AffineForm | None = None
        misfit = 0.0
        vals = ctx.values(index)
        if node.op is Op.CONST:
            form = ({}, float(node.value)) if is_number(node.value) else None
        elif node.op is not Op.MAP:
            ok = ctx.is_numeric_source(index) or (
                node.op in (Op.INDICES, Op.TOKENS) and all_numbers(vals)
            )
            form = ({index: 1.0}, 0.0) if ok else None
        elif all_numbers(vals) and self._of_tokens(index):
            # a map of the tokens alone with number values (indicator(tokens == "(")) is read as a
            # number for free: its values on the token one-hot
            form = ({index: 1.0}, 0.0)
        else:
            inner = [self.affine_form(i) for i in node.inputs]
            found = None if any(f is None for f in inner) else self._affine_fit(node)
            if found is not None:
                fit, misfit = found
                coefs: dict[int, float] = {}
                const = fit[-1]
                for a, (sub, b), i in zip(fit[:-1], inner, node.inputs):  # type: ignore[misc]
                    # the inner form misses the inner value by its misfit, scaled by a here
                    misfit += abs(a) * self._misfits[i]
                    const += a * b
                    for src, c in sub.items():
                        coefs[src] = coefs.get(src, 0.0) + a * c
                form = ({s: c for s, c in coefs.items() if c != 0.0}, const)
        self._forms[index] = form
        self._misfits[index] = misfit if form is not None else math.inf
        return form

    def misfit(self, index: int) -> float:
        """A bound on |node `index`'s value - its `affine_form`| (inf where it has none)."""
        self.affine_form(index)
        return self._misfits[index]

    def _of_tokens(self, index: int) -> bool:
        """Whether node `index` is computed from the tokens (and constants) alone."""
        node = self.ctx.graph[index]
        if node.op in (Op.TOKENS, Op.CONST):
            return True
        return node.op is Op.MAP and all(self._of_tokens(i) for i in node.inputs)

    def _affine_fit(self, node: IRNode) -> tuple[list[float], float] | None:
        """Coefficients [a_1, ..., a_k, b] with fn(x_1..x_k) == sum a_j x_j + b on every combination
        of the inputs' values (exactly, up to float64 noise), and a bound on the misfit (the
        largest |fn(x) - form(x)|: `affine_fits.affine_fit`), or None."""
        domains = [self.ctx.values(i) for i in node.inputs]
        known = known_affine(node.fn, domains)
        if known is not None:
            misfit = known_misfit(node.fn, known, domains, self.ctx.values(node.index))
            return (known, misfit) if math.isfinite(misfit) else None
        if math.prod(len(d) for d in domains) > MAX_VIEW_ROWS:
            return None
        if all(is_number(v) for d in domains for v in d):
            return _numeric_affine_fit(node.fn, domains)
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
        return affine_fit(rows, ys) if rows else None


def _numeric_affine_fit(
    fn: Callable[..., Atom], domains: list[tuple[Atom, ...]]
) -> tuple[list[float], float] | None:
    """`_affine_fit` where every argument is a number: the same points and answer, with the
    arguments' columns built by numpy instead of a list per point (1M points at N = 1024)."""
    grids = np.meshgrid(*(np.array([float(v) for v in d]) for d in domains), indexing="ij")
    columns = np.stack([g.ravel() for g in grids], axis=1)  # [points, k], itertools.product's order
    keep = np.zeros(len(columns), dtype=bool)
    ys = np.zeros(len(columns))
    for k, combo in enumerate(itertools.product(*domains)):
        ok, out = apply_map(fn, combo)
        if not ok:
            continue
        if not is_number(out):
            return None
        keep[k] = True
        ys[k] = float(out)
    return affine_fit(columns[keep], ys[keep]) if keep.any() else None

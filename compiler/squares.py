"""A whole-number s-op as its number and its square, for matching (`compiler.addressing.plan_match`).

Matching scores `-c (q - k)^2` from each side's number and the square of its distance from the
middle of its values. `SquaredReadings.reading(index)` builds both for node `index` once:

- a map of the position: both are columns of the positional embedding (`compiler.positional`);
- an exact whole number in one dimension (an affine view of indices, a decoded width): the number
  is read as it is and a step MLP writes the square in the same layer;
- anything else (a width's 1/(w+1), a step MLP's output): step MLPs decode the whole number
  exactly (`<name>.int`), and the square is stepped on that exact number a layer later, or on
  the input itself, beside the number, where that costs no more (`compiler.exact_numbers`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from compiler.addressing import SquaredReading
from compiler.blocks import ONE, Atom, Dim, Encoded, Encoding, MLPSpec, Terms, sort_values
from compiler.exact_numbers import exact_whole_input, integer_parts
from compiler.maps import MapPlanner
from compiler.number_views import NumberViews
from compiler.numeric import ErrorBound
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built, Memo
from compiler.positional_maps import square_words
from rasp.errors import CompileError

Parts = tuple[list[MLPSpec], Encoded]  # step MLPs and the vector reading of what they write


class SquaredReadings:
    def __init__(
        self,
        ctx: PlanContext,
        reader: Reader,
        built: Built,
        memo: Memo,
        maps: MapPlanner,
        numbers: NumberViews,
    ) -> None:
        self.ctx, self.reader, self.built, self.memo = ctx, reader, built, memo
        self.maps, self.numbers = maps, numbers

    def reading(self, index: int, scale: int = 1) -> SquaredReading | None:
        """Node `index` (whole numbers, or whole times `scale`, a power of 2) as a vector reading
        of its number (times `scale`) and its square, each the sum of dimensions written exactly:
        `<name>.int` and `<name>.sq` (`<name>.x<scale>.int`, ...), from the node's numerical
        reading (a numerical source, an exact affine view of indices and numerical sources, or a
        map computed on its own as one number). None without such a reading, or where the steps
        cannot be resolved (matching then does not apply)."""
        node = self.ctx.graph[index]
        key = ("squared", index) if scale == 1 else ("squared", index, scale)
        return self.memo.once(key, node, lambda: self._make(index, scale))

    def _make(self, index: int, scale: int) -> SquaredReading | None:
        found = self.numbers.own_number(index)
        if found is None:
            return None
        x, x_of, x_error = found
        node = self.ctx.graph[index]
        vals = sort_values(self.ctx.values(index))
        stem = node.name
        if scale != 1:  # `indices + length / 2` times 2: exact (a power of 2), and whole
            x, x_of, x_error = _scaled(x, x_of, x_error, scale)
            stem = f"{node.name}.x{scale}"

        def whole_of(v: Atom) -> int:
            return int(float(v) * scale)  # type: ignore[arg-type]

        whole_vals = [whole_of(v) for v in vals]
        # the square of the distance from the values' middle: up to 4x smaller, so its sums need
        # fewer exact parts (sort at N = 1024: about 165 parts of v^2)
        centre = (min(whole_vals) + max(whole_vals)) // 2
        exact = self.built.exact
        whole = exact_whole_input(x, exact)
        own = [(d, c) for d, c in x.number if d != ONE]
        if whole and len(own) == 1 and self.ctx.is_positional(index) and scale == 1:
            # a map of the position: the embedding writes its square too (no MLP, no layer)
            square_dim = self.maps.positional.embedded_square(node, centre)
            if square_dim is not None:
                one_hot = tuple(
                    (*_own_terms(x, v), (square_dim, float((w - centre) ** 2)))
                    for v, w in zip(vals, whole_vals, strict=True)
                )
                reading = Encoded(f"{node.name}.int", Encoding.VECTOR, vals, one_hot=one_hot)
                return SquaredReading(reading, x.number, (square_dim,), float(centre))

        def square_of(y: Encoded, error: object) -> Parts:
            return integer_parts(
                y,
                [(x_of(v) if y is x else float(whole_of(v)), v) for v in vals],
                lambda v: (whole_of(v) - centre) ** 2,
                name=f"{stem}.sq",
                op=square_words(node.text, centre),
                x_error=error,
                exact=exact,
            )

        built: list[MLPSpec] = []
        try:
            if whole and len(own) == 1:
                # its one dimension holds it
                held = tuple((v, _own_terms(x, whole_of(v))) for v in vals)
                number: Terms = x.number  # (`a + 3`: the dimension holds v - 3, `one` the 3)
                parts, square = square_of(x, None)
            else:
                # A sum of several dims, or not whole numbers (a width's 1/(w+1)): decoded into
                # dims of its own (one per part), exact whole numbers
                built, decoded = integer_parts(
                    x,
                    [(x_of(v), v) for v in vals],
                    whole_of,
                    name=f"{stem}.int",
                    op=f"{node.text} as a whole number (matched)",
                    x_error=x_error,
                    exact=exact,
                )
                held = tuple(zip(decoded.values, decoded.one_hot, strict=True))
                number = tuple((d, 1.0) for d in decoded.dims())  # the parts sum to v
                exact.update(decoded.dims())
                if whole:  # x is exact itself: the square beside the number, in the same layer
                    parts, square = square_of(x, None)
                else:
                    # the square stepped on the exact number just written (a layer later), or on
                    # x itself beside it (its steps then carry x's error) where that costs no
                    # more parts (dimensions) and few more units: hist2's at N = 64, not at 256
                    parts, square = square_of(_sum_view(decoded), None)
                    direct = _unless_refused(lambda: square_of(x, x_error))
                    if direct is not None and _no_larger(direct[0], parts):
                        parts, square = direct
        except CompileError:
            return None
        for spec in [*built, *parts]:
            for dim, column in zip(spec.out_dims, spec.W_out.T, strict=True):
                self.built.bounds[dim] = float(np.abs(column).sum()) + 1.0
            self.built.add_mlp(spec)
        exact.update(square.dims())
        # value v: the number's own dims (or the decoded groups) and the square's groups
        one_hot = tuple(
            (*terms, *square_terms)
            for (_, terms), square_terms in zip(held, square.one_hot, strict=True)
        )
        reading = Encoded(f"{stem}.int", Encoding.VECTOR, vals, one_hot=one_hot)
        return SquaredReading(reading, number, square.dims(), float(centre), scale)


def _scaled(
    x: Encoded, x_of: Callable[[Atom], float], x_error: object, scale: int
) -> tuple[Encoded, Callable[[Atom], float], object]:
    """The reading times `scale` (a power of 2: every product exact), its number at each value,
    and its error bound."""
    number = tuple((d, c * scale) for d, c in x.number)
    values = tuple(float(v) * scale for v in x.values)  # type: ignore[arg-type]
    error = x_error
    if isinstance(x_error, ErrorBound):
        error = ErrorBound(x_error.absolute * scale, x_error.relative)
    return (
        Encoded(x.name, x.encoding, values, number=number, misfit=x.misfit * scale),
        lambda v: x_of(v) * scale,
        error,
    )


def _unless_refused(make: Callable[[], Parts]) -> Parts | None:
    try:
        return make()
    except CompileError:
        return None


def _no_larger(parts: Sequence[MLPSpec], than: Sequence[MLPSpec]) -> bool:
    """No more parts (each one residual dimension) and at most 5% more hidden units, or one more
    (hist's widths 1..N at N = 10: 19 units beside 18 saves a layer, as 21 beside 20 did)."""
    units, other = sum(p.hidden for p in parts), sum(p.hidden for p in than)
    return len(parts) <= len(than) and units <= max(1.05 * other, other + 1)


def _sum_view(vector: Encoded) -> Encoded:
    """The number a vector reading of whole-number groups holds: the sum of its dimensions."""
    return Encoded(
        vector.name,
        Encoding.NUMERICAL,
        vector.values,
        number=tuple((d, 1.0) for d in vector.dims()),
    )


def _own_terms(x: Encoded, v: Atom) -> tuple[tuple[Dim, float], ...]:
    """A single-dimension exact reading's dims at value v (a vector reading's terms)."""
    ((dim, coef),) = [(d, c) for d, c in x.number if d != ONE]  # (callers check: one dimension)
    constant = sum(c for d, c in x.number if d == ONE)
    return ((dim, (float(v) - constant) / coef),)  # type: ignore[arg-type]

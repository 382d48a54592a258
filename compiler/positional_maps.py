"""Maps of the position alone written by the positional embedding, for `compiler.maps.MapPlanner`:
a class of the position as its own one-hot, a float32-exact number as one column of `W_pos`, and
the square of a matched one (`compiler.positional` writes the columns).
"""

from __future__ import annotations

from compiler import positional
from compiler.blocks import Dim, Encoded, Encoding, value_key
from compiler.graph import IRNode
from compiler.plan_context import PlanContext
from compiler.plan_state import Built


def square_words(text: str, centre: int | float) -> str:
    """What a matched number's square column holds, for people: its distance from the values'
    middle, squared (`centre` 0: the number itself)."""
    if centre == 0:
        return f"the square of {text} (matched)"
    shift = f"- {centre}" if centre > 0 else f"+ {-centre}"
    return f"the square of ({text} {shift}) (matched)"


class PositionalMaps:
    def __init__(self, ctx: PlanContext, built: Built) -> None:
        self.ctx, self.built = ctx, built
        # maps of the position already embedded, by their values at every position
        self._embedded: dict[tuple, Encoded] = {}

    def embedded(self, node: IRNode, encoding: Encoding) -> Encoded | None:
        """A map of the position alone, written by the positional embedding (`positional`): a
        class of the position (few values) as its own one-hot, any float32-exact number as one
        dimension. None where neither applies (a many-valued map read categorically regroups the
        index one-hot)."""
        ctx = self.ctx
        vals = ctx.values(node.index)
        at = positional.position_values(ctx, node.index)
        if encoding is Encoding.CATEGORICAL and not ctx.is_position_class(node.index):
            return None
        # A value the value analysis rules out (its sets never miss a value) occurs only at
        # positions no input that evaluates reaches: it drops the lengths the program fails on
        # (`indices if m == m else 0` behind a mean of strings that fails from length 3 has
        # values 0 and 1). Nothing is written there, as where the map raises; returning None
        # instead left a class of the position its own source, read again for ever.
        known = {value_key(v) for v in vals}
        at = [(True, v) if ok and value_key(v) in known else (False, None) for ok, v in at]
        # the same map written twice (`select(indices % 2, indices % 2, ==)`) is embedded once
        same = (
            encoding,
            tuple(value_key(v) for v in vals),
            tuple(value_key(v) if ok else None for ok, v in at),
        )
        if same in self._embedded:
            return self._embedded[same]
        if encoding is Encoding.CATEGORICAL:
            out = positional.embed_one_hot(
                self.built,
                Encoded.materialised_categorical(node.name, vals),
                at,
                node.text,
            )
        else:
            numbers = [float(v) if ok else 0.0 for ok, v in at]
            if not positional.exact_in_float32(numbers):
                return None  # not stored exactly: read through the one-hot, its rounding bounded
            dim = positional.embed_number(self.built, Dim(node.name), numbers, node.text)
            out = Encoded(node.name, Encoding.NUMERICAL, vals, number=((dim, 1.0),))
        self._embedded[same] = out
        return out

    def embedded_square(self, node: IRNode, centre: int) -> Dim | None:
        """A column of the positional embedding holding (v - centre)^2 for map-of-the-position
        `node`'s whole number v at each position (matching reads a number and its square), or None
        where some square is no float32 number."""
        at = positional.position_values(self.ctx, node.index)
        squares = [(float(v) - centre) ** 2 if ok else 0.0 for ok, v in at]
        if not all(x < positional.FLOAT32_WHOLE for x in squares):
            return None
        op = square_words(node.text, centre)
        return positional.embed_number(self.built, Dim(f"{node.name}.sq"), squares, op)

"""Maps computed as gated units (`compiler.gates`), for `compiler.maps.MapPlanner`: a map affine in
one number for each tuple of its categorical contexts' values, or (`ctx.options.category_gates`) affine in
a categorical number for each value of the other, read as the context.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler import gates, map_steps
from compiler.blocks import Atom, Encoded, Encoding, MLPSpec, is_number
from compiler.graph import IRNode
from compiler.map_rows import MapRows
from compiler.map_supports import MapSupports
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import materialise

# a number read categorically as the context of gated units over a categorical number, at most
# this many values (the length at N = 256)
MAX_GATED_CONTEXTS = 256


class GatedMaps:
    def __init__(
        self,
        ctx: PlanContext,
        reader: Reader,
        built: Built,
        points: MapRows,
        supports: MapSupports,
    ) -> None:
        self.ctx, self.reader, self.built = ctx, reader, built
        self.points, self.supports = points, supports

    def over_category(
        self, node: IRNode, support: tuple[int, ...], number: int, category: int, encoding: Encoding
    ) -> Encoded | None:
        """Gated units over the categorical input, with the number read as a one-hot context
        (`ctx.options.category_gates`): `indices / length` is not affine in the length (read as
        1/(n+1)) for each index, but is affine in the index for each length. Only where the
        categorical input is a number, the number has at most MAX_GATED_CONTEXTS values, and no
        map reads the map; None elsewhere. (Its steps over the length summed activations whose
        float32 error broke the output's snap: a one-hot output of 12M parameters at N = 64.)"""
        ctx = self.ctx
        if encoding is not Encoding.NUMERICAL or not ctx.option("category_gates"):
            return None
        if len(ctx.values(number)) > MAX_GATED_CONTEXTS:
            return None
        if not all(is_number(v) and not isinstance(v, bool) for v in ctx.values(category)):
            return None
        if node.index in ctx.graph.read_by_maps():
            return None
        if not self.supports.may_gate(support):
            return None
        rows = self.points.rows(node, support)
        if gates.context_fits(rows, support.index(category), float) is None:
            return None
        return self.over_contexts(node, support, category, [number], encoding)

    def over_contexts(
        self,
        node: IRNode,
        support: tuple[int, ...],
        x_src: int,
        categorical: list[int],
        encoding: Encoding,
    ) -> Encoded | None:
        """The map as gated units over one number and several categorical contexts, or None
        where it is not affine in the number for each tuple of their values. A width is read as
        its whole number (decoded by its own MLP) where the map is affine in that."""
        ctx, reader = self.ctx, self.reader
        if encoding is not Encoding.NUMERICAL or not self.supports.may_gate(support):
            return None
        contexts = [reader.reading(s, Encoding.CATEGORICAL) for s in categorical]
        rows = self.points.rows(node, support)
        # the contexts in support order, as the rows hold them
        ordered = [contexts[categorical.index(s)] for s in support if s != x_src]
        vals = ctx.values(node.index)
        out = Encoded.materialised_numerical(node.name, vals)

        def gated(x: Encoded, at: Callable[[Atom], float]) -> MLPSpec | None:
            xi = support.index(x_src)
            return gates.gated_affine(x, at, xi, ordered, rows, out, op=node.text, name=node.name)

        decoded = reader.reads_frac(x_src)
        # a width is tried on a stand-in first: its decoding MLP is built only where it serves
        if decoded and gated(Encoded.materialised_numerical(node.name, ()), float) is None:
            return None
        view = map_steps.view_of(ctx, reader, x_src, decoded=decoded)
        spec = gated(view.x, view.at)
        if spec is None:
            return None
        out = materialise(self.built, node, encoding, vals)
        self.built.add_mlp(spec)
        return out

"""An aggregate as one attention head: its selector's atoms score the keys, the value is copied.

Categorical (the selected key's one-hot is copied; BOS carries the default's column) when the
values are strings or bools, or when the selector provably selects at most one key; otherwise a
numerical mean (the value read as a number, one output dimension), decoded downstream by step MLPs.
Which of the two an aggregate is, is `PlanContext.is_mean`; this planner builds the head.
"""

from __future__ import annotations

from compiler import attention, mlp
from compiler.addressing import plan_address
from compiler.blocks import Atom, Encoded, Encoding, is_number, sort_values, value_key
from compiler.graph import IRNode
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import materialise
from compiler.selectors import SelectorPlanner
from compiler.snap_one_hot import snapped
from rasp.errors import CompileError, Diagnostic


class AggregatePlanner:
    def __init__(
        self, ctx: PlanContext, reader: Reader, built: Built, selectors: SelectorPlanner
    ) -> None:
        self.ctx, self.reader, self.built, self.selectors = ctx, reader, built, selectors

    def plan(self, node: IRNode, encoding: Encoding) -> Encoded:
        """The head computing aggregate `node`, read as `encoding`."""
        ctx, built = self.ctx, self.built
        selector, sop = node.inputs
        value = self.reader.reading(sop, encoding)
        address = None
        single = ctx.value_sets.at_most_one[selector]
        if ctx.options.snapped_copies and single and encoding is Encoding.CATEGORICAL:
            value = snapped(built, value)
        if encoding is Encoding.CATEGORICAL or (single and ctx.option("addressed_copies")):
            # (a number of one key, `BuildOptions.numeric_copies`, is a copy too: exact addressing
            # needs no matched square of the query, which can cost a layer)
            address = plan_address(ctx, self.selectors.numbers, ctx.graph[selector], built.exact)
        # (without an exactly-one proof, a select between whole numbers is a matching atom)
        atoms = [] if address is not None else self.selectors.atoms(selector)
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
        # reading does not tell apart (see readings.decode_numeric) stay one column here too.
        # The default shares the column of a copied value equal to it: given its own column (0.0
        # beside a copied 0 that also stands for a copied mean 0.0), a reader took that column
        # for the default alone and the copied 0.0 for the int (certified and wrong there).
        default = node.value
        if sop in built.canon and encoding is Encoding.CATEGORICAL:
            canon = {value_key(v): built.canonical(sop, v) for v in ctx.values(node.index)}
            default = canon.setdefault(value_key(node.value), node.value)
            built.canon[node.index] = canon
        # A categorical copy has a column for every value its value reading has; a number copied
        # from one key takes the aggregate's own values (its source's at the keys it selects)
        copied = () if encoding is Encoding.NUMERICAL and single else value.values
        vals = sort_values(
            [
                *(built.canonical(node.index, v) for v in ctx.values(node.index)),
                *copied,
                default,
            ]
        )
        if encoding is Encoding.CATEGORICAL:
            vals = _written(vals, value, default)
        out = materialise(built, node, encoding, vals)
        spec = attention.aggregate_head(
            atoms,
            value,
            default,
            out,
            op=node.text,
            name=node.name,
            single=single,
            address=address,
        )
        built.add_head(spec, ("agg", selector))
        if out.is_categorical and single and mlp.exact_reading(value, built.exact):
            # one key, weight exactly 1, copying an exact one-hot (or BOS's default): exact
            built.exact.update(d for t in out.one_hot for d, _ in t)
        return out


def _written(vals: tuple[Atom, ...], value: Encoded, default: Atom) -> tuple[Atom, ...]:
    """`vals` without a value the head never writes: the head writes the column of each value of
    the copied reading and the default's, but the value analysis may list more (it takes
    `v1 * v1` as a product of two independent `v1`s, so 0.5 where the reading of the square,
    enumerated jointly, has only squares). Such a value never occurs. A dimension for it was read
    by the blocks downstream and written by none (an internal error at layout); an empty column
    (no dimension) was still a value the certifier checked: copied by a head from a zero vector,
    or decoded as the output with every logit 0 (an argmax margin of 0, refused). Readers drop
    the rows of a value a reading lacks (as a map's value that no row gives, MapViews.regrouped)."""
    written = {value_key(v) for v in (*value.values, default)}
    return tuple(v for v in vals if value_key(v) in written)

"""A pick (`compiler.picks`) as V one-unit MLP parts and a free view of their sum.

Part k reads the query's one-hot column for value v_k and the mean m_k, and writes

    t_k = relu(m_k - L + 1 - B * (1 - [q == v_k])),  B = H - L + 2,

where every mean lies in [L, H]. At the query's own value the pre-activation is m_k - L + 1 >= 1,
elsewhere at most H - L + 1 - B = -1: each ReLU is on or off with a margin of 1 whatever the
rounding, and exactly one part is on at a real position (the query takes one of the listed values).
The pick is then the view `sum_k t_k + L - 1`, no layer of its own. Each part's reachable points are
the pairs (query value, m_k value), so the certifier checks V small domains instead of the product
of V means' values (each ~N^2/3).
"""

from __future__ import annotations

import numpy as np

from compiler.blocks import ONE, Dim, Encoded, Encoding, MLPDomain, value_key
from compiler.graph import IRNode
from compiler.mlp import Builder, check_size, linear
from compiler.picks import Pick
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built
from compiler.readings import decode_numeric


def plan_pick(
    ctx: PlanContext, reader: Reader, built: Built, node: IRNode, fn: Pick, encoding: Encoding
) -> Encoded:
    """The reading of pick `node` (module doc): V parts and their sum as a numerical view, decoded
    where a one-hot is asked for."""
    vals = ctx.values(node.index)
    if encoding is not Encoding.NUMERICAL:
        # decoded from the numerical reading, whose parts are built once for both readings (built
        # again here, they wrote the parts' dimensions twice, and the certifier refused the model)
        view = reader.reading(node.index, Encoding.NUMERICAL)
        points = [(float(v), v) for v in vals]
        return decode_numeric(built, node, view, points, encoding, ctx.x_error(node.index))
    query, *means = node.inputs
    q = reader.reading(query, Encoding.CATEGORICAL)
    readings = [reader.reading(m, Encoding.NUMERICAL) for m in means]
    numbers = [[float(v) for v in ctx.values(m)] for m in means]
    low = min((min(xs) for xs in numbers if xs), default=0.0)
    high = max((max(xs) for xs in numbers if xs), default=0.0)
    big = high - low + 2.0
    reached = {value_key(v) for v in q.values}
    terms: list[tuple[Dim, float]] = []
    for k, value in enumerate(fn.queries):
        if value_key(value) not in reached:
            continue  # no query takes it: its mean is read by nobody
        name = f"{node.name}.pick{k}"
        dim = Dim(name)
        hot = q.one_hot[q.index_of(value)]
        units = Builder(1)
        # m - L + 1 - B + B * [q == v]
        units.unit(
            linear((readings[k].number, 1.0), (hot, big), (((ONE, 1.0),), 1.0 - low - big)),
            0.0,
            np.ones(1),
        )
        points = [(u, x) for u in q.values for x in numbers[k]]
        check_size(node.text, "pick", len(points), 1, len(hot) + len(readings[k].number) + 1)
        outputs = [x - low + 1.0 if value_key(u) == value_key(value) else 0.0 for u, x in points]
        out = Encoded(name, Encoding.NUMERICAL, tuple(sorted(set(outputs))), number=((dim, 1.0),))
        built.bounds[dim] = high - low + 1.0
        domain = MLPDomain((q, readings[k]), tuple(points), tuple(outputs), out)
        notes = {"kind": "pick", "query": str(value), "mean": ctx.graph[means[k]].name}
        op = f"{node.text} where the query is {value!r}"
        built.add_mlp(units.spec(op, name, (dim,), notes, domain))
        terms.append((dim, 1.0))
    if low - 1.0 != 0.0:
        terms.append((ONE, low - 1.0))
    return Encoded(node.name, Encoding.NUMERICAL, vals, number=tuple(terms))

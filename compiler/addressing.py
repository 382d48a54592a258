"""Numerical addressing: a head that finds the one key whose index equals a number, in O(1) width.

`select(indices, q, ==)` where q is a number the residual stream already holds (an exact affine view
such as `length - indices - 1`) and every query provably selects exactly one key: instead of a
one-hot of q against a one-hot of indices (N x N), the score is the parabola

    score(q, k) = c * (2 q k - k^2) = c * (q^2 - (q - k)^2),

maximal at k = q and at least c lower at every other key. The query reads (2c q, -c) and the key
(i, i^2) from two positional-embedding dimensions (`indices`, `indices^2`); BOS is a virtual key at
index -1, below every real key. Scores grow as c N^2, so float32 limits how far this reaches: the
scale c is chosen from an estimate of the scores' error (where the estimate says no c works, the
planner uses one-hot readings instead), and the certifier has the last word (a model it cannot
prove is refused, located at the aggregate).

Used from `max_len >= MIN_LEN` on, where one-hot readings dominate a model's size.
"""

from __future__ import annotations

import math

import numpy as np

from compiler.blocks import (
    BOS,
    INDEX,
    INDEX_SQUARE,
    ONE,
    Dim,
    Encoded,
    Encoding,
    is_number,
)
from compiler.graph import IRNode, Op
from compiler.number_views import NumberViews
from compiler.numeric import rounding_error
from compiler.plan_context import PlanContext
from rasp import sops

# Below this maximum length one-hot readings are small and numerical addressing is not used.
MIN_LEN = 32
# The gap between two keys' scores the certifier needs for softmax to give the lower one weight 0
# (compiler.certificate.UNDERFLOW, not imported: the certifier's modules import the planners' blocks);
# the scale adds room for the scores' float32 errors.
NEEDED_GAP = 110.0
U = 2.0**-24


class Address:
    """The query and key readings of a numerical-addressing head and its W_Q / W_K (dim -> [2]).

    With a centre m: score = 2c (q - m)(k - m) - c (k - m)^2 = c ((q - m)^2 - (q - k)^2). (Centring
    does not help the certified bound, which counts the magnitudes of the terms that cancel: m = 0.)
    """

    def __init__(self, query: Encoded, key: Encoded, scale: float, centre: int) -> None:
        self.query, self.key, self.scale = query, key, scale
        c, m = scale, float(centre)
        self.w_q: dict[Dim, np.ndarray] = {}
        for d, coef in query.number:
            self.w_q[d] = self.w_q.get(d, np.zeros(2)) + np.array([2 * c * coef, 0.0])
        self.w_q[ONE] = self.w_q.get(ONE, np.zeros(2)) + np.array([-2 * c * m, -c])
        # key: (k - m, (k - m)^2) from (i, i^2); BOS reads as index -1, below every real key
        self.w_k: dict[Dim, np.ndarray] = {
            INDEX: np.array([1.0, -2 * m]),
            INDEX_SQUARE: np.array([0.0, 1.0]),
            ONE: np.array([-m, m * m]),
            BOS: np.array([-1.0 - m, (1.0 + m) ** 2]),
        }


def index_reading(max_len: int) -> Encoded:
    """indices as a vector reading: index i sets (indices, indices^2) to (i, i * i)."""
    values = tuple(range(max_len))
    terms = tuple(((INDEX, float(i)), (INDEX_SQUARE, float(i * i))) for i in values)
    return Encoded("indices", Encoding.VECTOR, values, one_hot=terms)


def plan_address(ctx: PlanContext, numbers: NumberViews, select: IRNode) -> Address | None:
    """Numerical addressing for `select`, or None where it does not apply (the caller then scores
    with one-hot readings)."""
    n = ctx.max_len
    if n < MIN_LEN or select.op is not Op.SELECT or select.comparison is not sops.Comparison.EQ:
        return None
    keys, queries = select.inputs
    if ctx.graph[keys].op is not Op.INDICES or not _exactly_one(ctx, queries):
        return None
    found = numbers.reading(queries)
    if found is None:
        return None
    x, x_of, x_error = found
    if x.is_categorical or any(x_of(v) != float(v) for v in ctx.values(queries)):
        return None  # the number is not the value itself (a width read as 1/(w+1))
    largest = float(n - 1)
    q_error = 0.0 if x_error is None else float(x_error.at(np.array([largest]))[0])
    q_error += rounding_error(max(largest, 1.0), len(x.number))
    # |float32 score - exact| <= c * (rounding of a few products up to 3 (N/2)^2, and the query's
    # error times N): both scale with c, so the gap c needs c * (1 - ratio) >= NEEDED_GAP.
    ratio = 4 * (8 * U * 3 * largest**2 + 2 * largest * q_error)
    if ratio >= 0.9:  # the certifier's bound was about 0.55 c at N = 256 (estimate here: 0.57 c)
        return None
    scale = 2.0 ** math.ceil(math.log2(2.5 * NEEDED_GAP / (1 - ratio)))
    return Address(x, index_reading(n), scale, 0)


def _exactly_one(ctx: PlanContext, queries: int) -> bool:
    """Whether at every position of every length the query is an integer index of that length
    (so `select(indices, q, ==)` selects exactly one key)."""
    relation = ctx.value_sets.relation[queries]
    if relation is None:
        return False
    for (_, length), vals in relation.items():
        for v in vals:
            if not is_number(v) or v != int(v) or not 0 <= v < length:
                return False
    return True

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

Matching (`plan_match`): `select(keys, q, ==)` where the keys take only integer values (read from
their one-hot, or `indices` as (i, i^2)) and q is `indices` or an integer affine view of it (so q^2 is
linear in the positional dimensions), with no proof that exactly one key matches. The score is the
whole square

    score(q, k) = -c (q - k)^2 = c (2 q k - k^2 - q^2),

and BOS scores -c/2 (the head's ordinary constant BOS score). Per query: every matching key scores
exactly 0, BOS c/2 lower, every other key at least c lower (integers: |q - k| >= 1). One or more
matches: they share the weight equally (the mean, BOS weight 0); none: BOS alone (the default).

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
# Matching's scale c: BOS at -c/2 sits NEEDED_GAP below a match (0) and above a miss (<= -c).
MATCH_SCALE = 256.0
# Its query's entry c q^2 is an exact single product while c q^2 < 2^24: q = indices up to 255 (the
# size prediction builds its probes without matching past this length).
MATCH_MAX_LEN = 256


class Address:
    """The query and key readings of a numerical-addressing head and its W_Q / W_K (dim -> [2]).

    With a centre m: score = 2c (q - m)(k - m) - c (k - m)^2 = c ((q - m)^2 - (q - k)^2). (Centring
    does not help the certified bound, which counts the magnitudes of the terms that cancel: m = 0.)
    """

    # BOS scores through its own key row (a virtual index -1): no constant BOS score
    bos_score = 0.0
    # exactly one key is selected (proved by the value analysis)
    single = True

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


class Match:
    """W_Q / W_K (dim -> [3]) of a matching head: q reads (2c q, -c, -c q^2), a key k reads
    (k, k^2, 1), so q.k = -c (q - k)^2; BOS reads 0 on these columns and scores `bos_score` = -c/2.

    `q = a i + b` (i the index): q^2 = a^2 i^2 + 2ab i + b^2, linear in (indices^2, indices, one).
    """

    def __init__(
        self, query: Encoded, key: Encoded, a: int, b: int, scale: float, single: bool
    ) -> None:
        self.query, self.key, self.scale, self.single = query, key, scale, single
        self.bos_score = -scale / 2
        c = scale
        self.w_q: dict[Dim, np.ndarray] = {
            INDEX: np.array([2 * c * a, 0.0, -2 * c * a * b]),
            INDEX_SQUARE: np.array([0.0, 0.0, -c * a * a]),
            ONE: np.array([2 * c * b, -c, -c * b * b]),
        }
        self.w_k: dict[Dim, np.ndarray] = {ONE: np.array([0.0, 0.0, 1.0])}
        if key.encoding is Encoding.VECTOR:
            self.w_k[INDEX] = np.array([1.0, 0.0, 0.0])
            self.w_k[INDEX_SQUARE] = np.array([0.0, 1.0, 0.0])
            return
        for v, terms in zip(key.values, key.one_hot):
            k = float(v)  # type: ignore[arg-type]
            for d, coef in terms:
                row = self.w_k.setdefault(d, np.zeros(3))
                row += coef * np.array([k, k * k, 0.0])


def plan_match(ctx: PlanContext, numbers: NumberViews, select: IRNode) -> Match | None:
    """Matching for `select` (see the module's docstring), or None where it does not apply."""
    n = ctx.max_len
    if not ctx.matching or n < MIN_LEN:
        return None
    if select.op is not Op.SELECT or select.comparison is not sops.Comparison.EQ:
        return None
    keys, queries = select.inputs
    g = ctx.graph
    form = numbers.affine_form(queries)
    if form is None or len(form[0]) != 1:
        return None
    source, a = next(iter(form[0].items()))
    b = form[1]
    # q = a i + b with whole a, b: q is a whole number at every index, so a key it misses is at
    # least 1 away (the gap c); a fractional q could sit nearer a key than BOS's c/2
    if g[source].op is not Op.INDICES or a != int(a) or b != int(b) or a == 0:
        return None
    key_vals = ctx.values(keys)
    if not key_vals or not all(is_number(v) and float(v) == int(v) for v in key_vals):
        return None
    if len(key_vals) > 4 * n:
        return None  # many values: the one-hot form may read them as few classes
    largest_k = max(abs(float(v)) for v in key_vals)
    largest_q = max(abs(a * i + b) for i in (0, n - 1))
    span = (largest_q + largest_k) ** 2  # |q.k| sums at most c * span
    single = ctx.value_sets.at_most_one[select.index]
    if single:
        # at most one match: its weight is 1 whatever the scores' last bits; the scores' rounding
        # (a layer as wide as it needs scales them inexactly) and BOS's error (below) grow as
        # c * span, and the gaps c/2 must outgrow twice that
        ratio = 24 * U * span
        if ratio >= 0.2:
            return None
        scale = max(MATCH_SCALE, 2.0 ** math.ceil(math.log2(1.25 * NEEDED_GAP / (0.5 - 2 * ratio))))
    else:
        # Several matches share the weight equally only if their scores are exactly equal. The
        # query's entries 2c q and -c q^2 are single products, exact while c q^2 < 2^24 (hence the
        # fixed c, just enough for the gaps); every score is then a multiple of c/2 (BOS's -c/2,
        # assembly's PAD column a multiple of PAD_GRID) of size at most c span sqrt(d_head), the
        # key's entries multiples of sqrt(d_head): below 2^24 steps, exact in any order (the
        # certifier's `row_grid`).
        scale = MATCH_SCALE
        if scale * largest_q**2 >= 2.0**24 or 8 * span >= 2.0**24:
            return None
        # BOS's score errs by the float32 error the BOS residual carries on the key's dimensions
        # (an MLP's one-hot there, cancelled through the `bos` row) times weights up to k^2 and
        # c q^2: about 3.5 u c span (certified: 0.84 at N = 64, 13.9 at N = 256); it must stay
        # below the gap's room c/2 - NEEDED_GAP.
        if 4 * U * scale * span >= scale / 2 * (1 - 4 * U) - NEEDED_GAP:
            return None
    if g[keys].op is Op.INDICES:
        key = index_reading(n)
    else:
        key = numbers.reader.reading(keys, Encoding.CATEGORICAL)
        if not all(is_number(v) and float(v) == int(v) for v in key.values):
            return None
    return Match(index_reading(n), key, int(a), int(b), scale, single)

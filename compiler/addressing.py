"""Numerical addressing: a head that finds the one key whose index equals a number, in O(1) width.

`select(indices, q, ==)` where q is a number the residual stream already holds (an exact affine view
such as `length - indices - 1`, or a map a step MLP computes as one number) and every query provably
selects exactly one key: instead of a
one-hot of q against a one-hot of indices (N x N), the score is the parabola

    score(q, k) = c * (2 q k - k^2) = c * (q^2 - (q - k)^2),

maximal at k = q and at least c lower at every other key. The query reads (2c q, -c) and the key
(i, i^2) from two positional-embedding dimensions (`indices`, `indices^2`); BOS is a virtual key at
index -1, below every real key. Scores grow as c N^2, so float32 limits how far this reaches: the
scale c is chosen from an estimate of the scores' error (where the estimate says no c works, the
planner uses one-hot readings instead), and the certifier has the last word (a model it cannot
prove is refused, located at the aggregate). Where q is an integer combination of exact whole
numbers (indices, a length or width a step MLP decodes exactly: `length - indices - 1`), every
product and partial sum is a whole multiple of c below 2^24 of them up to N = 2,364, so the scores
are exact in any order and the error is 0 (the layer's d_head is then a power of 4, so that the
scaling by sqrt(d_head) is exact too): reverse certifies at N = 1024.

Matching (`plan_match`): an atom `select(keys, queries, ==)` between whole numbers, with no proof
that exactly one key matches, scored by the whole square

    score(q, k) = -c (q - k)^2 = c (2 q k - k^2 - q^2):

the query reads (2c q, -c, -c q^2), a key (k, k^2, 1). Each side needs its number and its square as
exact linear terms: an integer affine map of indices reads the positional dimensions (`indices`,
`indices^2`); tokens, constants and s-ops read as a one-hot anyway read their one-hot (value v
weighted v and v^2); anything else (a width, a sum of widths, a count) gets two dimensions (s, s^2)
written by one step MLP from its numerical reading, exact whole numbers (an integer affine map of
such a source reads them too). Both sides are centred on one whole number m (the middle of their
values; the score is unchanged, its terms smaller). Per query every matching key's atom scores
exactly 0, every other key at least c lower (whole numbers: |q - k| >= 1). The atom joins a
conjunction like any other (an ordinary atom scores S where it holds): a selected key scores S per
ordinary atom, BOS c/2 below that in an aggregate (one or more matches share the weight equally,
none leaves BOS alone, the default) and level with it in a selector_width (which reads 1/(w+1) at
BOS).

Both are used at every maximum length: even at N = 10 they make reverse 4x smaller than one-hot
readings of the index (1,363 parameters against 5,804), and the certifier proves them there as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from compiler.blocks import (
    BOS,
    INDEX,
    INDEX_SQUARE,
    ONE,
    Atom,
    Atomic,
    Dim,
    Encoded,
    Encoding,
    MatchScores,
    Terms,
    is_number,
)
from compiler.exact_numbers import exact_whole_input
from compiler.graph import IRNode, Op
from compiler.number_views import NumberViews
from compiler.numeric import rounding_error
from compiler.plan_context import PlanContext
from rasp import sops

# The gap between two keys' scores the certifier needs for softmax to give the lower one weight 0
# (compiler.certificate.UNDERFLOW, not imported: the certifier's modules import the planners' blocks);
# the scale adds room for the scores' float32 errors.
NEEDED_GAP = 110.0
U = 2.0**-24
# Matching's scale c: BOS at -c/2 sits NEEDED_GAP below a match (0) and above a miss (<= -c).
MATCH_SCALE = 256.0
# Every score is a whole multiple of c/2 (the query's entries c q and c q^2 are multiples of c:
# exact products of a power of 2 and a whole number), exact in any order while 8 (|q| + |k|)^2 <
# 2^24 such steps (`plan_match`'s span): with q, k in 0..N-1 centred on their middle,
# |q| + |k| <= N, up to N = 1448 (the size prediction builds its probes without matching past it).
MATCH_MAX_LEN = math.isqrt(2**21 - 1)
# Exact addressing's sums stay below this many grid steps (float32 holds whole numbers to 2^24).
EXACT_LIMIT = 2.0**23


class Address:
    """The query and key readings of a numerical-addressing head and its W_Q / W_K (dim -> [2]).

    With a centre m: score = 2c (q - m)(k - m) - c (k - m)^2 = c ((q - m)^2 - (q - k)^2). (Centring
    does not help the certified bound, which counts the magnitudes of the terms that cancel: m = 0.)
    """

    # BOS scores through its own key row (a virtual index -1): no constant BOS score
    bos_score = 0.0
    # exactly one key is selected (proved by the value analysis)
    single = True

    def __init__(
        self, query: Encoded, key: Encoded, scale: float, centre: int, exact: bool = False
    ) -> None:
        self.query, self.key, self.scale = query, key, scale
        self.exact = exact  # every score a whole multiple of the scale (see _exact_scores)
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


def plan_address(
    ctx: PlanContext, numbers: NumberViews, select: IRNode, exact: set[Dim]
) -> Address | None:
    """Numerical addressing for `select`, or None where it does not apply (the caller then scores
    with one-hot readings). `exact`: the dimensions step MLPs write as exact whole numbers."""
    n = ctx.max_len
    if select.op is not Op.SELECT or select.comparison is not sops.Comparison.EQ:
        return None
    keys, queries = select.inputs
    if ctx.graph[keys].op is not Op.INDICES or not _exactly_one(ctx, queries):
        return None
    # a map that is no affine view, `(indices + 1) % length`: its own step MLP's number (matching
    # would step its square too, a layer later)
    found = numbers.own_number(queries)
    if found is None:
        return None
    x, x_of, x_error = found
    if x.is_categorical or any(x_of(v) != float(v) for v in ctx.values(queries)):
        return None  # the number is not the value itself (a width read as 1/(w+1))
    largest = float(n - 1)
    if exact_whole_input(x, exact) and _exact_scores(x, n):
        # the gap c clears NEEDED_GAP with room; a power of 2, so every score is a whole multiple
        scale = 2.0 ** math.ceil(math.log2(2.5 * NEEDED_GAP))
        return Address(x, index_reading(n), scale, 0, exact=True)
    q_error = 0.0 if x_error is None else float(x_error.at(np.array([largest]))[0])
    q_error += rounding_error(max(largest, 1.0), len(x.number))
    # |float32 score - exact| <= c * (rounding of a few products up to 3 (N/2)^2, and the query's
    # error times N): both scale with c, so the gap c needs c * (1 - ratio) >= NEEDED_GAP.
    ratio = 4 * (8 * U * 3 * largest**2 + 2 * largest * q_error)
    if ratio >= 0.9:  # the certifier's bound was about 0.55 c at N = 256 (estimate here: 0.57 c)
        return None
    scale = 2.0 ** math.ceil(math.log2(2.5 * NEEDED_GAP / (1 - ratio)))
    return Address(x, index_reading(n), scale, 0)


def _exact_scores(x: Encoded, n: int) -> bool:
    """Whether a query x on exact whole-number dimensions (each at most n: indices, a length, a
    width) gives exact scores in any float32 order: the query's sum and every score
    2 q k - k^2 (in steps of c) stay whole numbers below EXACT_LIMIT."""
    if any(d == INDEX_SQUARE for d, _ in x.number):
        return False
    size = sum(abs(c) * (1.0 if d == ONE else float(n)) for d, c in x.number)
    return size < EXACT_LIMIT and 3.0 * float(n) ** 2 < EXACT_LIMIT


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


@dataclass(frozen=True)
class Side:
    """One side of a matched select: the reading its columns read (the certifier enumerates its
    values), the side's number at each of those values, and its number and square as linear terms
    of the residual (exact whole numbers at every reachable value)."""

    reading: Encoded
    number_at: tuple[float, ...]  # per value of `reading`
    x: Terms
    square: Terms
    kind: str  # "indices" (positional dims), "one-hot", "squared" (a step MLP's (s, s^2))

    @property
    def largest(self) -> float:
        return max((abs(v) for v in self.number_at), default=0.0)


def _terms(pairs: list[tuple[Dim, float]]) -> Terms:
    out: dict[Dim, float] = {}
    for dim, coef in pairs:
        out[dim] = out.get(dim, 0.0) + coef
    return tuple((d, c) for d, c in out.items() if c != 0.0)


def _affine_side(
    reading: Encoded,
    t: Terms,
    t_square: tuple[Dim, ...],
    at: tuple[float, ...],
    a: float,
    b: float,
    kind: str,
    m: float = 0.0,
) -> Side:
    """a t + b, from the linear form t (a constant on `one` included) and dims whose sum holds
    (t - m)^2: with B = a m + b, its square is (a (t - m) + B)^2 = a^2 (t - m)^2 + 2aB t + B^2 -
    2aB m (m = 0: a^2 t^2 + 2ab t + b^2)."""
    big_b = a * m + b
    return Side(
        reading,
        tuple(a * v + b for v in at),
        _terms([*((d, a * c) for d, c in t), (ONE, b)]),
        _terms(
            [
                *((d, a * a) for d in t_square),
                *((d, 2 * a * big_b * c) for d, c in t),
                (ONE, big_b * big_b - 2 * a * big_b * m),
            ]
        ),
        kind,
    )


@dataclass(frozen=True)
class SquaredReading:
    """A whole-number s-op as a vector reading: its number is the linear form `number` of the
    residual (the sum of exact parts, or a view such as `a + 3`: its constant on `one`), the square
    of its distance from `centre` the sum of the `square` dims (compiler.exact_numbers), for every
    value. (The centre, the middle of its values, keeps the square's parts few.)"""

    reading: Encoded
    number: Terms
    square: tuple[Dim, ...]
    centre: float = 0.0
    scale: int = 1  # `number` holds the value times this (halves matched doubled)


def _one_hot_side(reading: Encoded, scale: int = 1) -> Side:
    """A one-hot reading's values (times `scale`) as its number, their squares as its square."""
    numbers = tuple(float(v) * scale for v in reading.values)  # type: ignore[arg-type]
    x = [(d, c * v) for v, terms in zip(numbers, reading.one_hot) for d, c in terms]
    sq = [(d, c * v * v) for v, terms in zip(numbers, reading.one_hot) for d, c in terms]
    return Side(reading, numbers, _terms(x), _terms(sq), "one-hot")


def match_atom(query: Side, key: Side, scale: float) -> Atomic:
    """The atom `key == query` scored -c (q - k)^2 = c (2 q k - k^2 - q^2): the query reads
    (2c q, -c, -c q^2), a key (k, k^2, 1)."""
    c = scale
    w_q: dict[Dim, np.ndarray] = {}
    w_k: dict[Dim, np.ndarray] = {}

    def add(rows: dict[Dim, np.ndarray], terms: Terms, column: int, factor: float) -> None:
        for dim, coef in terms:
            rows.setdefault(dim, np.zeros(3))[column] += factor * coef

    add(w_q, query.x, 0, 2 * c)
    add(w_q, ((ONE, 1.0),), 1, -c)
    add(w_q, query.square, 2, -c)
    add(w_k, key.x, 0, 1.0)
    add(w_k, key.square, 1, 1.0)
    add(w_k, ((ONE, 1.0),), 2, 1.0)
    table = np.equal.outer(np.array(query.number_at), np.array(key.number_at))
    return Atomic(query.reading, key.reading, table, match=MatchScores(w_q, w_k, c))


def _whole(values: tuple[Atom, ...]) -> bool:
    return bool(values) and all(is_number(v) and float(v) == int(v) for v in values)


# Sides whose values are halves or quarters (`select(indices, length / 2, ==)`: the middle token)
# are matched scaled by a power of 2: d q == d k exactly where q == k, and d q, d k are whole.
SCALES = (1, 2, 4, 8)


def _scale(values: tuple[Atom, ...]) -> int | None:
    """The smallest power of 2 in SCALES that makes every value whole (exact in float64)."""
    if not values or not all(is_number(v) and math.isfinite(float(v)) for v in values):
        return None
    for d in SCALES:
        if all(float(v) * d == int(float(v) * d) for v in values):
            return d
    return None


# A side with fewer values than this is read as a one-hot; matching pays from here on.
MATCH_MIN_VALUES = 16
# ... or from here on, in the driver's second build at short lengths (`BuildOptions.eager_matching`):
# smaller there, but its squares may need a layer more, so the driver keeps the build with fewer
# layers, then fewer parameters.
EAGER_MATCH_MIN_VALUES = 4


class Squared(Protocol):
    def __call__(self, index: int, scale: int = 1) -> SquaredReading | None:
        """Node `index` as its number (times `scale`) and square, written exactly by step MLPs
        (`compiler.squares.SquaredReadings.reading`), or None."""
        ...


def plan_match(
    ctx: PlanContext,
    numbers: NumberViews,
    squared: Squared,
    select: IRNode,
) -> Atomic | None:
    """The matching atom for `select` (see the module's docstring), or None where it does not
    apply: the caller then scores its one-hot readings' classes."""
    n = ctx.max_len
    if not ctx.options.matching or n > MATCH_MAX_LEN:
        return None
    if select.op is not Op.SELECT or select.comparison is not sops.Comparison.EQ:
        return None
    keys, queries = select.inputs
    k_vals, q_vals = ctx.values(keys), ctx.values(queries)
    d = _scale((*k_vals, *q_vals)) if k_vals and q_vals else None
    if d is None:
        return None
    if max(len(k_vals), len(q_vals)) < (
        EAGER_MATCH_MIN_VALUES if ctx.options.eager_matching else MATCH_MIN_VALUES
    ):
        return None
    query = _side(ctx, numbers, squared, queries, d)
    key = _side(ctx, numbers, squared, keys, d)
    if query is None or key is None or query.kind == key.kind == "one-hot":
        return None
    # Several matches share the weight equally only if their scores are exactly equal: every
    # score is a multiple of c/2 (BOS's -c/2, assembly's PAD column a multiple of PAD_GRID) of
    # size at most c span sqrt(d_head), the query's entries multiples of c: below 2^24 steps, exact
    # in any order (the certifier's `row_grid`).
    # Both sides centred on one whole number m: the score is unchanged, (q - m) - (k - m) = q - k,
    # but its terms are up to 4x smaller (a side's square is its dims' sum, whole numbers).
    numbers = (*query.number_at, *key.number_at)
    centre = float(math.floor((min(numbers) + max(numbers)) / 2))
    query, key = _centred(query, centre), _centred(key, centre)
    span = (query.largest + key.largest) ** 2
    if 8 * span >= 2.0**24 or max(query.largest, key.largest) ** 2 >= 2.0**24:
        return None
    if key.kind == "one-hot":
        # BOS's score errs by the float32 error the BOS residual carries on the key's one-hot (an
        # MLP's, cancelled through the `bos` row) times weights up to k^2 and c q^2: about
        # 3.5 u c span (certified: 0.84 at N = 64, 13.9 at N = 256); it must stay below the gap's
        # room c/2 - NEEDED_GAP. (Positional and squared keys read exact zeros at BOS.)
        if 4 * U * MATCH_SCALE * span >= MATCH_SCALE / 2 * (1 - 4 * U) - NEEDED_GAP:
            return None
    return match_atom(query, key, MATCH_SCALE)


def _centred(side: Side, m: float) -> Side:
    """The side's number minus m: x - m, and its square (x - m)^2 = x^2 - 2 m x + m^2."""
    if m == 0.0:
        return side
    return Side(
        side.reading,
        tuple(v - m for v in side.number_at),
        _terms([*side.x, (ONE, -m)]),
        _terms([*side.square, *((d, -2 * m * c) for d, c in side.x), (ONE, m * m)]),
        side.kind,
    )


def _side(
    ctx: PlanContext, numbers: NumberViews, squared: Squared, index: int, d: int = 1
) -> Side | None:
    """How one side, times d (a power of 2 that makes both sides whole), is matched: an integer
    affine map of indices (the positional dims), a one-hot the model holds anyway (tokens, a
    constant, an s-op read in full), else (s, s^2) written by a step MLP (of a source it is an
    integer affine map of, or of the side itself times d)."""
    g, n = ctx.graph, ctx.max_len
    form = numbers.affine_form(index)
    # (the side's values are read as the form's: exact only where the form misses none)
    if form is not None and len(form[0]) == 1 and numbers.misfit(index) == 0.0:
        source, a = next(iter(form[0].items()))
        a, b = a * d, form[1] * d  # exact: d is a power of 2
        if a == int(a) and b == int(b) and a != 0 and _whole(ctx.values(source)):
            if g[source].op is Op.INDICES:
                at = tuple(float(i) for i in range(n))
                reading = index_reading(n)
                return _affine_side(reading, ((INDEX, 1.0),), (INDEX_SQUARE,), at, a, b, "indices")
            return _squared_side(ctx, squared, source, a, b)
    node = g[index]
    if node.op in (Op.TOKENS, Op.CONST) or numbers.reader.read_in_full(index):
        return _one_hot_side(numbers.reader.reading(index, Encoding.CATEGORICAL), d)
    # (halves, `indices + length / 2`: the step MLPs write the whole number d·v and its square)
    return _squared_side(ctx, squared, index, 1.0, 0.0, d)


def _squared_side(
    ctx: PlanContext, squared: Squared, source: int, a: float, b: float, scale: int = 1
) -> Side | None:
    if len(ctx.values(source)) > 4 * ctx.max_len:
        return None  # many values: the one-hot form may read them as few classes
    found = squared(source, scale)
    if found is None:
        return None
    at = tuple(float(v) * found.scale for v in found.reading.values)  # type: ignore[arg-type]
    return _affine_side(
        found.reading, found.number, found.square, at, a, b, "squared", found.centre
    )

"""An affine map of means with each mean decoded to its values first (`BuildOptions.decoded_sums`).

`a * m0 + b * m1` read as a free view of the two means carries each head's float32 error into the
sum, and where the means' selects read the tokens the sums of two fractions lie about 1/n^4 apart
(7.4e-6 at N = 20): the output's snap is not proved (compiler.mean_sums says why). Here each mean
is first decoded to its own values (a step MLP into its one-hot, exact in the integer band: its
values k/w lie about 1/n^2 apart), and an MLP per mean writes its term a_i * v into a dimension of
its own, `NAME.term<i>`: one unit relu(2 [m_i = v] - 1) per value, whose output weight is a_i * v
rounded to a dyadic grid coarse enough that every sum of the part's output is exact in any float32
order (at most one unit is on, so the sum is that weight). The map is the free view of its terms
plus its constant: what the decoder reads errs by the grid's rounding of each term (2^-23 for a
term up to 2) and one rounding of the view, where the plain sum erred by the heads' errors. A
source that is a function of the position (a positional mean, once compiler.position_functions
prepared it) is read from the one-hot the embedding writes, as exact.
"""

from __future__ import annotations

import math

from compiler import mlp
from compiler.blocks import ONE, Dim, Encoded, Encoding, MLPDomain, MLPSpec, Terms
from compiler.graph import IRNode, Op
from compiler.map_rows import Fit
from compiler.plan_context import PlanContext, Reader
from compiler.plan_state import Built

# a term's weights lie on the grid 2^-k with max |weight| * 2^k at most this: the part's one
# active product (and the certifier's test of its sum, compiler.certify_mlp) stays under 2^24 grid
# steps with room for the rounding
_GRID_STEPS = 2.0**23


def decoded_sum(
    ctx: PlanContext,
    reader: Reader,
    built: Built,
    node: IRNode,
    support: tuple[int, ...],
    fit: Fit,
) -> Encoded | None:
    """The numerical reading of `node`, the affine map `fit` ((coefficients, constant), misfit) of
    the means `support`, as the view of one decoded term per source; None where a source is
    neither a mean nor a function of the position (whose one-hot the embedding writes: a mean
    over a positional select of a positional value becomes one, compiler.position_functions),
    or no source is a mean (the plain view is built then)."""
    g = ctx.graph
    means = [g[s].op is Op.AGGREGATE and ctx.is_mean(g[s]) for s in support]
    if not any(means):
        return None
    if not all(mean or ctx.is_positional(s) for mean, s in zip(means, support, strict=True)):
        return None
    coef, misfit = fit
    terms: dict[Dim, float] = {}
    for k, (a, s) in enumerate(zip(coef[:-1], support, strict=True)):
        if a == 0.0:
            continue
        cat = reader.reading(s, Encoding.CATEGORICAL)  # the mean's step MLP into its one-hot
        term, spec, largest = term_mlp(node, k, cat, float(a))
        if largest == 0.0:
            continue  # a zero coefficient, or a mean that is always 0: no term
        built.add_mlp(spec)
        built.bounds[Dim(term.name)] = largest
        terms[Dim(term.name)] = 1.0
        # the term's exact value is float64's a * v, off a * v by one rounding; and a value the
        # one-hot writes in the column of a float64 twin (1/3 as 0.3333333333333333 and as
        # 0.33333333333333337: one column, compiler.readings.decode_numeric) is that twin's
        twins = max(
            (abs(float(u) - float(built.canonical(s, u))) for u in ctx.values(s)), default=0.0
        )
        misfit += largest * 2.0**-52 + abs(float(a)) * twins
    b = float(coef[-1])
    if b != 0.0:
        terms[ONE] = b
    number: Terms = tuple(terms.items())
    return Encoded(
        node.name, Encoding.NUMERICAL, ctx.values(node.index), number=number, misfit=misfit
    )


def term_mlp(node: IRNode, k: int, cat: Encoded, a: float) -> tuple[Encoded, MLPSpec, float]:
    """The MLP writing a * v of the decoded mean `cat` into `NAME.term<k>`: its reading, spec and
    largest |a * v|."""
    name = f"{node.name}.term{k}"
    products = [a * float(v) for v in cat.values]
    largest = max((abs(p) for p in products), default=0.0)
    out = Encoded.materialised_numerical(name, tuple(sorted(set(products))))
    step = _grid_step(largest)
    b = mlp.Builder(1)
    for hot, p in zip(cat.one_hot, products, strict=True):
        w = round(p / step) * step  # on the grid: exact in float32 (|w| < 2^24 steps)
        if w != 0.0:
            # 1 where the mean is v (an exact one-hot), -1 elsewhere: off
            b.unit(mlp.linear((hot, 2.0)), -1.0, [w])
    domain = MLPDomain((cat,), tuple((v,) for v in cat.values), tuple(products), out)
    notes = {"kind": "decoded term", "input": cat.name, "coefficient": a, "grid": step}
    spec = b.spec(node.text, name, (Dim(name),), notes, domain)
    return out, spec, largest


def _grid_step(largest: float) -> float:
    """The dyadic step 2^-k of a term's weights: the finest with largest * 2^k <= _GRID_STEPS."""
    if largest == 0.0:
        return 1.0
    return 2.0 ** -math.floor(math.log2(_GRID_STEPS / largest))

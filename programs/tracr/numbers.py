"""tracr-style programs over number tokens (ints, and floats for `halves`): numerical means over
selections of any width, numerical maps with arbitrary functions, sums and negative values (which
tracr's own compiler refuses), SequenceMap and LinearSequenceMap. Outputs for `rasp compile
numbers.py:NAME --vocab '[0,1,2,3]' ...`.

    running_mean    mean of the tokens so far                       [2, 4, 0] -> [2, 3.0, 2.0]
    mean_all        mean of all tokens                              [1, 2] -> [1.5, 1.5]
    centered        token minus the mean of all tokens (negative)   [1, 3] -> [-1.0, 1.0]
    squared_half    x * x / 2 (a numerical map)                     [1, 2] -> [0.5, 2.0]
    weighted        2 * token - index (LinearSequenceMap)           [1, 1] -> [2, 1]
    count_greater   how many tokens are greater than mine           [3, 1, 2] -> [0, 2, 1]
    sum_with_prev   token + previous token (None at the start)      [1, 2, 3] -> [None, 3, 5]
    is_max          is my token the largest                         [3, 1, 3] -> [True, False, True]
    parity_mates    tokens of my parity                             [1, 2, 3] -> [2, 1, 2]
    halves          float tokens doubled and rounded                [0.5, 1.5] -> [1, 3]
"""

from rasp import tracr as rasp

_upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
_all = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
_values = rasp.numerical(rasp.Map(lambda x: x, rasp.tokens)).named("values")

running_mean = rasp.numerical(rasp.Aggregate(_upto, _values, default=0)).named("running_mean")
mean_all = rasp.numerical(rasp.Aggregate(_all, _values, default=0)).named("mean_all")
centered = rasp.numerical(rasp.SequenceMap(lambda x, m: x - m, rasp.tokens, mean_all)).named(
    "centered"
)
squared_half = rasp.numerical(rasp.Map(lambda x: x * x / 2, rasp.tokens)).named("squared_half")
weighted = rasp.numerical(rasp.LinearSequenceMap(rasp.tokens, rasp.indices, 2, -1)).named(
    "weighted"
)
count_greater = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GT)).named(
    "count_greater"
)

_prev = rasp.Aggregate(
    rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1), rasp.tokens, default=None
).named("prev")
sum_with_prev = (_prev + rasp.tokens).named("sum_with_prev")

is_max = (count_greater == 0).named("is_max")
parity_mates = rasp.SelectorWidth(
    rasp.Select(rasp.tokens, rasp.tokens, lambda k, q: k % 2 == q % 2)
).named("parity_mates")

halves = rasp.Map(lambda x: round(2 * x), rasp.tokens).named("halves")

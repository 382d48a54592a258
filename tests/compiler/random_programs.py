"""Random RASP programs (as `rasp.sops` graphs) for differential tests against the interpreter."""

from __future__ import annotations

import random

from rasp import sops as S

UNARY = [
    (lambda x: x == "a" if isinstance(x, str) else x % 3, "is_a_or_mod3"),
    (lambda x: str(x)[:1], "first_char"),
    (lambda x: x + 1 if not isinstance(x, str) else x + "!", "succ"),
    (lambda x: x > 1 if not isinstance(x, str) else len(x), "big"),
    (lambda x: round(x) if isinstance(x, float) else x, "round"),
]
BINARY = [
    (lambda x, y: x == y, "equal"),
    (lambda x, y: x if isinstance(y, bool) and y else y, "choose"),
    (lambda x, y: x - y, "minus"),
]


def _none_passing(fn):
    return lambda *args: None if any(a is None for a in args) else fn(*args)


def _number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


# The "twins" flavour: values where 1, 1.0 and True are equal but distinct (means give floats,
# widths ints), and None flows through maps; the soundness bug of a certified-but-wrong model
# (two context columns 1 and 1.0 merged by a dict) was of this kind.
TWIN_UNARY = [
    (_none_passing(lambda x: None if x == 0 else x), "none_if_zero"),
    (_none_passing(lambda x: float(x) if _number(x) else x), "as_float"),
    (_none_passing(lambda x: int(x) if _number(x) and x == int(x) else x), "as_int"),
    (_none_passing(lambda x: x + 1 if _number(x) else x), "succ"),
]
TWIN_BINARY = [
    (_none_passing(lambda x, y: max(x, y) if _number(x) and _number(y) else x), "max"),
    (_none_passing(lambda x, y: x + y if _number(x) and _number(y) else y), "plus"),
    (lambda x, y: y if x is None else x, "first_not_none"),
]


# The "kinds" flavour's extras: what RASP and tracr allow beyond the plain flavour's nodes (the
# other flavours never draw them, so their kept seeds keep their programs).
KIND_CONSTS = [0, 1, 2.5, "a", True, None]
# readers that tell equal numbers of two types apart (0, 0.0 and False): a model reads one number
KIND_UNARY = [
    (lambda x: type(x).__name__, "type_name"),
    (lambda x: isinstance(x, int), "is_int"),
]
KIND_TERNARY = [
    (lambda c, x, y: x if c else y, "if_else"),
    (lambda x, y, z: x if x == y else z, "pick_equal"),
]
KIND_PREDICATES = [
    (lambda k, q: str(k) < str(q), "str(k) < str(q)"),
    (lambda k, q: type(k) is type(q), "same type"),
    (lambda k, q: k == q or k is None, "k == q or k is None"),
    (lambda k, q: bool(k) and not q, "k and not q"),
]


def random_program(
    rng: random.Random,
    depth: int,
    int_tokens: bool,
    twins: bool = False,
    causal: bool = False,
    kinds: bool = False,
) -> S.SOp:
    """A random s-op over tokens, indices and length using every kind of node. `causal`: one a
    causal model can compute, without `length` and with every attention's selector conjoined
    with `select(indices, indices, OP)` for OP `<=` or `<` (a look-back mask). `kinds`: also
    `tokens_float` and `tokens_bool` (int tokens), constant s-ops as values, maps of three s-ops,
    maps telling 0, 0.0 and False apart, and selects by a Python predicate (tracr's `Select`
    with a lambda)."""
    unary, binary = (TWIN_UNARY, TWIN_BINARY) if twins else (UNARY, BINARY)
    leaves = (
        ["tokens", "indices"] + ([] if causal else ["length"]) + (["int"] if int_tokens else [])
    )
    if kinds:
        leaves += ["const"] + (["float", "bool"] if int_tokens else [])
    defaults = [0, -1, None, 0.5] if twins else [0, "z", False, 0.5]

    def sop(d: int) -> S.SOp:
        r = rng.random()
        if d <= 0 or r < 0.25:
            leaf = rng.choice(leaves)
            if leaf == "tokens":
                return S.TokensSOp(name="tokens")
            if leaf == "int":
                return S.TokensSOp(kind=S.TokenKind.INT, name="n")
            if leaf in ("float", "bool"):
                return S.TokensSOp(kind=S.TokenKind(leaf), name=f"tokens_{leaf}")
            if leaf == "const":
                return S.ConstSOp(value=rng.choice(KIND_CONSTS))
            return S.IndicesSOp(name="indices") if leaf == "indices" else S.LengthSOp(name="length")
        if r < 0.5:
            fn, text = rng.choice(unary + KIND_UNARY if kinds else unary)
            return S.MapSOp(fn=fn, inputs=(sop(d - 1),), text=text, loose=twins)
        if r < 0.62 and kinds and rng.random() < 0.3:
            fn, text = rng.choice(KIND_TERNARY)
            return S.MapSOp(fn=fn, inputs=(sop(d - 1), sop(d - 1), sop(d - 1)), text=text)
        if r < 0.62:
            fn, text = rng.choice(binary)
            return S.MapSOp(fn=fn, inputs=(sop(d - 1), sop(d - 1)), text=text, loose=twins)
        if r < 0.85:
            default = rng.choice(defaults)
            return S.AggregateSOp(
                selector=attending(d - 1), sop=sop(d - 1), default=default, loose=twins
            )
        return S.SelectorWidthSOp(selector=attending(d - 1))

    def attending(d: int) -> S.Selector:
        chosen = selector(d)
        if not causal:
            return chosen
        indices = S.IndicesSOp(name="indices")
        back = rng.choice([S.Comparison.LEQ, S.Comparison.LT])
        return S.SelectAnd(
            left=chosen, right=S.Select(keys=indices, queries=indices, comparison=back)
        )

    def side(d: int) -> S.SOp:
        return sop(d) if rng.random() < 0.7 else S.ConstSOp(value=rng.choice([0, 1, "a"]))

    def selector(d: int) -> S.Selector:
        if kinds and rng.random() < 0.2:
            fn, text = rng.choice(KIND_PREDICATES)
            return S.PredicateSelect(keys=side(d - 1), queries=side(d - 1), fn=fn, text=text)
        r = rng.random()
        if d <= 0 or r < 0.5:
            return S.Select(
                keys=side(d - 1), queries=side(d - 1), comparison=rng.choice(list(S.Comparison))
            )
        if r < 0.7:
            return S.SelectAnd(left=selector(d - 1), right=selector(d - 1))
        if r < 0.85:
            return S.SelectOr(left=selector(d - 1), right=selector(d - 1))
        return S.SelectNot(inner=selector(d - 1))

    return sop(depth)


def random_addressing_program(rng: random.Random) -> S.SOp:
    """A random aggregate that selects by `==` between whole numbers of many values: numerical
    addressing (`length - indices - 1`, exact or not), matching (`indices + a`, widths, sums of
    widths and indices), alone or beside a token atom, copying tokens or averaging numbers."""
    t, i, n = S.TokensSOp(name="tokens"), S.IndicesSOp(name="indices"), S.LengthSOp(name="length")
    eq, lt = S.Comparison.EQ, S.Comparison.LT
    a, b = rng.randint(-3, 3), rng.choice([1, 1, 2, -1])

    def mapped(fn, *inputs: S.SOp, text: str) -> S.MapSOp:
        return S.MapSOp(fn=fn, inputs=tuple(inputs), text=text)

    same = S.Select(keys=t, queries=t, comparison=eq)
    before = S.Select(keys=i, queries=i, comparison=lt)
    smaller = S.Select(keys=t, queries=t, comparison=lt)
    w = S.SelectorWidthSOp(
        selector=rng.choice(
            [
                same,
                smaller,
                S.SelectAnd(left=same, right=before),
                S.SelectOr(left=smaller, right=S.SelectAnd(left=same, right=before)),
            ]
        ),
        name="w",
    )
    # a view with a constant that the value analysis sees through a conditional it proves always
    # true: its square was once stepped on the view and its number read without the constant
    a_count = S.SelectorWidthSOp(
        selector=S.Select(keys=t, queries=S.ConstSOp(value="a"), comparison=eq), name="n_a"
    )
    twice = mapped(lambda count: 2 * count, a_count, text="2 * n_a")
    held = mapped(lambda count, double: count <= double, a_count, twice, text="n_a <= 2 * n_a")
    shifted = mapped(lambda width: width + a, w, text=f"w + {a}")
    query = rng.choice(
        [
            mapped(
                lambda c, x, y: x if c else y, held, shifted, twice, text=f"w + {a} if ... else ..."
            ),
            mapped(lambda length, index: length - index - 1, n, i, text="length - indices - 1"),
            mapped(lambda index: b * index + a, i, text=f"{b} * indices + {a}"),
            mapped(lambda length: length - 1 + a, n, text=f"length - 1 + {a}"),
            w,
            mapped(lambda width: b * width + a, w, text=f"{b} * w + {a}"),
            mapped(lambda width, index: width + index, w, i, text="w + indices"),
        ]
    )
    keys = rng.choice([i, i, w, mapped(lambda index: 2 * index, i, text="2 * indices")])
    selector: S.Selector = S.Select(keys=keys, queries=query, comparison=eq)
    if rng.random() < 0.3:
        token_atom = S.Select(keys=t, queries=t, comparison=rng.choice([eq, lt]))
        selector = S.SelectAnd(left=selector, right=token_atom)
    value = rng.choice([t, t, i, w])
    return S.AggregateSOp(
        selector=selector, sop=value, default="-" if value is t else 0, name="out"
    )

"""Corners of the original's language that rasp_gen, rasp_gen_layout and rasp_gen_more never reach.

- An s-op indexed by an int (`s[2]`, `s[-1]`: the original's aggregate loading that position),
  by a float, string or s-op (errors), and a list, string or dict indexed by an s-op (an
  elementwise lookup; a missing key or an index out of range fails on evaluation).
- Functions as values: passed to and returned by functions (compose, apply), in lists and dicts,
  called out of them, and compared (`f == f` is True, `f == g` False: Python's identity).
- `%` formatting a string with atoms, lists and dicts (`"<%s>" % "a"`, `"%5.2f" % x`), and its
  errors. Not with an s-op on the right, which is refused here where the original formats its
  Python object's text (docs/language.md, section 7).
- The library's functions on atoms, with s-ops where atoms are expected, and with too few or too
  many arguments; `full_s`.
- Errors of the original's builtins: `aggregate` of no selector or with an s-op default,
  `selector_width` of an s-op, `range` of four values, `indicator` of an atom, `len` of a number,
  calling a list or an s-op with two inputs, indexing a number, a name never bound.
- Expression statements inside a `def` or `for` body (evaluated, then dropped).
- Binding the original's words: `select` and `aggregate` are names there (its tokens are
  `select(` and `aggregate(`), `len`, `round`, `set`, `on`, `quit` ... keywords.
- Edge values: inf and nan (from `2.0 ^ 1023 * 2`) in atoms and s-ops, huge ints in s-ops and
  selectors, literals with leading zeros, chained comparisons and unary operators, and a ternary
  of an s-op condition with atom or list branches.

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same; the programs of seeds run before this module existed
gain these blocks.
"""

from __future__ import annotations

import random

_SOURCES = ("tokens", "indices + 1", "length - indices", "indices * 0.5", "tokens_str", "indices")
_BAD_INDEX = ("0.5", '"a"', "indices", "True", "-0")
# words of the original's grammar: some are names there (`select`, `aggregate`: its tokens are
# `select(` and `aggregate(`), the others its keywords (a syntax error to bind)
_WORDS = ("len", "range", "zip", "round", "set", "on", "quit", "example", "draw", "load", "full")
_NOT_F = ("1", "[1]", '"f"', "max")
_LETTERS = ("h", "e", "l", "o", "a", "b", "c", "z", "the", "cat")
_FORMATS = (
    '"%d" % 3',
    '"<%s>" % "ab"',
    '"%s" % [1, 2]',
    '"%5.2f" % 2.5',
    '"%x" % 255',
    '"%(k)s" % {"k": 1}',
    '"%%" % []',
    '"%s%s" % [1]',
    '"%d" % "a"',
    '"a" % 1',
    '"%s" % True',
    '"%r" % "q"',
    '"%c" % 65',
    '"%05.1f" % -2.25',
)
_LIBRARY = (
    "average(5)",
    "count(5, 5)",
    "contains(tokens, 1)",
    'max(1, "a")',
    'min("a", "b")',
    "max(indices, 2.5)",
    "shift(tokens, 1)",
    "sort(tokens, 1)",
    "sort(indices, -indices)",
    "has_focus(5)",
    "select_next_identical(5)",
    "select_next_identical(indices)",
    "load_from_location(tokens, indices + 1)",
    "load_from_location(tokens, length - indices - 1)",
    "mark_first_instance(indices, 1)",
    "select_from_last(indices, 2)",
    "selector_width(full_s)",
    "aggregate(full_s, indices)",
    "full_s",
    "count(tokens)",
    "has_focus(select(indices, indices, <), 1)",
)
_ERRORS = (
    "aggregate(1, indices)",
    "aggregate(select(indices, indices, ==), indices, indices)",
    "aggregate(select(indices, indices, ==), indices, select(indices, indices, ==))",
    "selector_width(indices)",
    "selector_width(1)",
    "range(1, 2, 3, 4)",
    "indicator(5)",
    "len(5)",
    "len(indices)",
    "zip(1)",
    "[1](2)",
    "tokens(1, 2)",
    "5[0]",
    '"abc"[1][0][0]',
    "select(indices, select(indices, indices, ==), ==)",
    "{[1]: 2}",
    "round([1])",
    "not select(indices, indices, ==) and indices",
)
_EDGES = (
    "007",
    "00.50",
    "1 < 2 < 3",
    "3 > 2 > 2",
    "indices < indices < indices",
    "indices == indices == indices",
    '"a" < "b" == True',
    "- + - 3",
    "+-indices",
    "not not tokens",
    "True ^ True",
    '"a" * True',
    "10 ^ 400 / 3",
    "indices + 10 ^ 30",
    "select(indices, 10 ^ 30, <)",
    "selector_width(select(indices * 10 ^ 20, indices, <))",
    "aggregate(select(indices, indices, <=), indices * 10 ^ 17)",
    "1 if tokens == tokens else 0",
    '"x" if indices > 1 else tokens',
    "[1] if indices > 1 else 2",
    "tokens if [] else indices",
    "indices * -0.0",
)


def _block(p: str, int_example: bool, rng: random.Random) -> list[str]:
    k, j = rng.randint(-6, 6), rng.randint(-3, 5)
    op = rng.choice(("+", "*", "==", "<", "-"))
    keys = range(6) if int_example else rng.sample(_LETTERS, 5)
    pairs = ", ".join(f"{key!r}: {i}".replace("'", '"') for i, key in enumerate(keys))
    items = ", ".join(str(rng.randint(-9, 9)) for _ in range(rng.randint(1, 6)))
    index = rng.choice(("indices", f"indices - {j}", "-indices", "indices % 2", "length - 1"))
    inf = f"{p}inf"
    choices = [
        [
            f"{p}s = {rng.choice(_SOURCES)};",
            f"{p}s[{k}];",
            f"{p}t = {p}s[{j}] {op} {p}s;",
            f"{p}t;",
            f"{p}s[{rng.choice(_BAD_INDEX)}];",
        ],
        [
            f"{p}l = [{items}];",
            f"{p}l[{index}];",
            f'"{rng.choice(("abcdef", "xy", "q"))}"[{index}];',
            f"{p}d = {{{pairs}}};",
            f"{p}d[{'tokens_int' if int_example else 'tokens'}];",
            f"{p}d[{index}];",
        ],
        [
            f"def {p}sq(x) {{ return x * x {op} 1; }}",
            f"def {p}ap(f, x) {{ return f(x); }}",
            f"def {p}co(f, g) {{ def h(x) {{ return f(g(x)); }} return h; }}",
            f"{p}ap({p}sq, {rng.choice(('3', 'indices', '0.5', 'tokens'))});",
            f"{p}h = {p}co({p}sq, {rng.choice((f'{p}sq', 'average', 'max'))});",
            f"{p}h({rng.choice(('2', 'indices'))});",
            f"{p}co({p}sq, {p}sq)({rng.choice(('2', 'indices', 'length'))});",
            f"[{p}sq, {p}ap][0](2);",
            f'{{"f": {p}sq}}["f"](indices);',
        ],
        [
            f"def {p}f(x) {{ return x; }}",
            f"def {p}g(x) {{ return x; }}",
            f"{p}f == {p}f;",
            f"{p}f == {p}g;",
            f"{p}f == {rng.choice(_NOT_F)};",
            f"{p}e = {p}f;",
            f"{p}e == {p}f;",
            f"[{p}f] == [{p}g];",
            f"{rng.choice(('max', 'count', 'selector_width'))} == {rng.choice(('max', 'min'))};",
            f"{p}f == indices;",
        ],
        [f"{rng.choice(_FORMATS)};" for _ in range(rng.randint(1, 3))],
        [f"{rng.choice(_LIBRARY)};" for _ in range(rng.randint(1, 3))],
        [f"{rng.choice(_ERRORS)};" for _ in range(rng.randint(1, 3))] + [f"{p}never_bound;"],
        [
            f"def {p}b(a) {{ a {op} 1; {p}t = a * 2; return {p}t; }}",
            f"{p}b({rng.choice(('3', 'indices', '0.5'))});",
            f"{p}c = 0;",
            f"for {p}i in range(3) {{ {p}i * 2; {p}c = {p}c + {p}i; }}",
            f"{p}c;",
        ],
        [f"{rng.choice(_EDGES)};" for _ in range(rng.randint(1, 3))],
        [
            f"{inf} = 2.0 ^ 1023 * 2;",
            f"{inf} - {inf};",
            f"indices * {inf};",
            f"round({rng.choice((inf, f'indices * {inf}', f'{inf} - {inf}'))});",
            f"aggregate(select(indices, indices, <=), indices - {inf});",
            f"select(indices * ({inf} - {inf}), indices, ==);",
        ],
    ]
    choices.append(
        [
            f"{rng.choice(_WORDS)} = 1;",
            f"{rng.choice(('select', 'aggregate'))} = {k};",
            "select + 1;",
            "aggregate;",
            "aggregate(select(indices, indices, ==), indices);",
        ]
    )
    weights = (3, 3, 2, 2, 2, 3, 2, 2, 3, 1, 1)
    return rng.choices(choices, weights)[0]


def extra(statements: list[str], prefix: str, int_example: bool, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of these inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        out[at:at] = _block(f"{prefix}x{rng.randint(0, 99)}_", int_example, rng)
    return out

"""Programs as users write them, which the other generators for rasp_gen reach rarely or never.

- Functions in the paper's style: a body of several s-op and selector locals (reverse, a
  histogram, a fraction of previous tokens, a sort by a key), bound and then applied to inputs.
- A `for` loop inside a body that builds an s-op (a window sum of shifts), and a local that
  reuses a library name (`count = ...;` inside a `def`, allowed there as in the original).
- Several s-ops returned and unpacked (`a, b = f(indices);`), a call's result indexed.
- Functions nested three deep (closures over each level), called a level at a time.
- Nested comprehensions, comprehensions making s-ops (then indexed and combined), and indexing
  `range`, `zip` and a call.
- The library of `load "paper_examples";` called with new arguments (`dyckk_ptf`, and the
  `_`-named helpers the original's load copies too or not).
- Atoms and s-ops of floats and strings whose printed form is at stake: thirds, sevenths, big
  and tiny magnitudes, -0.0, half-way rounding, string comparison, repetition and slicing by
  index, and the REPL's display toggles between them.

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same; the programs of seeds run before this module existed
gain these blocks.
"""

from __future__ import annotations

import random

_SEQS = ("tokens", "indices", "indices + 1", "length - indices", "tokens_str")
_INT_SEQS = ("tokens_int", "indices", "indices + 1", "length - indices", "tokens_int * 2")
_FLOATS = (
    "1 / 3",
    "2 / 7",
    "10 ^ 20 * 1.0",
    "1 / 10 ^ 6",
    "0.1 + 0.2",
    "-(0.0)",
    "0.0 * -1",
    "2 ^ 0.5",
    "round(2.5)",
    "round(-0.5)",
    "round(0.5 + 1)",
    "1.5 % 0.4",
    "-7 % 3",
    "7 % -3.5",
    "123456789.125 * 8",
    "1 / 3 * 3 == 1",
    "0.1 * 3 == 0.3",
    "100000000000000000000.0",
    "12345678901234567890 / 10",
    "2.0 ^ 60",
    "2.0 ^ -30",
)
_FLOAT_SEQS = (
    "indices / 3",
    "(indices + 1) / 7",
    "indices * 1000000.5",
    "(indices + 1) / 10 ^ 7",
    "indices * -0.0",
    "indices * 0.1 * 3",
    "(indices + 1) * 10 ^ 16 * 1.0",
    "2.0 ^ (indices * 20)",
    "round(indices / 2)",
    "(indices + 0.5) % 1",
    "length / (indices + 1)",
    "aggregate(select(indices, indices, <=), indices)",
    "aggregate(select(indices, indices, <=), indices / 3)",
)
_STRINGS = (
    '"ab" * 3',
    '"b" < "ab"',
    '"abc" > "abd"',
    '"" + "x"',
    '"abc"[2]',
    '"abc"[-1]',
    '"a b" == "a b"',
    '"ab" in ["ab", "c"]',
    '"a" in "cat"',
    '"10" < "9"',
    '"x" * 0',
    '"#" + "x"',
)
_STRING_SEQS = (
    'tokens_str + "!"',
    '"<" + tokens_str',
    "tokens_str * 2",
    "tokens_str * (indices % 2)",
    'tokens_str < "b"',
    "tokens_str + tokens_str",
    '"abcdefgh"[indices]',
    'tokens_str == "a"',
    'tokens_str in ["a", "b"]',
)


def _paper(p: str, seq: str, rng: random.Random) -> list[str]:
    """A paper-style function of several locals, bound, shown and applied."""
    key = rng.choice(("indices", "-indices", seq, "length - indices"))
    bodies = [
        f"def {p}rev(s) {{ {p}flip = select(indices, length - indices - 1, ==); "
        f"return aggregate({p}flip, s); }}",
        f"def {p}rev(s) {{\n\tsame = select(s, s, ==);\n\treturn selector_width(same);\n}}",
        f"def {p}rev(s) {{ prevs = select(indices, indices, <=); "
        f"return aggregate(prevs, indicator(s == {rng.choice(('1', '0', 'tokens'))})); }}",
        f"def {p}rev(s) {{ smaller = select({key}, {key}, <) or (select({key}, {key}, ==) and "
        f"select(indices, indices, <)); target = selector_width(smaller); "
        f"return aggregate(select(target, indices, ==), s); }}",
        f"def {p}rev(s) {{ count = selector_width(select(s, s, ==)); max = 2; "
        f"return count * max; }}",
    ]
    return [
        rng.choice(bodies),
        f"{p}r = {p}rev({seq});",
        f"{p}r;",
        f"{p}rev({seq}) + 1;",
    ]


def _window(p: str, seq: str, rng: random.Random) -> list[str]:
    n = rng.randint(1, 3)
    filler = rng.choice(("0", '""', "1"))
    return [
        f"def {p}win(s) {{ acc = s; for i in range(1, {n + 1}) {{ "
        f"acc = acc + shift(s, i, {filler}); }} return acc; }}",
        f"{p}w = {p}win({seq});",
        f"{p}w;",
    ]


def _unpack(p: str, seq: str, rng: random.Random) -> list[str]:
    op = rng.choice(("+", "*", "-", "=="))
    return [
        f"def {p}two(s) {{ return s {op} 1, select(s, s, {rng.choice(('<', '==', '>='))}); }}",
        f"{p}a, {p}b = {p}two({seq});",
        f"{p}a;",
        f"{p}b;",
        f"aggregate({p}b, {p}a);",
        f"{p}two({rng.choice(('2', seq))})[{rng.choice(('0', '1', '-1', '2'))}];",
    ]


def _nested(p: str, rng: random.Random) -> list[str]:
    x = rng.choice(("1", "indices", '"a"', "0.5"))
    return [
        f"def {p}n1(a) {{ def {p}n2(b) {{ def {p}n3(c) {{ return a + b * c; }} "
        f"return {p}n3; }} return {p}n2; }}",
        f"{p}g2 = {p}n1({x});",
        f"{p}g3 = {p}g2({rng.choice(('2', 'indices', '0.5'))});",
        f"{p}g3({rng.choice(('3', 'length', '-1'))});",
        f"{p}n1(1)(2)(3);",
    ]


def _comprehensions(p: str, seq: str, rng: random.Random) -> list[str]:
    n = rng.randint(1, 3)
    return [
        f"{p}m = [[i * j for i in range({n})] for j in [1, 2]];",
        f"{p}m;",
        f"{p}m[1][{rng.randint(-1, n)}];",
        "[a + b for a, b in zip(range(3), [10, 20, 30])];",
        f"{p}ss = [shift({seq}, k, {rng.choice(('0', '1'))}) for k in range({n})];",
        f"{p}ss[{rng.randint(-1, n - 1)}];",
        f"{p}ss[0] {rng.choice(('+', '==', 'and'))} {p}ss[-1];",
        f"range({rng.randint(1, 6)})[{rng.randint(-2, 3)}];",
        f"zip([1, 2], [3, 4])[{rng.randint(0, 1)}];",
        "{k: [k] * 2 for k in range(2)}[1];",
    ]


def _library(p: str, rng: random.Random) -> list[str]:
    pairs = rng.choice(('["()"]', '["()", "{}"]', '["ab"]', "[]"))
    text = rng.choice(('"(())"', '"({)}"', '"abba"', '""'))
    return [
        'load "paper_examples";',
        f"{p}dy = dyckk_ptf({pairs});",
        f"{p}dy;",
        f"{p}dy({text});",
        rng.choice(
            ("_sort_bos(tokens_str, indices);", "_with_bos_selector_width(full_s);", "_flip_s;")
        ),
    ]


def _printed(p: str, int_example: bool, rng: random.Random) -> list[str]:
    seqs = _FLOAT_SEQS if int_example else _FLOAT_SEQS + _STRING_SEQS
    given = rng.choice(("[1, 2, 3]", '"ab"', "[0.5, 2.25]", "[10]"))
    out = [f"{rng.choice(_FLOATS + _STRINGS)};" for _ in range(rng.randint(1, 3))]
    out.append(f"{p}f = {rng.choice(seqs)};")
    if rng.random() < 0.4:
        out.append(rng.choice(("full seq display on", "examples off", "selector examples off")))
    out += [f"{p}f;", f"{p}f({given});"]
    return out


def _block(p: str, int_example: bool, rng: random.Random) -> list[str]:
    seq = rng.choice(_INT_SEQS if int_example else _SEQS)
    choices = [
        _paper(p, seq, rng),
        _window(p, seq, rng),
        _unpack(p, seq, rng),
        _nested(p, rng),
        _comprehensions(p, seq, rng),
        _library(p, rng),
        _printed(p, int_example, rng),
    ]
    weights = (3, 2, 2, 2, 2, 1, 3)
    return rng.choices(choices, weights)[0]


def user(statements: list[str], prefix: str, int_example: bool, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of these inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        out[at:at] = _block(f"{prefix}u{rng.randint(0, 99)}_", int_example, rng)
    return out

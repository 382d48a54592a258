"""Statements of the original's grammar that rasp_gen's expressions never reach, for rasp_gen.

- `show example`, `show s-op example`, `show selector example` (the REPL's showExample).
- `set example` with an expression that is no literal: a name, a concatenation, a `range`.
- One name bound to several values (`x = 1, "a";` binds a list), and a function's several
  return values bound to one name beside another value.
- Dict comprehensions whose key is an expression, and over two names (`{a * 2: b for a, b in
  zip(...)}`), and `range` with a step.
- `tokens` bound to another input s-op (`tokens = tokens_int;`, the original README's way to
  change the input type) and then bound back, so that the later programs of a shared session
  keep `tokens_str`.
- A comment alone on a top-level line, and `load "paper_examples";` with one of its names used.

Not generated: `draw` (the original needs graphviz's executables, and writes files) and `exit`
(it ends the shared session). Each block draws from its own random stream (rasp_gen passes
it), so the statements rasp_gen and rasp_gen_layout draw for a seed stay the same.
"""

from __future__ import annotations

import random

_SHOW = ("show example", "show s-op example", "show selector example")
_SMALL = ("1", "2", '"a"', "0.5", "True", "[1, 2]", '"xy"')
_LISTS = ("[1, 2, 3]", "range(4)", "[0, 5]", "[3]", "[]")
_PAPER_NAMES = ("reverse", "hist_bos", "hist_nobos", "sort_by_most_freq", "dyck1_ptf")


def _block(p: str, int_example: bool, rng: random.Random) -> list[str]:
    a, b = rng.choice(_LISTS), rng.choice(_LISTS)
    op = rng.choice(("+", "*", "-", "%"))
    k = rng.randint(-2, 3)
    if int_example:
        named, typed = ("[1, 2] + [3]", "range(1, 4)", "[2, 0]"), ("[1, 2] + [0]", "range(2, 5)")
    else:
        named = ('"ab" + "c"', '"aba"', '["x", "y"]')
        typed = ('"ab" + "ba"', '"q" * 3', '["a"] + ["bc"]')
    which = rng.choice(("", "s-op ", "selector "))
    choices = [
        [rng.choice(_SHOW)],
        [f"{p}ex = {rng.choice(named)};", f"set {which}example {p}ex"],
        [f"set example {rng.choice(typed)}"],
        [
            f"{p}mv = {', '.join(rng.choice(_SMALL) for _ in range(rng.randint(2, 3)))};",
            f"{p}mv;",
            f"{p}mv[{rng.randint(-1, 2)}];",
        ],
        [
            f"def {p}two(x) {{ return x, x {op} 1; }}",
            f"{p}tv = {p}two({rng.choice(('2', 'indices', '0.5'))}), {k};",
            f"{p}tv;",
        ],
        [
            f"{p}dc = {{a {op} {k}: b for a, b in zip({a}, {b})}};",
            f"{p}dc;",
            f"{p}dk = {{k + {rng.choice(('1', '0.5', 'k'))}: len({p}dc) for k in {a}}};",
        ],
        [f"{p}rs = range({k}, {rng.randint(-3, 9)}, {rng.choice((-2, -1, 1, 2, 3))});", f"{p}rs;"],
        [
            f"tokens = {rng.choice(('tokens_int', 'tokens_float', 'tokens_asis', 'tokens_bool'))};",
            f"{p}tk = tokens {rng.choice(('+ 1', '* 2', '== 1', '+ tokens'))};",
            f"{p}tk;",
            "tokens;",
            "tokens = tokens_str;",
        ],
        [rng.choice(("# a comment alone", "#", '# "x" = 1;'))],
        ['load "paper_examples";', f"{rng.choice(_PAPER_NAMES)};"],
    ]
    weights = (3, 2, 2, 3, 2, 3, 2, 3, 1, 1)
    return rng.choices(choices, weights)[0]


def more(statements: list[str], prefix: str, int_example: bool, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of these inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        out[at:at] = _block(f"{prefix}m{rng.randint(0, 99)}_", int_example, rng)
    return out

"""Iteration and unpacking over every kind of value, which the other generators for rasp_gen reach
only through `zip` and fixed statements (rasp_gen_odd's `ODD_STATEMENTS`).

The original binds a loop's or a comprehension's names from each item as Python unpacks it, when
the item's length matches the names: a string of two characters gives two names their letters,
a dict its keys, a list its items; one name takes the item whole; anything else is an error (a
number, an s-op, a length that differs). A `for` binds its names in the scope it runs in (they
outlive the loop; an empty iterable binds none), a comprehension in a scope of its own. An
assignment of several names to one value unpacks that value the same way (`a, b = "xy";`).

- `loop`: a `for` of one to three names over an iterable (lists of lists, ragged or not, of
  strings, of dicts, a dict, a string, `range` of one to three arguments, a step of 0 included,
  `zip` of two or three lists, a number, an s-op), its body binding an accumulator, then the
  accumulator and the loop's names shown (perhaps unbound);
- `comprehension`: a list or dict comprehension of the same, perhaps nested (its iterable read
  from the outer one's names), its names shadowing a bound name that is shown after;
- `unpack`: several names bound to one such value.

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same; the programs of seeds run before this module existed
gain these blocks.
"""

from __future__ import annotations

import random

_ITERABLES = (
    "[[1, 2], [3, 4]]",
    "[[1, 2], [3]]",
    "[[1, 2, 3], [4, 5, 6]]",
    '["ab", "cd"]',
    '["ab", "c"]',
    '["abc", "xyz"]',
    '[{"p": 1, "q": 2}, {"r": 3, "s": 4}]',
    '{"ab": 1, "cd": 2}',
    "{1: 2, 3: 4}",
    '{"a": [1, 2]}',
    '"abc"',
    "[1, 2]",
    "[]",
    "{}",
    "[[]]",
    "[[1, [2, 3]]]",
    "range(3)",
    "range(1, 4)",
    "range(6, 0, -2)",
    "range(0, 5, 0)",
    "range(3, 1)",
    "zip([1, 2], [3, 4])",
    'zip(["a", "b"], [1, 2], [True, False])',
    "zip(range(2), [[1, 2], [3, 4]])",
    "5",
    "indices",
    "[indices, tokens]",
    "[select(indices, indices, <)]",
)
_VALUES = (
    '"xy"',
    '"xyz"',
    "[1, 2]",
    "[1, 2, 3]",
    '{"k": 1, "m": 2}',
    "[[1, 2], [3, 4]]",
    "zip([1, 2], [3, 4])",
    "range(2)",
    "5",
    "indices",
    "1, 2",
    '[1, "a"], 3',
)


def _names(p: str, rng: random.Random) -> list[str]:
    return [f"{p}{c}" for c in "abc"[: rng.choice((1, 2, 2, 3))]]


def _use(names: list[str], rng: random.Random) -> str:
    """An expression of the names that most of their values take: `+` of numbers, strings or
    lists (an error for mixed ones, as there)."""
    if len(names) == 1 or rng.random() < 0.3:
        return rng.choice(names)
    if rng.random() < 0.5:
        return " + ".join(names)
    return "[" + ", ".join(names) + "]"


def loop(p: str, rng: random.Random) -> list[str]:
    names = _names(p, rng)
    acc = f"{p}acc"
    body = rng.choice(
        (
            f"{acc} = {_use(names, rng)};",
            f"{acc} = [{acc}, {_use(names, rng)}];",
            f"{acc} = {names[-1]};",
        )
    )
    head = f"for {', '.join(names)} in {rng.choice(_ITERABLES)} {{ {body} }}"
    shown = [f"{n};" for n in names if rng.random() < 0.5]
    before = [f"{names[0]} = 9;"] if rng.random() < 0.3 else []  # shown if the loop binds none
    return [f"{acc} = 0;", *before, head, f"{acc};", *shown]


def comprehension(p: str, rng: random.Random) -> list[str]:
    names = _names(p, rng)
    shadowed = [f"{names[0]} = 7;"] if rng.random() < 0.4 else []
    iterable = rng.choice(_ITERABLES)
    if rng.random() < 0.25:  # nested: the inner iterable is one of the outer names
        inner = f"{p}i"
        value = f"[{inner} for {inner} in {rng.choice(names)}]"
    else:
        value = _use(names, rng)
    if rng.random() < 0.3:
        key = rng.choice(names)
        text = f"{{{key}: {value} for {', '.join(names)} in {iterable}}}"
    else:
        text = f"[{value} for {', '.join(names)} in {iterable}]"
    if rng.random() < 0.4:
        return [*shadowed, f"{p}r = {text};", f"{p}r;", *([f"{names[0]};"] if shadowed else [])]
    return [*shadowed, f"{text};", *([f"{names[0]};"] if shadowed else [])]


def unpack(p: str, rng: random.Random) -> list[str]:
    names = _names(p, rng)[: rng.choice((2, 2, 3))] or [f"{p}a", f"{p}b"]
    if len(names) == 1:
        names.append(f"{p}b")
    return [f"{', '.join(names)} = {rng.choice(_VALUES)};", f"{names[-1]};"]


def iterated(statements: list[str], prefix: str, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of these inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        p = f"{prefix}it{rng.randint(0, 99)}_"
        out[at:at] = rng.choice((loop, loop, comprehension, comprehension, unpack))(p, rng)
    return out

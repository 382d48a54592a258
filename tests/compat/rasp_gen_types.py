"""S-ops whose positions hold values of different types, which the other generators for rasp_gen
reach only through fixed lists (rasp_gen_odd's `ODD_SOPS`).

The original checks a sequence's values as it makes it (`lazy_type_check`): bools, ints and
floats may mix (a bool is an int there, so `[T, 1, 2]` is `(ints)` and `[T, 0.5]` `(floats)`),
and a string beside any of them is an error; a mean refuses bools alone and strings but takes
bools beside numbers. Its displays read the values through Python's equality: `[v]*n` when the
values are one set (`1`, `True` and `1.0` are one; `0.0` and `-0.0` too), and the `full seq
display` writes a list whose first value is a bool as `T`/`F` marks, counting `1` as `True`.

- `mixed`: ternaries of a bool s-op choosing between pieces of different types (ints, floats,
  bools, `-0.0`, strings, s-ops), nested, bound and shown, applied to inputs of one repeated
  token (the `[v]*n` form), under `full seq display on` now and then;
- then used: aggregated (with and without a default of another type), selected on (as key and
  query) and counted with `selector_width`, compared (`== True`, `== 1.0`), in arithmetic and
  `not`, `round` and `indicator`, tested with `in` against lists of mixed atoms, and used as an
  index into lists, strings and dicts whose keys are equal across types (`{1: "a", True: "b"}`).

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same; the programs of seeds run before this module existed
gain these blocks.
"""

from __future__ import annotations

import random

_CONDS = ("indices < 1", "indices < 2", "indices > 2", "indices == 1", "length - indices > 2")
_STR_CONDS = ('tokens == "l"', 'tokens == "a"', 'tokens < "c"')
_NUMBERS = ("0", "1", "2", "0.5", "1.0", "0.0", "-0.0", "True", "False", "-1")
_NUMBER_SOPS = (
    "indices",
    "indices > 1",
    "indices == 0",
    "indices * 0.5",
    "indices - 1.0",
    "length - indices",
    "indicator(indices < 2)",
    "indices * 0 + 1",
    "indices * 0.0",
)
_STRINGS = ('"x"', '""', "tokens", '"1"')
_SAME = ('"aaa"', '"bb"', "[1, 1, 1]", "[0, 0]", '"z"', '"abcd"', '"aaaaa"')
_INDEXED = ("[5, 6, 7]", '"abc"', '{0: "z", 1: "o", 2: "t"}', '{1: "a", True: "b", 0: "c"}')
_IN = ("[0, 1]", "[True]", "[1.0, 2]", "[False, 0.5]", '["x", 1]', "[]")
_OPS = ("==", "<", ">", "<=", ">=", "!=")
_TOGGLES = ("full seq display on", "full seq display off")


def _piece(rng: random.Random, strings: bool) -> str:
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(_NUMBERS)
    if roll < 0.8 or not strings:
        return rng.choice(_NUMBER_SOPS)
    return rng.choice(_STRINGS)


def mixed_sop(rng: random.Random, int_example: bool, depth: int = 1) -> str:
    """`A if COND else B`, A and B of (mostly) different types, perhaps nested."""
    conds = _CONDS if int_example else _CONDS + _STR_CONDS
    strings = rng.random() < 0.15  # a string beside a number is an error there: now and then

    def branch() -> str:
        if depth > 0 and rng.random() < 0.25:
            return f"({mixed_sop(rng, int_example, depth - 1)})"
        return _piece(rng, strings)

    return f"{branch()} if {rng.choice(conds)} else {branch()}"


def _uses(name: str, rng: random.Random) -> list[str]:
    """Statements that read the mixed s-op `name`."""
    op = rng.choice(_OPS)
    default = rng.choice(("", ", 0", ", True", ", 0.5", ', "x"', ", -0.0"))
    return rng.choice(
        (
            [f"aggregate(select(indices, indices, {op}), {name}{default});"],
            [f"aggregate(select({name}, {name}, ==), indices{default});"],
            [f"select({name}, {rng.choice((name, 'indices', '1', 'True'))}, {op});"],
            [f"selector_width(select({name}, {name}, {op}));"],
            [f"{name} == {rng.choice(('True', '1.0', '0', 'False'))};"],
            [f"{name} {rng.choice(('+', '*', '-', '/'))} {rng.choice(('1', 'True', '0.5'))};"],
            [rng.choice((f"not {name};", f"-{name};", f"round({name});", f"indicator({name});"))],
            [f"{name} in {rng.choice(_IN)};"],
            [f"{rng.choice(_INDEXED)}[{name}];"],
            [f"{name}({rng.choice(_SAME)});"],
            [f"{name};"],
        )
    )


def typed(statements: list[str], prefix: str, int_example: bool, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of mixed-type s-ops inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        name = f"{prefix}ty{rng.randint(0, 99)}"
        block = [f"{name} = {mixed_sop(rng, int_example, rng.choice((0, 1, 1, 2)))};"]
        for _ in range(rng.randint(1, 4)):
            block += _uses(name, rng)
        if rng.random() < 0.3:
            at_toggle = rng.randint(0, len(block))
            block[at_toggle:at_toggle] = [_TOGGLES[0]]
            block.append(_TOGGLES[1])
        out[at:at] = block
    return out

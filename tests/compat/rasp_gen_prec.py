"""Operator precedence and spacing, which the other generators for rasp_gen reach only through
fixed lists (rasp_gen_lines' `_TYPED`, rasp_gen_extra's `_EDGES`) or through parenthesized parts.

- `flat`: expressions of two to four operands joined by operators of every level of
  docs/language.md's section 4.1 without parentheses (`in`, `if`/`else`, `and`/`or`, comparisons
  chained, `+ -`, `%`, `* /`, `^`), prefix `not`, `-` and `+` in chains, indexing and calls,
  over atoms (ints, floats, bools, strings, lists, a dict) and s-ops mixed: `tokens == "a" or
  "b"`, `not indices > 1 and tokens`, `- length ^ 2 % 3`, `x in l if c else m`, `a if b if c
  else d else e`. Some are bound and shown by name, some shown under `full seq display on`.
- `respaced`: one-line statements typed with their spaces squeezed out beside operators and
  brackets (`x=indices+1;`, `select(indices,indices,<)`), doubled, or tabs; never between two
  operator characters (`= =` stays two tokens), never inside a string or a comment.

Not drawn: `!=` outside `select`, and `%` with a string and an s-op in one expression (a string
formatting an s-op is refused here, formatted as its Python object's text there: section 7).
Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same; the programs of seeds run before this module existed
gain these blocks.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from tests.compat.rasp_gen_lines import _BAD

_ARITH = ("+", "-", "*", "/", "%", "^", "+", "-", "*")
_LOGIC = ("==", "<", ">", "<=", ">=", "and", "or", "in")
_PREFIX = ("-", "+", "not ")
_NUMBERS = ("0", "1", "2", "3", "0.5", "1.5", "True", "False")
_STRINGS = ('"a"', '"ab"', '""', '"l"', '"1"')
_OTHERS = ("[1, 2]", "[]", '["a", "l"]', '{"a": 1}', "[0, 1, 2][1]", "select(indices, indices, <)")
_CONTAINERS = {
    "num": ("[1, 2]", "[0, 3]", "[]", "{2: 0}", "indices", "range(3)"),
    "str": ('"abc"', '["a", "l"]', '{"a": 1}', "tokens", '"hello"'),
}
_LENGTHS = ("[1, 2]", '"abc"', "[]")
_STR_SOPS = ("tokens", "tokens_str")
_INT_SOPS = ("tokens_int", "indices", "length")
_SOP_NAMES = re.compile(r"\b(tokens\w*|indices|length)\b")
_OPS = set("+-*/%^<>=!")
_PUNCT = set("()[]{},;:")
_COMMANDS = ("set ", "show ", "examples ", "s-op ", "selector ", "full seq", "load ", "exit")


@dataclass(frozen=True)
class _Flavour:
    """What one expression is made of: numbers, strings or anything."""

    name: str
    atoms: tuple[str, ...]
    sops: tuple[str, ...]
    ops: tuple[str, ...]
    prefixes: tuple[str, ...]


def _flavours(int_example: bool) -> tuple[_Flavour, ...]:
    num_sops = ("indices", "length", *(("tokens_int",) if int_example else ()))
    return (
        _Flavour("num", _NUMBERS, num_sops, _ARITH + _LOGIC, _PREFIX),
        _Flavour("str", _STRINGS, _STR_SOPS, ("+", "+", *_LOGIC), ("not ",)),
        _Flavour(
            "any",
            _NUMBERS + _STRINGS + _OTHERS,
            num_sops + _STR_SOPS,
            _ARITH + _LOGIC,
            _PREFIX,
        ),
    )


def _operand(f: _Flavour, rng: random.Random, depth: int) -> str:
    roll = rng.random()
    if roll < 0.45:
        text = rng.choice(f.atoms)
    elif roll < 0.75:
        text = rng.choice(f.sops)
    elif roll < 0.83 and depth > 0:
        text = f"({flat(f, rng, depth - 1)})"
    elif roll < 0.88 and depth > 0 and f.name != "str":
        text = f"round({flat(f, rng, depth - 1)})"
    elif roll < 0.93:
        text = (
            f"indicator({rng.choice(f.sops)} {rng.choice(('==', '<', '>'))} {rng.choice(f.atoms)})"
        )
    elif roll < 0.96:
        text = f"len({rng.choice(_LENGTHS)})"
    else:
        text = "selector_width(select(indices, 1, <))"
    # a chain of prefix operators now and then (`not -x`, `- - x`, `+not x`)
    for _ in range(rng.choice((0, 0, 0, 0, 0, 1, 1, 2))):
        text = rng.choice(f.prefixes) + text
    return text


def flat(f: _Flavour, rng: random.Random, depth: int = 1) -> str:
    """Two to four operands and the operators between them, without parentheses but for nested
    operands; now and then a ternary whose parts are such chains."""
    if depth > 0 and rng.random() < 0.25:
        a, b, c = (flat(f, rng, depth - 1) for _ in range(3))
        return f"{a} if {b} else {c}"
    parts = [_operand(f, rng, depth)]
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(f.ops)
        if op == "in" and rng.random() < 0.7:
            right = rng.choice(_CONTAINERS["str" if f.name == "str" else "num"])
        else:
            right = _operand(f, rng, depth)
        parts += [op, right]
    return " ".join(parts)


def expression(int_example: bool, rng: random.Random) -> str:
    """A flat expression of one flavour, mostly numbers."""
    flavour = rng.choice(_flavours(int_example) + _flavours(int_example)[:1])
    while True:
        text = flat(flavour, rng, rng.choice((0, 1, 1, 2)))
        if not ('"' in text and "%" in text and _SOP_NAMES.search(text)):
            return text


def _free(text: str) -> list[bool]:
    """For each character of `text`, whether it may be respaced (not in a string or comment)."""
    free = [True] * len(text)
    in_string = False
    for i, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
        elif ch == "#" and not in_string:
            free[i:] = [False] * (len(text) - i)
            break
        free[i] = not in_string and ch != '"'
    return free


def respaced(text: str, rng: random.Random) -> str:
    """`text` with its spaces squeezed out beside operators, brackets and strings, doubled, or
    tabs."""
    style = rng.choice(("tight", "tight", "wide", "tabs"))
    free = _free(text)
    near = _OPS | _PUNCT | {'"'}
    chars = list(text)
    for k, ch in enumerate(text):
        if ch != " " or not free[k]:
            continue
        if style == "tight":
            left, right = text[k - 1 : k], text[k + 1 : k + 2]
            if (left in near or right in near) and not (left in _OPS and right in _OPS):
                chars[k] = ""
        elif style == "wide":
            chars[k] = rng.choice((" ", "  "))
        else:
            chars[k] = rng.choice((" ", "\t"))
    return "".join(chars)


def _respaceable(text: str, bad: set[str]) -> bool:
    return "\n" not in text and text not in bad and not text.startswith(_COMMANDS)


def precedence(
    statements: list[str], prefix: str, int_example: bool, rng: random.Random
) -> list[str]:
    """`statements` with a few flat expressions inserted between them, some respaced, and a few
    of the others respaced."""
    bad = {line.format(p=prefix) for line in _BAD}
    out = [
        respaced(t, rng) if _respaceable(t, bad) and rng.random() < 0.1 else t for t in statements
    ]
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        at = rng.randint(0, len(out))
        text = expression(int_example, rng)
        roll = rng.random()
        if roll < 0.3:
            name = f"{prefix}q{rng.randint(0, 99)}"
            block = [f"{name} = {text};", f"{name};"]
        elif roll < 0.4:
            block = ["full seq display on", f"{text};", "full seq display off"]
        else:
            block = [f"{text};"]
        out[at:at] = [
            respaced(t, rng) if _respaceable(t, bad) and rng.random() < 0.2 else t for t in block
        ]
    return out

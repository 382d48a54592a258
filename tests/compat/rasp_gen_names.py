"""The names the original gives s-ops and selectors, and errors of functions called from loops,
which the other generators for rasp_gen reach rarely or never.

- `aliases`: an s-op or selector bound, then bound again under another name in the ways the
  original's assignment renames the object itself (`b = a;`, several names at once, a loop's
  body, a def's local, a call's result, an item of a list or dict, a comprehension's variable),
  some of which fail after renaming, and then shown where the object's own name is printed: in a
  list or a dict (`[a];` shows `b` there), with the display toggles interleaved. gen_diff compares
  these names (labels that are names on both sides).
- `shadows`: the library's and the inputs' names as targets at the top level beside other
  names (`x, count = 1, 2;` binds x there, then fails at count), as a loop's names, in a loop's
  body, as a def's name, with values that fail on the running example or not.
- `loop_calls`: a def whose body fails for some arguments (division by zero, an index out of
  range, a missing key, a type error, an s-op of the argument), called from a loop, a nested
  loop, a comprehension and a loop in another def's body; then what the loop bound before the
  failure (the accumulator, the loop variables) is shown.

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same.
"""

from __future__ import annotations

import random

_SEQS = ("tokens", "indices", "tokens_str", "length - indices")
_INT_SEQS = ("tokens_int", "indices", "tokens_int * 2", "length - indices")
_ARGS = ("0", "1", "3", "indices", '"a"')
_TOGGLES = (
    "examples off",
    "s-op examples off",
    "selector examples off",
    "full seq display on",
    "examples on",
)


def _made(seq: str, rng: random.Random) -> str:
    return rng.choice(
        (
            f"{seq} + 1",
            f"{seq} == 1",
            "indices * 2",
            f"select({seq}, {seq}, ==)",
            "select(indices, indices, <)",
            f"aggregate(select(indices, indices, >), {seq})",
            "numerical(aggregate(select(indices, indices, ==), indices))",
            f"selector_width(select({seq}, {seq}, ==))",
        )
    )


def _renames(p: str, a: str, rng: random.Random) -> list[str]:
    """Statements that bind `a`'s object to other names (some fail after or before)."""
    b = f"{p}b"
    return rng.choice(
        (
            [f"{b} = {a};"],
            [f"{b}, {p}c = {a}, 1;"],
            [f"{b}, {p}c = {a}, 1 / 0;"],
            [f"{p}c, {b} = 1, {a};"],
            [f"for {p}i in [1, 0] {{ {b} = {a}; {p}c = 1 / {p}i; }}"],
            [f"for {p}i in [{a}, 1] {{ {b} = {p}i; }}"],
            [f"def {p}f(s) {{ {p}t = s; return 1; }}", f"{p}f({a});"],
            [f"def {p}f(s) {{ {p}t = s; return 1 / 0; }}", f"{b} = {p}f({a});"],
            [f"def {p}f(s) {{ {p}t = s; return {p}t; }}", f"{b} = {p}f({a});"],
            [f"def {p}f() {{ return {a}; }}", f"{b} = {p}f();"],
            [f"{b} = [{a}][0];"],
            [f'{b} = {{"k": {a}}}["k"];'],
            [f"{b} = {a} if True else 0;"],
            [f"{b} = [{a}, {a}];"],
            [f"{p}m = [{p}x for {p}x in [{a}]];"],
            [f"{p}m = [{p}x for {p}x in [{a}, 0]];", f"{p}m;"],
            [f"{b} = {a};", f"{p}c = {b};"],
            [f"{b} = {a};", f"{a} = {a} + 0;"],
        )
    )


def _shown(p: str, a: str, rng: random.Random) -> str:
    return rng.choice(
        (
            f"[{a}];",
            f'{{"k": {a}}};',
            f"[{a}, [{p}b]];",
            f"{a};",
            f"[{a}, 1];",
            f"[[{a}]];",
            f'{{1: [{a}], "z": {{"y": {a}}}}};',
            f"{p}d = [{a}];",
        )
    )


def aliases(p: str, seq: str, rng: random.Random) -> list[str]:
    a = f"{p}a"
    out = [f"{a} = {_made(seq, rng)};"]
    if rng.random() < 0.3:
        out.append(rng.choice(_TOGGLES))
    for _ in range(rng.randint(1, 2)):
        out += _renames(p, a, rng)
        out += [_shown(p, a, rng) for _ in range(rng.randint(1, 2))]
    if rng.random() < 0.3:
        out.append(rng.choice(_TOGGLES))
        out.append(_shown(p, a, rng))
    return out


def _failing_body(seq: str, rng: random.Random) -> str:
    """An expression of the parameter `N` that fails for some arguments."""
    return rng.choice(
        (
            "10 / N",
            "[1, 2, 3][N]",
            '{"a": 1, 0: 2}[N]',
            f"{seq} + N",
            "N + 1",
            '"ab" * N',
            "range(N)",
            "select(indices, N, ==)",
            "indices + 1 / (N - 1)",
            "len(N)",
            "N % 2",
            f"{seq}[N]",
        )
    )


def loop_calls(p: str, seq: str, rng: random.Random) -> list[str]:
    g, acc, i = f"{p}g", f"{p}acc", f"{p}i"
    body = _failing_body(seq, rng).replace("N", f"{p}n")
    local = f"{p}q"
    if rng.random() < 0.5:
        define = f"def {g}({p}n) {{ {local} = {body}; return {local}; }}"
    else:
        define = f"def {g}({p}n) {{ return {body}; }}"
    items = rng.choice(("[2, 1, 0, 5]", "[1, 3, 5]", "range(4)", '[1, "a", 2]', "[0]", "[-1, 1]"))
    init = rng.choice(("0", "indices", "[]", '""'))
    step = rng.choice((f"{acc} + {g}({i})", f"{g}({i}) + {acc}", f"[{g}({i})] + {acc}"))
    loops = (
        [f"for {i} in {items} {{ {acc} = {step}; }}"],
        [f"for {i} in {items} {{ {p}last = {i}; {acc} = {step}; }}", f"{p}last;"],
        [f"for {p}j in [1, 2] {{ for {i} in {items} {{ {acc} = {step}; }} }}", f"{p}j;"],
        [f"{p}l = [{g}({i}) for {i} in {items}];", f"{p}l;"],
        [f"{p}l = {{{i}: {g}({i}) for {i} in {items}}};", f"{p}l;"],
        [
            f"def {p}h(x) {{ {acc} = {init}; for {i} in x {{ {acc} = {step}; }} return {acc}; }}",
            f"{p}h({items});",
            f"for {p}j in [[1], {items}] {{ {p}r = {p}h({p}j); }}",
            f"{p}r;",
        ],
    )
    return [
        define,
        f"{acc} = {init};",
        *rng.choice(loops),
        f"{acc};",
        f"{i};",
        f"{g}({rng.choice(_ARGS)});",
    ]


_LIBRARY = (
    "count",
    "length",
    "max",
    "sort",
    "full_s",
    "select_from_last",
    "has_focus",
    "indices",
    "tokens_int",
    "tokens_str",
    "True",
)


def shadows(p: str, seq: str, rng: random.Random) -> list[str]:
    lib = rng.choice(_LIBRARY)
    x, y = f"{p}x", f"{p}y"
    value = rng.choice(("1", f"{seq} + 1", "tokens_int + 1", '"s"', f"{p}a", "[1, 2]"))
    targets = rng.choice(((x, lib), (lib, x), (x, y, lib), (x, lib, y)))
    values = ", ".join(value if t == x else rng.choice(("2", "indices", "0.5")) for t in targets)
    statements = rng.choice(
        (
            [f"{', '.join(targets)} = {values};"],
            [f"for {p}i in [1] {{ {', '.join(targets)} = {values}; {p}w = 1; }}", f"{p}w;"],
            [f"for {x}, {lib} in [[{value}, 2]] {{ {p}w = 1; }}", f"{p}w;"],
            [f"def {lib}({p}v) {{ return {p}v; }}", f"{lib}(1);"],
            [f"{p}l = [{lib} for {lib} in [1, 2]];", f"{p}l;"],
        )
    )
    return [
        f"{p}a = {_made(seq, rng)};",
        *statements,
        f"{x};",
        rng.choice((f"[{x}];", f"{y};", f"[{p}a];", f"{lib};")),
    ]


def named(statements: list[str], prefix: str, int_example: bool, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of these inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        p = f"{prefix}n{rng.randint(0, 99)}_"
        seq = rng.choice(_INT_SEQS if int_example else _SEQS)
        make = rng.choice((aliases, aliases, loop_calls, loop_calls, shadows))
        out[at:at] = make(p, seq, rng)
    return out

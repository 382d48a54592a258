"""Names the original's evaluator reads where a statement runs, which the other generators for
rasp_gen never bind there.

- `x[-k]` of an s-op counts back from the name `length` where the index is read (the original's
  `_index_into_sequence` looks it up): a def's local `length` (an s-op, an atom, a selector), a
  parameter or loop variable of that name in a body, and a comprehension's variable.
- The library's names as locals, parameters and loop variables of a body, beside calls of the
  library (whose bodies read their own `length` and `full_s`) and negative indices.
- `load` in a def's body and in a body's `for`: the loaded names are the call's locals, listed as
  each load ends, before an error the call meets after it.

Each block draws from its own random stream (rasp_gen passes it), so the statements the other
generators draw for a seed stay the same.
"""

from __future__ import annotations

import random

_SEQS = ("tokens", "indices", "indices + 1", "tokens_str")
_INT_SEQS = ("tokens_int", "indices", "indices + 1", "length - indices")
# what a local `length` holds: s-ops (of every position, or of some), atoms, a selector
_LENGTHS = (
    "x + 1",
    "x + 2",
    "indices + 1",
    "indices + 2",
    "length - 1",
    "length + 0",
    "x",
    "3",
    "0.5",
    '"n"',
    "select(indices, indices, ==)",
    "tokens_str",
    "[1, 2]",
)
_LIBRARY = ("count", "full_s", "max", "min", "sort", "shift", "contains", "has_focus", "average")


def _local_length(p: str, seq: str, rng: random.Random) -> list[str]:
    k = rng.randint(1, 3)
    held = rng.choice(_LENGTHS)
    arg = rng.choice(("indices", "1", "2", "tokens_int", "length"))
    bodies = (
        f"def {p}ln(x) {{ length = {held}; return {seq}[-{k}]; }}",
        f"def {p}ln(x) {{ length = {held}; y = {seq}[-{k}]; return y + {seq}[{k - 1}]; }}",
        f"def {p}ln(length) {{ return {seq}[-{k}]; }}",
        f"def {p}ln(x) {{ for length in [{held}] {{ y = {seq}[-{k}]; }} return y; }}",
        f"def {p}ln(x) {{ length = {held}; def {p}in() {{ return {seq}[-{k}]; }} "
        f"return {p}in(); }}",
        f"def {p}ln(x) {{ length = {held}; return count({seq}, x) + length; }}",
    )
    return [
        rng.choice(bodies),
        f"{p}lv = {p}ln({arg});",
        f"{p}lv;",
        f"{p}ln({rng.choice(('indices', '3', 'indices + 1'))});",
        f"[{seq}[-{k}] for length in [{rng.choice(('indices + 1', 'indices', '2', 'length'))}]];",
        f"{seq}[-{k}];",
    ]


def _library_locals(p: str, seq: str, rng: random.Random) -> list[str]:
    name = rng.choice(_LIBRARY)
    value = rng.choice(("1", "indices", "select(indices, 0, ==)", '"s"', "tokens"))
    call = rng.choice(
        (
            f'count({seq}, "l")',
            f"count({seq}, 1)",
            f"shift({seq}, 1, 0)",
            f"contains({seq}, 2)",
            f"max({seq}, 1)",
            f"average(indicator({seq} == 1))",
            f"sort({seq}, indices)",
            f"{seq}[-1]",
        )
    )
    bodies = (
        f"def {p}lb(x) {{ {name} = {value}; return {call}; }}",
        f"def {p}lb({name}) {{ return {call}; }}",
        f"def {p}lb(x) {{ for {name} in [x, {value}] {{ y = {call}; }} return y; }}",
        f"def {p}lb(x) {{ {name} = {value}; return {name}; }}",
    )
    return [
        rng.choice(bodies),
        f"{p}lb({rng.choice(('1', 'indices', '2', 'tokens'))});",
        f"{p}lw = {p}lb({rng.choice(('1', 'indices'))});",
        f"{name};",
    ]


def _load_in_body(p: str, seq: str, rng: random.Random) -> list[str]:
    name = rng.choice(("reverse", "hist_bos", "sort_bos", "dyck1_ptf", "_flip_s", "nosuch"))
    after = rng.choice(("x", f"{name}", f"{name} + x", f"x + {seq}", "tokens_int + x"))
    bodies = (
        f'def {p}ld(x) {{ load "paper_examples"; return {after}; }}',
        f'def {p}ld(x) {{ for i in [1, 2] {{ load "paper_examples"; }} return {after}; }}',
        f'def {p}ld(x) {{ load "paper_examples"; y = {after}; load "paper_examples"; return y; }}',
    )
    return [
        rng.choice(bodies),
        f"{p}ld({rng.choice(('1', 'indices', '2'))});",
        f"for {p}i in [1] {{ {p}lz = {p}ld({p}i); }}",
        f"{name};",
    ]


def _block(p: str, int_example: bool, rng: random.Random) -> list[str]:
    seq = rng.choice(_INT_SEQS if int_example else _SEQS)
    choices = [_local_length(p, seq, rng), _library_locals(p, seq, rng), _load_in_body(p, seq, rng)]
    return rng.choices(choices, (3, 2, 1))[0]


def scoped(statements: list[str], prefix: str, int_example: bool, rng: random.Random) -> list[str]:
    """`statements` with a few blocks of these inserted between them."""
    out = list(statements)
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        at = rng.randint(0, len(out))
        out[at:at] = _block(f"{prefix}s{rng.randint(0, 99)}_", int_example, rng)
    return out

"""Random RASP texts built from user-defined functions, for the fuzz campaign's `defs` flavour:
`def`s with locals, each calling the earlier ones (nested calls, the same function several times
with other arguments), inner `def`s closing over a parameter and a local, `for` loops that chain
maps, recursion unrolled into long chains of maps over several variables, functions returning
selectors (compound: and/or/not) or two values, and the library composed: the prelude's
functions and s-ops of the programs/ files brought in by `load`. The other generators call only
a few fixed one-line functions and never load a file.

Each text loads zero to two library files, defines two to four functions `g0`, `g1`, ..., binds
a few variables by calling them and then `res`. A text the interpreter cannot run (a string plus
a number) is drawn again (runnable.py). Seeded: a text and its vocabulary reproduce from the
seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from runnable import redraw_text

PROGRAMS = Path(__file__).parents[2] / "programs"  # where the texts' `load`s look

# vocabularies: digits (tokens_int reads them), the programs' own tokens
VOCABS = (["0", "1", "2"], ["0", "1", "2"], ["x", "a", "b"], ["(", ")", "x"])
# a library file and the s-ops it binds, by kind ("sel" for a selector)
LIBRARY = {
    "hist": {"num": ["hist"], "sel": ["same_token"]},
    "reverse": {"str": ["reverse"], "sel": ["flip"]},
    "sort": {"str": ["sorted"]},
    "length": {"num": ["seq_length"]},
    "frac_prevs": {"num": ["frac_prevs", "is_x"]},
    "double_hist": {"num": ["double_hist"], "bool": ["has_prev"]},
    "induction": {"str": ["induction", "prev_token"], "num": ["n_matches"]},
    "dyck1": {"str": ["dyck1"], "num": ["balance"]},
}
ORDERS = ["==", "!=", "<", ">", "<=", ">="]
DEFAULTS = ["0", "1", "-1", "0.5"]


@dataclass(frozen=True)
class Func:
    name: str
    params: tuple[str, ...]  # each a number s-op
    returns: str  # "num", "sel" or "pair" (two numbers)


class DefTextGenerator:
    """Expressions of four kinds over a scope of names: numbers, strings, bools, selectors."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vocab = list(rng.choice(VOCABS))
        self.digits = all(v.isdigit() for v in self.vocab)
        self.funcs: list[Func] = []
        self.top: dict[str, list[str]] = {"num": [], "str": [], "bool": [], "sel": []}

    def program(self) -> str:
        r = self.rng
        lines = []
        for lib in r.sample(sorted(LIBRARY), r.choice([0, 1, 1, 2])):
            lines.append(f'load "{lib}";')
            for kind, names in LIBRARY[lib].items():
                self.top[kind] += names
        for i in range(r.randint(2, 4)):
            lines += self._define(f"g{i}")
        for i in range(r.randint(1, 3)):
            kind = r.choice(["num", "num", "bool", "sel"])
            lines.append(f"v{i} = {self.expr(2, kind, self.top)};")
            self.top[kind].append(f"v{i}")
        # res calls a function of its own, on top of the variables (which mostly call several)
        last = self._call(self.funcs[-1], 2, self.top, "num")
        if self.funcs[-1].returns == "sel":
            last = f"aggregate({last}, {self.expr(1, 'num', self.top)}, {r.choice(DEFAULTS)})"
        lines.append(f"res = {last} + {self.expr(2, 'num', self.top)};")
        return "\n".join(lines) + "\n"

    # -- definitions

    def _define(self, name: str) -> list[str]:
        r = self.rng
        params = tuple(f"{name}_{p}" for p in "abc"[: r.randint(1, 3)])
        scope = {"num": list(params), "str": ["tokens"], "bool": [], "sel": []}
        body: list[str] = []
        for k in range(r.randint(1, 3)):
            kind = r.choice(["num", "num", "bool", "sel"])
            local = f"t{k}"
            body.append(f"    {local} = {self.expr(2, kind, scope)};")
            scope[kind].append(local)
        extra = r.random()
        if extra < 0.25:  # an inner def closing over a parameter and a local
            inner = f"{name}_h"
            z = f"{inner}_z"
            inner_scope = {**scope, "num": [*scope["num"], z]}
            body.append(f"    def {inner}({z}) {{ return {self.expr(1, 'num', inner_scope)}; }}")
            body.append(f"    t9 = {inner}({self.expr(1, 'num', scope)}) - {inner}({params[0]});")
            scope["num"].append("t9")
        elif extra < 0.5:  # a loop chaining maps, each reading the accumulator and the index
            body.append(f"    acc = {params[-1]};")
            body.append(f"    for k in range({r.randint(2, 4)}) {{")
            body.append(f"        acc = {self._step('acc', 'k', scope)};")
            body.append("    }")
            scope["num"].append("acc")
        elif extra < 0.6:  # recursion: a chain of maps as deep as its count
            rec = f"{name}_r"
            x, n = f"{rec}_x", f"{rec}_n"
            step = self._step(x, n, {**scope, "num": [*scope["num"], x]})
            body.append(
                f"    def {rec}({x}, {n}) {{ return {x} if {n} == 0 else {rec}({step}, {n} - 1); }}"
            )
            body.append(f"    t8 = {rec}({params[0]}, {r.randint(2, 6)});")
            scope["num"].append("t8")
        returns = r.choice(["num", "num", "num", "sel", "pair"])
        ret = self.expr(2, "num" if returns == "pair" else returns, scope)
        # the return reads a local of its kind where there is one (else most locals are dead)
        locals_ = [
            name for name in scope["num" if returns == "pair" else returns] if name not in params
        ]
        if locals_:
            ret = (
                f"({ret} and {r.choice(locals_)})"
                if returns == "sel"
                else f"{ret} + {r.choice(locals_)}"
            )
        if returns == "pair":
            ret = f"{ret}, {self.expr(1, 'num', scope)}"
        self.funcs.append(Func(name, params, returns))
        return [f"def {name}({', '.join(params)}) {{", *body, f"    return {ret};", "}"]

    def _step(self, x: str, k: str, scope: dict[str, list[str]]) -> str:
        """A map of `x` and the loop's count `k` (a number), bounded so that chains stay small."""
        r = self.rng
        y = self._leaf("num", scope)
        return r.choice(
            [
                f"({x} + {k}) % 3",
                f"{x} - {y} if {x} > {k} else {x} + 1",
                f"max({x}, {y}) - {k}",
                f"({x} * {y} + {k}) % 4",
                f"round({x} / 2) + {k}",
                f"-{x} if {x} < {y} else {x} - {k}",
            ]
        )

    def _call(self, func: Func, d: int, scope: dict[str, list[str]], kind: str) -> str:
        args = ", ".join(self.expr(d, "num", scope) for _ in func.params)
        if func.returns == "pair":
            return f"{func.name}({args})[{self.rng.randint(0, 1)}]"
        return f"{func.name}({args})"

    def _funcs(self, returns: tuple[str, ...]) -> list[Func]:
        return [f for f in self.funcs if f.returns in returns]

    # -- expressions

    def expr(self, depth: int, kind: str, scope: dict[str, list[str]]) -> str:
        if depth <= 0 or self.rng.random() < 0.2:
            return self._leaf(kind, scope)
        d = depth - 1
        make = {"num": self._num, "str": self._str, "bool": self._bool, "sel": self._sel}[kind]
        return self.rng.choice(make(d, scope))()

    def _leaf(self, kind: str, scope: dict[str, list[str]]) -> str:
        r = self.rng
        names = scope[kind] + self.top[kind] * (scope is not self.top)
        if names and r.random() < 0.7:
            return r.choice(names)
        if kind == "num":
            return r.choice(
                ["indices", "length", str(r.randint(0, 2)), "0.5"] + ["tokens_int"] * self.digits
            )
        if kind == "str":
            return r.choice(["tokens", f'"{r.choice(self.vocab)}"'])
        if kind == "bool":
            return r.choice([f'(tokens == "{r.choice(self.vocab)}")', "(indices < 2)"])
        return f"select(indices, indices, {r.choice(ORDERS)})"

    def _num(self, d: int, scope: dict[str, list[str]]) -> list[Callable[[], str]]:
        r = self.rng
        e = self.expr
        options: list[Callable[[], str]] = [
            lambda: f"{e(d, 'num', scope)} {r.choice(['+', '-', '*'])} {e(d, 'num', scope)}",
            lambda: f"round({e(d, 'num', scope)} / 2)",
            lambda: f"({e(d, 'num', scope)} if {e(d, 'bool', scope)} else {e(d, 'num', scope)})",
            lambda: f"indicator({e(d, 'bool', scope)})",
            lambda: f"aggregate({e(d, 'sel', scope)}, {e(d, 'num', scope)}, {r.choice(DEFAULTS)})",
            lambda: f"selector_width({e(d, 'sel', scope)})",
            lambda: f"{r.choice(['max', 'min'])}({e(d, 'num', scope)}, {e(d, 'num', scope)})",
            lambda: f"shift({e(d, 'num', scope)}, {r.randint(1, 2)}, {r.choice(DEFAULTS)})",
            lambda: f"load_from_location({e(d, 'num', scope)}, {r.randint(0, 2)})",
            lambda: f"{{0: {r.randint(-1, 2)}, 1: 2, 2: 0}}[round({e(d, 'num', scope)}) % 3]",
            lambda: f'count(tokens, "{r.choice(self.vocab)}")',
            lambda: f"mark_first_instance({e(d, 'num', scope)}, {r.randint(0, 2)})",
        ]
        callable_ = self._funcs(("num", "pair"))
        if callable_:  # calls twice as likely: the point of this flavour
            options += [lambda: self._call(r.choice(callable_), d, scope, "num")] * 4
        return options

    def _str(self, d: int, scope: dict[str, list[str]]) -> list[Callable[[], str]]:
        r = self.rng
        return [
            lambda: f'aggregate({self.expr(d, "sel", scope)}, tokens, "{r.choice(self.vocab)}")',
            lambda: f"sort({self._leaf('str', scope)}, {self.expr(d, 'num', scope)})",
            lambda: f'({self._leaf("str", scope)} if {self.expr(d, "bool", scope)} else "z")',
        ]

    def _bool(self, d: int, scope: dict[str, list[str]]) -> list[Callable[[], str]]:
        r = self.rng
        e = self.expr
        return [
            lambda: f"{e(d, 'num', scope)} {r.choice(ORDERS)} {e(d, 'num', scope)}",
            lambda: f'{e(d, "str", scope)} == "{r.choice(self.vocab)}"',
            lambda: f"{e(d, 'bool', scope)} {r.choice(['and', 'or'])} {e(d, 'bool', scope)}",
            lambda: f"not {e(d, 'bool', scope)}",
            lambda: f"has_focus({e(d, 'sel', scope)})",
        ]

    def _sel(self, d: int, scope: dict[str, list[str]]) -> list[Callable[[], str]]:
        r = self.rng
        e = self.expr
        options: list[Callable[[], str]] = [
            lambda: f"select({e(d, 'num', scope)}, {e(d, 'num', scope)}, {r.choice(ORDERS)})",
            lambda: f"select({e(d, 'str', scope)}, tokens, {r.choice(['==', '!='])})",
            lambda: f"({e(d, 'sel', scope)} {r.choice(['and', 'or'])} {e(d, 'sel', scope)})",
            lambda: f"not {e(d, 'sel', scope)}",
            lambda: f'select_from_first(tokens, "{r.choice(self.vocab)}")',
            lambda: f"select_next_identical({e(d, 'num', scope)})",
        ]
        selectors = self._funcs(("sel",))
        if selectors:
            options += [lambda: self._call(r.choice(selectors), d, scope, "sel")] * 2
        return options


def random_def_program(
    seed: int, rewrite: Callable[[str], str] | None = None
) -> tuple[str, list[str]]:
    """The seed's text and its vocabulary, drawn again from the seed's stream while the
    interpreter cannot run the text (or its `rewrite`, the text the campaign compiles)."""
    rng = random.Random(seed)

    def draw() -> tuple[str, list[str]]:
        generator = DefTextGenerator(rng)
        return generator.program(), generator.vocab

    return redraw_text(draw, rewrite, [PROGRAMS])

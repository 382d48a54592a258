"""Random RASP program texts: what a user writes (operators without brackets, the prelude's
functions, `def`s, lists and dicts indexed, conditionals), for differential tests through the
parser, the interpreter and the compiler. Seeded: a text reproduces from its seed.

Many texts fail in the interpreter (a string plus a number, a mean of strings): a test skips those.

`wide` adds what no other generator draws (the fuzz campaign's texts flavour): the prelude's
contains, has_focus, mark_last_instance, select_from_first and select_next_identical as selectors,
string tokens mapped to numbers (a dict indexed by `tokens`, a string indexed by an s-op,
`tokens_float`), maps over zipped lists of s-ops, counts of any token, and selector widths of
selectors compounded two levels deep. Without it a seed's text is the one it always was.
`wide_text(seed)` is the campaign's text: the seed's wide text, drawn again (runnable.py) where the
interpreter cannot run it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from runnable import redraw, text_error

NUM_OPS = ["+", "-", "*", "/", "%", "^"]
COMPARISONS = ["==", "<", ">", "<=", ">="]
SELECT_OPS = ["==", "<", ">", "<=", ">=", "!="]

# every text starts with these (each used by some generated call)
PRELUDE = (
    "def f0(x) { return x + 1; }\n"
    "def f1(x) { y = x * 2; return y - indices; }\n"
    "def f2(x) { return aggregate(select(indices, indices, <=), x); }\n"
    "def next_width(x) { return selector_width(select_next_identical(x)); }\n"
)


class TextGenerator:
    """Expressions of three kinds: numbers ("num"), strings ("str") and bools ("bool")."""

    def __init__(self, rng: random.Random, wide: bool = False) -> None:
        self.rng = rng
        self.wide = wide

    def program(self, name: str = "res") -> str:
        kind = self.rng.choice(["num", "num", "str", "bool"])
        return f"{PRELUDE}{name} = {self.expr(self.rng.randint(1, 4), kind)};\n"

    def expr(self, depth: int, kind: str) -> str:
        rng = self.rng
        if depth == 0 or rng.random() < 0.25:
            return self._leaf(kind)
        d = depth - 1
        options: list[Callable[[], str]]
        if kind == "num":
            options = [
                lambda: f"{self.expr(d, 'num')} {rng.choice(NUM_OPS)} {self.expr(d, 'num')}",
                lambda: f"({self.expr(d, 'num')})",
                lambda: f"{rng.choice(['-', '+'])}{self.expr(d, 'num')}",
                lambda: f"round({self.expr(d, 'num')})",
                lambda: f"indicator({self.expr(d, 'bool')})",
                lambda: (
                    f"aggregate({self.select(d)}, {self.expr(d, 'num')}"
                    f"{rng.choice(['', ', 0', ', 1', ', -1'])})"
                ),
                lambda: f"selector_width({self.select(d)})",
                lambda: (
                    f"{self.expr(d, 'num')} if {self.expr(d, 'bool')} else {self.expr(d, 'num')}"
                ),
                lambda: 'count(tokens, "1")',
                lambda: f"shift({self.expr(d, 'num')}, {rng.randint(0, 2)}, {rng.randint(-1, 1)})",
                lambda: (
                    f"{rng.choice(['max', 'min'])}({self.expr(d, 'num')}, {self.expr(d, 'num')})"
                ),
                lambda: f"load_from_location({self.expr(d, 'num')}, {self.expr(d, 'num')})",
                lambda: f"{rng.choice(['indices', 'tokens_int'])}[{rng.randint(-2, 3)}]",
                lambda: f"sort({self.expr(d, 'num')}, {self.expr(d, 'num')})",
                lambda: f"mark_first_instance({self.expr(d, 'num')}, {rng.randint(0, 2)})",
                lambda: f"next_width({self.expr(d, 'num')})",
                lambda: f"average({self.expr(d, 'num')})",
                lambda: f"f{rng.randint(0, 2)}({self.expr(d, 'num')})",
                lambda: f"[{self.expr(d, 'num')}, {self.expr(d, 'num')}][{rng.randint(0, 1)}]",
                lambda: f'{{"x": {self.expr(d, "num")}}}["x"]',
            ]
            options += self._wide_num(d) if self.wide else []
        elif kind == "str":
            options = [
                lambda: (
                    f"aggregate({self.select(d)}, {self.expr(d, 'str')}"
                    + rng.choice(["", ', "z"'])
                    + ")"
                ),
                lambda: f"{self.expr(d, 'str')} + {self.expr(d, 'str')}",
                lambda: (
                    f"{self.expr(d, 'str')} if {self.expr(d, 'bool')} else {self.expr(d, 'str')}"
                ),
                lambda: f"({self.expr(d, 'str')})",
            ]
            options += self._wide_str(d) if self.wide else []
        else:
            options = [
                lambda: self._comparison(d),
                lambda: (
                    f"{self.expr(d, 'bool')} {rng.choice(['and', 'or'])} {self.expr(d, 'bool')}"
                ),
                lambda: f"not {self.expr(d, 'bool')}",
                lambda: f"aggregate({self.select(d)}, {self.expr(d, 'bool')})",
                lambda: f'{self.expr(d, "str")} in ["a", "1"]',
            ]
            options += self._wide_bool(d) if self.wide else []
        return rng.choice(options)()

    def select(self, depth: int) -> str:
        rng = self.rng
        kind = rng.choice(["num", "num", "str"])
        d = max(depth - 1, 0)
        base = f"select({self.expr(d, kind)}, {self.expr(d, kind)}, {rng.choice(SELECT_OPS)})"
        r = rng.random()
        if depth > 0 and r < 0.2:
            other = f"select({self._leaf('num')}, {self._leaf('num')}, {rng.choice(SELECT_OPS)})"
            return f"{base} {rng.choice(['and', 'or'])} {other}"
        if depth > 0 and r < 0.3:
            return f"not {base}"
        if self.wide and depth > 0 and r < 0.45:
            return self._wide_select(d)
        return base

    # -- the wide extras (each list drawn from only where `wide`)

    def _token(self) -> str:
        return f'"{self.rng.choice(["0", "1", "2"])}"'

    def _wide_num(self, d: int) -> list[Callable[[], str]]:
        rng = self.rng
        numbers = [rng.randint(-2, 3) for _ in range(3)]
        return [
            lambda: f'{{"0": {numbers[0]}, "1": {numbers[1]}, "2": {numbers[2]}}}[tokens]',
            lambda: f"count(tokens, {self._token()})",
            lambda: f"selector_width({self._wide_select(d)})",
            lambda: (
                f"aggregate({self._wide_select(d)}, {self.expr(d, 'num')}, {rng.randint(-1, 2)})"
            ),
            lambda: f"aggregate(select_from_first(tokens, {self._token()}), {self.expr(d, 'num')})",
            lambda: (
                f"aggregate(select_next_identical({self.expr(d, 'num')}), {self.expr(d, 'num')}"
                f", {rng.randint(-1, 1)})"
            ),
            lambda: (
                f"[a {rng.choice(NUM_OPS[:3])} b for a, b in zip([{self.expr(d, 'num')}, "
                f"indices], [{self.expr(d, 'num')}, {self.expr(d, 'num')}])][{rng.randint(0, 1)}]"
            ),
            lambda: f"tokens_float {rng.choice(NUM_OPS[:4])} {self.expr(d, 'num')}",
            lambda: f"indicator({self.expr(d, 'str')} < {self._token()}) * tokens_int",
        ]

    def _wide_str(self, d: int) -> list[Callable[[], str]]:
        rng = self.rng
        return [
            lambda: f'"xyz"[{self.expr(d, "num")} % 3]',
            lambda: '{"0": "x", "1": "y", "2": "0"}[tokens]',
            lambda: (
                f"aggregate(select_from_first(tokens, {self._token()}) or "
                f'{self._wide_select(d)}, {self.expr(d, "str")}, "{rng.choice("xz")}")'
            ),
        ]

    def _wide_bool(self, d: int) -> list[Callable[[], str]]:
        return [
            lambda: f"contains({self.expr(d, 'str')}, {self._token()})",
            lambda: f"has_focus({self._wide_select(d)})",
            lambda: f"mark_last_instance(tokens, {self._token()})",
            lambda: f"tokens in [{self._token()}, {self._token()}]",
        ]

    def _wide_select(self, d: int) -> str:
        """Two selects joined, one side itself compound or negated."""
        rng = self.rng

        def atom() -> str:
            kind = rng.choice(["num", "str"])
            keys, queries = self.expr(max(d - 1, 0), kind), self._leaf(kind)
            return f"select({keys}, {queries}, {rng.choice(SELECT_OPS)})"

        inner = f"{atom()} {rng.choice(['and', 'or'])} {atom()}"
        if rng.random() < 0.5:
            inner = f"not ({inner})"
        return f"({atom()} {rng.choice(['and', 'or'])} ({inner}))"

    def _comparison(self, depth: int) -> str:
        kind = self.rng.choice(["num", "str"])
        left, right = self.expr(depth, kind), self.expr(depth, kind)
        return f"{left} {self.rng.choice(COMPARISONS)} {right}"

    def _leaf(self, kind: str) -> str:
        rng = self.rng
        if kind == "num":
            return rng.choice(
                [
                    "indices",
                    "length",
                    "tokens_int",
                    str(rng.randint(0, 4)),
                    f"{rng.randint(0, 3)}.5",
                ]
            )
        if kind == "str":
            return rng.choice(["tokens", '"a"', '"1"', "tokens_str"])
        return rng.choice(["True", "False", '(tokens == "1")', "(indices < 2)"])


TOKENS = ["0", "1", "2"]  # the texts' vocabulary (tokens_int reads them)


def wide_text(seed: int, rewrite: Callable[[str], str] | None = None) -> str:
    """The seed's wide text, drawn again from the seed's stream while the interpreter cannot run
    it (or its `rewrite`, the text the campaign compiles): where the first draw runs, the text
    it always was."""
    rng = random.Random(seed)
    change = rewrite or (lambda text: text)
    return redraw(
        lambda: TextGenerator(rng, wide=True).program(),
        lambda text: text_error(change(text), TOKENS),
    )

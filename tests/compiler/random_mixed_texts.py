"""Random RASP program texts whose s-ops mix equal values of different types, for the fuzz
campaign's `mixed` flavour: 1, 1.0 and True (0, 0.0 and False) in one s-op, from ternaries, dicts
indexed by tokens and bools used as numbers, flowing into maps, comparisons, selects, sorts and
aggregates with defaults of every type; maps reading one variable several times (`v0 * v0 - v0`,
`v0 if v0 > 1 else -v0`); strings with odd characters (empty, a space, a backslash, accents,
an emoji, comment markers), as values and as tokens; and selector widths of compound selectors
added to or multiplied by means. The other generators draw these only by chance, or never.

Each text binds a few variables `v0`, `v1`, ... and then `res`, which reads them. Many texts fail
in the interpreter (a string plus a number, a mean of strings): the seed's text is then drawn
again (runnable.py), so that it runs. Seeded: a text and its vocabulary reproduce from the seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from runnable import redraw_text

# vocabularies: digits (tokens_int reads them) or strings of odd characters
VOCABS = (["0", "1", "2"], ["0", "1", "2"], ["a", "é", " ", "\\"], ["", "x", "😀"])
# string constants a user may write (no `"` and no line break: the grammar has no escapes)
ODD_STRINGS = ["", " ", "é", "\\", "'", "😀", "a b", "#", "//", "ß", "\\n", "0"]
NUMBERS = ["0", "1", "2", "1.0", "0.0", "0.5", "2.0", "True", "False", "-1"]
DEFAULTS = ["0", "0.0", "False", "1", "1.0", "True", "-1", "0.5"]
ORDERS = ["==", "!=", "<", ">", "<=", ">="]


class MixedTextGenerator:
    """Expressions of three kinds: numbers ("num", where 1, 1.0 and True mix), strings ("str")
    and bools ("bool")."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vocab = list(rng.choice(VOCABS))
        self.digits = all(v.isdigit() for v in self.vocab)
        self.vars: dict[str, list[str]] = {"num": [], "str": [], "bool": []}
        self.lines: list[str] = []

    def program(self) -> str:
        r = self.rng
        for _ in range(r.randint(2, 4)):
            kind = r.choice(["num", "num", "num", "str", "bool"])
            name = f"v{len(self.lines)}"
            self.lines.append(f"{name} = {self.expr(r.randint(1, 2), kind)};")
            self.vars[kind].append(name)
        kind = r.choice(["num", "num", "num", "str", "bool"])
        # of a few candidates, the one reading the most variables (then the longest, up to a point)
        candidates = [self.expr(r.randint(2, 3), kind) for _ in range(4)]
        res = max(candidates, key=lambda c: (len(set(re.findall(r"v[0-9]+", c))), min(len(c), 200)))
        return "\n".join([*self.lines, f"res = {res};"]) + "\n"

    def _token(self) -> str:
        return f'"{self.rng.choice(self.vocab)}"'

    def _var(self, kind: str) -> str | None:
        names = self.vars[kind]
        return self.rng.choice(names) if names and self.rng.random() < 0.7 else None

    # -- leaves

    def leaf(self, kind: str) -> str:
        r = self.rng
        var = self._var(kind)
        if var is not None:
            return var
        if kind == "num":
            options = ["indices", "length", r.choice(NUMBERS), self._twins()]
            return r.choice(options + (["tokens_int"] if self.digits else []))
        if kind == "str":
            return r.choice(["tokens", f'"{r.choice(ODD_STRINGS)}"'])
        return r.choice([f"(tokens == {self._token()})", "(indices < 2)", "(length > 2)"])

    def _twins(self) -> str:
        """An s-op holding equal numbers of different types at different positions."""
        r = self.rng
        a, b, c = r.sample(["1", "1.0", "True", "0", "0.0", "False", "2", "2.0"], 3)
        t0, t1 = self._token(), self._token()
        return r.choice(
            [
                f"({a} if tokens == {t0} else {b})",
                f"({a} if tokens == {t0} else ({b} if indices == {r.randint(0, 2)} else {c}))",
                "{"
                + ", ".join(f'"{v}": {w}' for v, w in zip(self.vocab, [a, b, c, c]))
                + "}[tokens]",
                f"((tokens == {t0}) + {r.choice(['0', '0.0', 'indices'])})",
                f"indicator(tokens == {t1})",
            ]
        )

    # -- expressions

    def expr(self, depth: int, kind: str) -> str:
        if depth <= 0 or self.rng.random() < 0.2:
            return self.leaf(kind)
        d = depth - 1
        make = {"num": self._num, "str": self._str, "bool": self._bool}[kind]
        return self.rng.choice(make(d))()

    def _again(self, kind: str, d: int) -> str:
        """An operand a map reads more than once: a variable where there is one."""
        names = self.vars[kind]
        if names:
            return self.rng.choice(names)
        if kind == "num":
            return self.rng.choice(["indices", self._twins()])
        return "tokens" if kind == "str" else f"(tokens == {self._token()})"

    def _num(self, d: int) -> list[Callable[[], str]]:
        r = self.rng
        e = self.expr
        return [
            lambda: f"{e(d, 'num')} {r.choice(['+', '-', '*'])} {e(d, 'num')}",
            lambda: f"{e(d, 'num')} / {r.choice(['2', '2.0', '4'])}",
            lambda: f"-{e(d, 'num')}",
            lambda: f"round({e(d, 'num')})",
            lambda: f"indicator({e(d, 'bool')})",
            lambda: self._twins(),
            lambda: self._reread(d),
            lambda: self._reread(d),
            lambda: f"aggregate({self.select(d)}, {e(d, 'num')}, {r.choice(DEFAULTS)})",
            lambda: f"aggregate({self.select(d)}, {e(d, 'num')})",
            lambda: (
                f"selector_width({self.compound(d)}) {r.choice(['+', '*', '-'])} "
                f"aggregate({self.select(d)}, {e(d, 'num')}, {r.choice(DEFAULTS)})"
            ),
            lambda: f"selector_width({self.compound(d)})",
            lambda: f"sort({e(d, 'num')}, {e(d, r.choice(['num', 'str']))})",
            lambda: f"shift({e(d, 'num')}, {r.randint(1, 2)}, {r.choice(DEFAULTS)})",
            lambda: f"load_from_location({e(d, 'num')}, {e(d, 'num')})",
            lambda: f"({e(d, 'num')} if {e(d, 'bool')} else {e(d, 'num')})",
            lambda: f"{{0: {r.choice(NUMBERS)}, 1: {r.choice(NUMBERS)}, 2: 2}}[{e(d, 'num')} % 3]",
            lambda: f'count({self._again("str", d)}, "{r.choice(ODD_STRINGS)}")',
        ]

    def _reread(self, d: int) -> str:
        """A map reading one s-op two or three times."""
        x = self._again("num", d)
        y = self.expr(d, "num")
        return self.rng.choice(
            [
                f"{x} * {x} - {x}",
                f"{x} - {x}",
                f"{x} if {x} > {y} else -{x}",
                f"max({x}, {x} + {y})",
                f"({x} == {x}) + {x}",
                f"{x} * ({x} < 1)",
                f"({x} + {y}) * {x}",
                f"({x} if {x} == {y} else {y})",
            ]
        )

    def _str(self, d: int) -> list[Callable[[], str]]:
        r = self.rng
        e = self.expr
        return [
            lambda: f"{e(d, 'str')} + {e(d, 'str')}",
            lambda: f"{self._again('str', d)} + {self._again('str', d)}",
            lambda: f"({e(d, 'str')} if {e(d, 'bool')} else {e(d, 'str')})",
            lambda: (
                f'"{r.choice(ODD_STRINGS)}{r.choice(ODD_STRINGS)}éa "[round({e(d, "num")}) % 3]'
            ),
            lambda: (
                "{"
                + ", ".join(f'"{v}": "{r.choice(ODD_STRINGS)}"' for v in self.vocab)
                + "}[tokens]"
            ),
            # (a mean of strings fails: at most one key)
            lambda: (
                f"aggregate(select(indices, {e(d, 'num')}, ==), {e(d, 'str')}, "
                f'"{r.choice(ODD_STRINGS)}")'
            ),
            lambda: f"sort({e(d, 'str')}, {e(d, r.choice(['num', 'str']))})",
            lambda: f'shift({e(d, "str")}, 1, "{r.choice(ODD_STRINGS)}")',
        ]

    def _bool(self, d: int) -> list[Callable[[], str]]:
        r = self.rng
        e = self.expr
        return [
            lambda: f"{e(d, 'num')} {r.choice(ORDERS)} {e(d, 'num')}",
            lambda: f'{e(d, "str")} {r.choice(ORDERS)} "{r.choice(ODD_STRINGS)}"',
            lambda: f"{e(d, 'str')} {r.choice(ORDERS)} {e(d, 'str')}",
            lambda: f"{e(d, 'bool')} {r.choice(['and', 'or'])} {r.choice(['True', 'False'])}",
            lambda: f"{e(d, r.choice(['bool', 'num']))} {r.choice(['and', 'or'])} {e(d, 'bool')}",
            lambda: f"not {e(d, r.choice(['bool', 'num']))}",
            lambda: f"({self._again('num', d)} in [1, 0.5, True])",
            lambda: f'({self._again("str", d)} in ["", " ", "é", "0"])',
            lambda: f'contains({self._again("str", d)}, "{r.choice(ODD_STRINGS)}")',
            lambda: f"shift({e(d, 'bool')}, 1, {r.choice(DEFAULTS)})",
            lambda: f"{self._again('bool', d)} and not {self._again('bool', d)}",
        ]

    # -- selectors

    def select(self, d: int) -> str:
        kind = self.rng.choice(["num", "num", "str"])
        keys, queries = self.expr(d, kind), self.expr(max(d - 1, 0), kind)
        return f"select({keys}, {queries}, {self.rng.choice(ORDERS)})"

    def compound(self, d: int) -> str:
        """Two or three selects joined by and/or, one side perhaps negated."""
        r = self.rng
        inner = f"{self.select(d)} {r.choice(['and', 'or'])} {self.select(max(d - 1, 0))}"
        if r.random() < 0.4:
            inner = f"not ({inner})"
        if r.random() < 0.5:
            return (
                f"select(indices, indices, {r.choice(ORDERS)}) {r.choice(['and', 'or'])} ({inner})"
            )
        return inner


def random_mixed_program(
    seed: int, rewrite: Callable[[str], str] | None = None
) -> tuple[str, list[str]]:
    """The seed's text and its vocabulary, drawn again from the seed's stream while the
    interpreter cannot run the text (or its `rewrite`, the text the campaign compiles)."""
    rng = random.Random(seed)

    def draw() -> tuple[str, list[str]]:
        generator = MixedTextGenerator(rng)
        return generator.program(), generator.vocab

    return redraw_text(draw, rewrite)

"""Random RASP program texts built around numbers: means (prefix, suffix, whole-sequence and
under compound selectors), maps of means, products and quotients of two means, means compared
in selects and in conditions, selector widths of compound selectors, nested aggregates,
ternaries, dict and list lookups, the original's count idiom, and arithmetic on `length` and
`indices`, with values that are equal numbers of two types (the int 1 a mean of one key copies,
the float 1.0 of several; `indices / 2`). Seeded: a text reproduces from its seed.

Each text binds a few variables `v0`, `v1`, ... and then `res`, which reads them; a text the
interpreter runs on no input is drawn again (runnable.py). Where this generator found
certified models that differed from the interpreter, the program is a regression test of its
own (tests/compiler/test_number_twins.py, tests/compiler/test_values.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from runnable import redraw_text

ORDERS = ["==", "<", ">", "<=", ">=", "!="]


class NumericTextGenerator:
    """A program over `vocab` (letters, or digits that `tokens_int` reads as numbers)."""

    def __init__(self, rng: random.Random, vocab: list[str]) -> None:
        self.rng = rng
        self.vocab = vocab
        self.digits = all(v.isdigit() for v in vocab)
        self.vars: dict[str, list[str]] = {"num": [], "bool": [], "str": [], "mean": []}
        self.lines: list[str] = []
        # (later statements, and `res` always, read the variables bound before them)
        self.reading = False

    def program(self) -> str:
        r = self.rng
        for j in range(r.randint(2, 4)):
            self.reading = j > 0 and r.random() < 0.6
            kind = r.choice(["mean", "mean", "mean", "num", "bool", "str"])
            depth = r.randint(1, 2)
            make = {"mean": self.mean, "num": self.num, "bool": self.boolean, "str": self.text}
            self._bind(kind, make[kind](depth))
        self.reading = True
        kind = r.choice(["num", "num", "num", "num", "bool", "str"])
        depth = r.randint(2, 3)
        make = {"num": self.num, "bool": self.boolean, "str": self.text}[kind]
        # of a few candidates, the one reading the most variables (then the longest, up to a point)
        candidates = [make(depth) for _ in range(4)]
        res = max(candidates, key=lambda c: (len(set(re.findall(r"v[0-9]+", c))), min(len(c), 200)))
        return "\n".join([*self.lines, f"res = {res};"]) + "\n"

    def _bind(self, kind: str, expr: str) -> None:
        name = f"v{len(self.lines)}"
        self.lines.append(f"{name} = {expr};")
        self.vars[kind].append(name)

    def _token(self) -> str:
        return f'"{self.rng.choice(self.vocab)}"'

    # -- leaves

    def _num_leaf(self) -> str:
        r = self.rng
        options = [
            "indices",
            "length",
            str(r.randint(0, 3)),
            f"indicator(tokens == {self._token()})",
        ]
        if self.digits:
            options.append("tokens_int")
        if self.vars["mean"] and (self.reading or r.random() < 0.6):
            return r.choice(self.vars["mean"] + self.vars["num"])
        if self.vars["num"] and r.random() < 0.6:
            return r.choice(self.vars["num"])
        return r.choice(options)

    def _bool_leaf(self) -> str:
        r = self.rng
        nums = self.vars["mean"] + self.vars["num"]
        if self.reading and nums and r.random() < 0.7:
            a = r.choice(nums)
            if r.random() < 0.5:
                return f"{a} {r.choice(ORDERS[:5])} {r.choice([*nums, '0.5', '1', '2'])}"
            return f"{a} > {r.choice(['0', '0.5', '1', '0.25', '0.7', '2'])}"
        if self.vars["bool"] and r.random() < 0.5:
            return r.choice(self.vars["bool"])
        return r.choice(
            [
                f"tokens == {self._token()}",
                f"indices < {r.randint(1, 4)}",
                f"indices % 2 == {r.randint(0, 1)}",
                f"tokens != {self._token()}",
            ]
        )

    def _text_leaf(self) -> str:
        r = self.rng
        nums = self.vars["mean"] + self.vars["num"]
        if self.reading and nums and r.random() < 0.5:
            a, b = r.choice(nums), r.choice([*nums, "indices"])
            return f'aggregate(select({a}, {b}, {r.choice(["<", "==", ">=", "<="])}), tokens, "z")'
        if self.vars["str"] and r.random() < 0.5:
            return r.choice(self.vars["str"])
        return "tokens"

    # -- selectors

    def _atom_select(self, depth: int) -> str:
        r = self.rng
        op = r.choice(ORDERS)
        kind = r.random()
        if kind < 0.3:
            return f"select(indices, indices, {op})"
        if kind < 0.45:
            return f"select(tokens, tokens, {r.choice(['==', '!=', '<'])})"
        if kind < 0.55:
            return f"select(tokens, {self._token()}, ==)"
        if kind < 0.7 and self.vars["mean"]:  # means compared
            return f"select({self.num(depth)}, {self.num(depth)}, {op})"
        if kind < 0.8:
            return f"select(indices, {self._position()}, {op})"
        return f"select({self.num(depth)}, {self.num(depth)}, {op})"

    def select(self, depth: int) -> str:
        r = self.rng
        first = self._atom_select(max(depth - 1, 0))
        x = r.random()
        if depth > 0 and x < 0.25:
            return f"{first} and {self._atom_select(0)}"
        if depth > 0 and x < 0.4:
            return f"{first} or {self._atom_select(0)}"
        if depth > 0 and x < 0.5:
            return f"not {first}"
        return first

    def _position(self) -> str:
        r = self.rng
        return r.choice(
            [
                "length - indices - 1",
                f"indices + {r.randint(1, 2)}",
                f"indices - {r.randint(1, 2)}",
                "2 * indices",
                "indices * 2 + 1",
                "length - 1",
                f"indices % {r.randint(2, 3)}",
                "length - indices",
                "(length - indices) % 2",
                "indices + length % 2",
                "round(length / 2)",
                "length % 3",
            ]
        )

    # -- expressions

    def mean(self, depth: int) -> str:
        r = self.rng
        value = r.choice(
            [
                f"indicator(tokens == {self._token()})",
                f"indicator(tokens == {self._token()})",
                "indices",
                self.num(max(depth - 1, 0)),
                *(["tokens_int"] if self.digits else []),
            ]
        )
        selector = r.choice(
            [
                "select(indices, indices, <=)",
                "select(indices, indices, <)",
                "select(indices, indices, >=)",
                "full_s",
                self.select(depth),
            ]
        )
        return f"aggregate({selector}, {value}{r.choice(['', ', 0', ', 1', ', -1'])})"

    def num(self, depth: int) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.3:
            return self._num_leaf()
        d = depth - 1
        options: list[Callable[[], str]] = [
            lambda: self.mean(d),
            lambda: f"selector_width({self.select(d)})",
            lambda: f"({self.num(d)} {r.choice(['+', '-', '*'])} {self.num(d)})",
            lambda: f"({self.num(d)} / ({self.num(d)} + {r.randint(1, 2)}))",
            lambda: f"round({r.choice([2, 3, 10])} * {self.num(d)})",
            lambda: f"({self.num(d)} if {self.boolean(d)} else {self.num(d)})",
            lambda: f"{{{self._dict_body()}}}[{self._text_leaf()}]",
            lambda: f"[{r.randint(0, 3)}, {r.randint(0, 3)}, {r.randint(0, 3)}][indices % 3]",
            self._position,
            lambda: f"({self.num(d)} % {r.randint(2, 3)})",
            lambda: f"aggregate({self.select(d)}, {self.num(d)}, {r.randint(-1, 1)})",
            lambda: f"(length - {self.num(d)})",
            lambda: f"max({self.num(d)}, {self.num(d)})",
            lambda: f"indicator({self.boolean(d)})",
            lambda: (
                f"round((indices + 1) * aggregate(select(indices, indices, <=), {self.num(d)}))"
            ),
            lambda: f"round(length * aggregate(full_s, indicator(tokens == {self._token()})))",
            lambda: f"({self.num(d)} * {self.num(d)})",
            lambda: f"({self.num(d)} / length)",
            lambda: "(indices / length)",
            lambda: f"({self.num(d)} * length)",
            # equal numbers of two types at two positions
            lambda: f"({self.num(d)} if indices < {r.randint(1, 3)} else {self.num(d)} / 2)",
            lambda: "(indices if indices < 2 else indices / 2)",
            lambda: f"({self.boolean(d)} if {self.boolean(d)} else {self.num(d)})",
            lambda: f"({self.num(d)} + 0.5)",
        ]
        return r.choice(options)()

    def _dict_body(self) -> str:
        return ", ".join(f'"{t}": {self.rng.randint(-1, 3)}' for t in self.vocab)

    def boolean(self, depth: int) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.2:
            return self._bool_leaf()
        d = depth - 1
        options: list[Callable[[], str]] = [
            lambda: f"{self.num(d)} {r.choice(ORDERS)} {self.num(d)}",
            lambda: f"{self.num(d)} > {r.choice(['0.5', '0', '1', '0.25', '0.3'])}",
            lambda: f"({self.boolean(d)}) {r.choice(['and', 'or'])} ({self.boolean(d)})",
            lambda: f"{self.text(d)} == {self._token()}",
        ]
        return r.choice(options)()

    def text(self, depth: int) -> str:
        r = self.rng
        if depth <= 0 or r.random() < 0.3:
            return self._text_leaf()
        d = depth - 1
        options: list[Callable[[], str]] = [
            lambda: f'aggregate({self.select(d)}, {self.text(d)}, "z")',
            lambda: f"({self.text(d)} if {self.boolean(d)} else {self.text(d)})",
            lambda: f"load_from_location(tokens, {self._position()})",
        ]
        return r.choice(options)()


def random_numeric_program(
    seed: int, rewrite: Callable[[str], str] | None = None
) -> tuple[str, list[str], int]:
    """The seed's text, its vocabulary (2 to 4 letters or digits) and a maximum length, drawn
    again from the seed's stream while the interpreter cannot run the text (or its `rewrite`,
    the text the campaign compiles; runnable.py)."""
    rng = random.Random(seed)

    def draw() -> tuple[str, list[str], int]:
        letters = rng.random() < 0.6
        size = rng.choice([2, 2, 3, 3, 4])
        vocab = list(("abcd" if letters else "0123")[:size])
        max_len = rng.choice([4, 5, 6, 8])
        return NumericTextGenerator(rng, vocab).program(), vocab, max_len

    return redraw_text(draw, rewrite)

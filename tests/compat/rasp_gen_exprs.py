"""The expressions rasp_gen draws: atoms (numbers, strings, bools), lists, dicts and
comprehensions, indexing, `if`/`else`, calls of the program's functions, and s-ops and selectors
(elementwise expressions, `select`, `aggregate`, `selector_width`, the library's functions).
`ExprGen` holds what a program has bound so far; rasp_gen's generator adds the statements.
"""

from __future__ import annotations

import random

from tests.compat.rasp_gen_odd import ODD_STRINGS

NUM, STR, BOOL, LIST, DICT = "num", "str", "bool", "list", "dict"
NSOP, SSOP, BSOP, SEL = "nsop", "ssop", "bsop", "sel"
ATOMS = (NUM, STR, BOOL)
SOPS = (NSOP, SSOP, BSOP)

CMP = ("==", "<", ">", "<=", ">=")
SELECT_OPS = ("==", "<", ">", "<=", ">=", "!=")
ARITH = ("+", "-", "*", "/", "%", "^")
# the tokens_X that convert every token of an example of that kind (the others fail on it)
INT_TOKENS = ("tokens_float", "tokens_int", "tokens_asis", "tokens_str")
ANY_TOKENS = ("tokens_asis", "tokens_str")


class ExprGen:
    def __init__(self, rng: random.Random, prefix: str, layout: random.Random) -> None:
        self.rng = rng
        self.layout = layout  # its own stream: the statements drawn from rng stay the same
        self.prefix = prefix
        self.count = 0
        self.names: dict[str, list[str]] = {}
        self.funcs: list[tuple[str, int]] = []  # (name, arity): numeric in, numeric out
        self.int_example = False
        self.tokens = ANY_TOKENS

    # -- helpers ---------------------------------------------------------------------------
    def fresh(self) -> str:
        self.count += 1
        return f"{self.prefix}{self.count}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: tuple[str, ...] | list[str]) -> str:
        return self.rng.choice(list(items))

    def name_of(self, kind: str) -> str | None:
        known = self.names.get(kind)
        return self.rng.choice(known) if known and self.chance(0.5) else None

    def wrong_kind(self, kind: str) -> str:
        """Now and then another kind than asked for: ill-typed programs are compared too."""
        if self.chance(0.03):
            return self.pick([k for k in (*ATOMS, LIST, NSOP, SSOP, BSOP, SEL) if k != kind])
        return kind

    # -- expressions -----------------------------------------------------------------------
    def expr(self, kind: str, depth: int) -> str:
        kind = self.wrong_kind(kind)
        name = self.name_of(kind)
        if name is not None:
            return name
        make = {
            NUM: self.num,
            STR: self.string,
            BOOL: self.boolean,
            LIST: self.list_,
            DICT: self.dict_,
            NSOP: self.nsop,
            SSOP: self.ssop,
            BSOP: self.bsop,
            SEL: self.sel,
        }[kind]
        return make(max(depth, 0))

    def paren(self, text: str) -> str:
        return f"({text})" if self.chance(0.5) else text

    def num(self, d: int) -> str:
        leaf = [
            lambda: str(self.rng.randint(0, 5)),
            lambda: self.pick(("0.5", "1.5", "2.0", "0.0", "10", "1000", "0.1", "3.14159")),
            lambda: self.pick(("True", "False")),
        ]
        inner = [
            lambda: (
                f"{self.paren(self.num(d - 1))} {self.pick(ARITH)} {self.paren(self.num(d - 1))}"
            ),
            lambda: f"-{self.paren(self.num(d - 1))}",
            lambda: f"round({self.num(d - 1)})",
            lambda: f"len({self.list_(d - 1)})",
            lambda: self.index(NUM, d),
            lambda: self.cond(NUM, BOOL, d),
            lambda: self.call(NUM, d),
            lambda: f"+{self.paren(self.num(d - 1))}",
            lambda: (
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))} {self.pick(ARITH)} "
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))}"
            ),
            lambda: f"len({self.expr(self.pick((STR, DICT, LIST)), d - 1)})",
            lambda: f"round({self.expr(self.pick(ATOMS), d - 1)})",
            lambda: (
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))} {self.pick(('and', 'or'))} "
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))}"
            ),
            lambda: self.dict_index(d),
            lambda: (
                f"{self.expr(self.pick(ATOMS), d - 1)} if {self.expr(self.pick((*ATOMS, LIST)), d - 1)} "
                f"else {self.num(d - 1)}"
            ),
        ]
        return self.choose(leaf, inner, d)

    def dict_index(self, d: int) -> str:
        known = self.names.get(DICT)
        target = self.rng.choice(known) if known else None
        if target is None or target.startswith("("):
            return self.num(0)
        return f"{target}[{self.expr(self.pick((STR, NUM)), 0)}]"

    def string(self, d: int) -> str:
        leaf = [
            lambda: self.pick(('"a"', '"b"', '"l"', '"ab"', '""', '"hello"', '"1"')),
            lambda: self.pick(ODD_STRINGS) if self.chance(0.3) else '"a"',
        ]
        inner = [
            lambda: f"{self.string(d - 1)} + {self.string(d - 1)}",
            lambda: self.index(STR, d),
            lambda: self.cond(STR, BOOL, d),
            lambda: f"{self.paren(self.string(d - 1))} * {self.rng.randint(-1, 3)}",
        ]
        return self.choose(leaf, inner, d)

    def boolean(self, d: int) -> str:
        leaf = [lambda: self.pick(("True", "False"))]
        inner = [
            lambda: (
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))} {self.pick(CMP)} "
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.boolean(d - 1))} {self.pick(('and', 'or'))} "
                f"{self.paren(self.boolean(d - 1))}"
            ),
            lambda: f"not {self.paren(self.boolean(d - 1))}",
            lambda: (
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))} in "
                f"{self.expr(self.pick((LIST, DICT, STR)), d - 1)}"
            ),
        ]
        return self.choose(leaf, inner, d)

    def list_(self, d: int) -> str:
        leaf = [
            lambda: "[" + ", ".join(self.num(0) for _ in range(self.rng.randint(0, 4))) + "]",
            lambda: "[" + ", ".join(self.string(0) for _ in range(self.rng.randint(1, 3))) + "]",
            lambda: f"range({self.rng.randint(0, 4)})",
        ]
        inner = [
            lambda: "[" + ", ".join(self.expr(self.pick(ATOMS), d - 1) for _ in range(3)) + "]",
            lambda: f"range({self.num(d - 1)}, {self.num(d - 1)})",
            lambda: f"{self.list_(d - 1)} + {self.list_(d - 1)}",
            lambda: self.comprehension(d),
            lambda: f"zip({self.list_(d - 1)}, {self.list_(d - 1)})",
            lambda: self.cond(LIST, BOOL, d),
        ]
        return self.choose(leaf, inner, d)

    def comprehension(self, d: int) -> str:
        var = self.fresh()
        if self.chance(0.3):
            var2 = self.fresh()
            body = f"{var} {self.pick(ARITH)} {var2}"
            return f"[{body} for {var}, {var2} in zip({self.list_(d - 1)}, {self.list_(d - 1)})]"
        body = self.with_name(var, NUM, lambda: self.expr(self.pick((NUM, NUM, STR, BOOL)), d - 1))
        return f"[{body} for {var} in {self.list_(d - 1)}]"

    def dict_(self, d: int) -> str:
        if d > 0 and self.chance(0.4):
            var = self.fresh()
            val = self.with_name(var, NUM, lambda: self.num(d - 1))
            return f"{{{var}: {val} for {var} in {self.list_(d - 1)}}}"
        pairs = [
            f"{self.expr(self.pick((STR, NUM)), 0)}: {self.expr(self.pick(ATOMS), d - 1)}"
            for _ in range(self.rng.randint(0, 3))
        ]
        return "{" + ", ".join(pairs) + "}"

    def with_name(self, var: str, kind: str, make: object) -> str:
        self.names.setdefault(kind, []).append(var)
        try:
            return make()  # type: ignore[operator]
        finally:
            self.names[kind].remove(var)

    def index(self, kind: str, d: int) -> str:
        """A name or list literal, indexed by an unparenthesized index (section 7)."""
        idx = self.pick((str(self.rng.randint(-3, 4)), self.num(0)))
        if kind == STR and self.chance(0.5):
            known = self.names.get(STR)
            target = self.rng.choice(known) if known else self.string(0)
            if target.startswith("("):
                target = '"abc"'
            return f"{target}[{idx}]"
        known = self.names.get(LIST)
        if known and self.chance(0.6):
            return f"{self.rng.choice(known)}[{idx}]"
        make = self.num if kind == NUM else self.string
        items = ", ".join(make(0) for _ in range(self.rng.randint(1, 4)))
        return f"[{items}][{idx}]"

    def cond(self, kind: str, cond_kind: str, d: int) -> str:
        a = self.paren(self.expr(kind, d - 1))
        b = self.paren(self.expr(kind, d - 1))
        return f"{a} if {self.paren(self.expr(cond_kind, d - 1))} else {b}"

    def call(self, kind: str, d: int) -> str:
        if not self.funcs:
            return self.expr(kind, d - 1)
        name, arity = self.rng.choice(self.funcs)
        args = ", ".join(self.paren(self.expr(kind, d - 1)) for _ in range(arity))
        return f"{name}({args})"

    def choose(self, leaf: list[object], inner: list[object], d: int) -> str:
        options = leaf if d <= 0 or self.chance(0.25) else inner
        return self.rng.choice(options)()  # type: ignore[operator]

    # -- s-ops and selectors -----------------------------------------------------------------
    def nsop(self, d: int) -> str:
        leaf = [
            lambda: "indices",
            lambda: "length",
            lambda: "tokens_int" if self.int_example else "(indices + 1)",
            lambda: self.pick(self.tokens) if self.chance(0.3) else "indices",
        ]
        inner = [
            lambda: (
                f"{self.paren(self.nsop(d - 1))} {self.pick(ARITH)} {self.paren(self.num(d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.num(d - 1))} {self.pick(ARITH)} {self.paren(self.nsop(d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.nsop(d - 1))} {self.pick(ARITH)} {self.paren(self.nsop(d - 1))}"
            ),
            lambda: f"round({self.nsop(d - 1)})",
            lambda: f"-{self.paren(self.nsop(d - 1))}",
            lambda: f"indicator({self.bsop(d - 1)})",
            lambda: self.aggregate(NSOP, d),
            lambda: f"selector_width({self.sel(d - 1)})",
            lambda: self.cond(NSOP, BSOP, d),
            lambda: f"count({self.ssop(d - 1)}, {self.string(0)})",
            lambda: f"shift({self.nsop(d - 1)}, {self.rng.randint(-1, 2)}, {self.num(0)})",
            lambda: f"average({self.nsop(d - 1)})",
            lambda: f"load_from_location({self.nsop(d - 1)}, {self.nsop(d - 1)})",
            lambda: f"max({self.nsop(d - 1)}, {self.expr(self.pick((NSOP, NUM)), d - 1)})",
            lambda: self.call(NSOP, d),
            lambda: (
                f"{self.paren(self.bsop(d - 1))} {self.pick(ARITH)} {self.paren(self.expr(self.pick((NUM, NSOP)), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.ssop(d - 1))} {self.pick(ARITH)} {self.paren(self.expr(self.pick((NUM, NSOP, STR)), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.nsop(d - 1))} {self.pick(('and', 'or'))} {self.paren(self.expr(self.pick((NUM, NSOP)), d - 1))}"
            ),
            lambda: f"min({self.nsop(d - 1)}, {self.expr(self.pick((NSOP, NUM)), d - 1)})",
        ]
        return self.choose(leaf, inner, d)

    def ssop(self, d: int) -> str:
        leaf = [lambda: "tokens", lambda: "tokens_str"]
        inner = [
            lambda: self.aggregate(SSOP, d),
            lambda: self.cond(SSOP, BSOP, d),
            lambda: f"{self.paren(self.ssop(d - 1))} + {self.string(0)}",
            lambda: f"shift({self.ssop(d - 1)}, {self.rng.randint(-1, 2)}, {self.string(0)})",
            lambda: f"sort({self.ssop(d - 1)}, {self.nsop(d - 1)})",
            lambda: (
                f"{self.paren(self.ssop(d - 1))} if {self.paren(self.bsop(d - 1))} "
                f"else {self.string(0)}"
            ),
        ]
        return self.choose(leaf, inner, d)

    def bsop(self, d: int) -> str:
        leaf = [lambda: f"tokens == {self.string(0)}", lambda: f"indices {self.pick(CMP)} 1"]
        inner = [
            lambda: (
                f"{self.paren(self.nsop(d - 1))} {self.pick(CMP)} "
                f"{self.paren(self.expr(self.pick((NSOP, NUM)), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.ssop(d - 1))} {self.pick(CMP)} "
                f"{self.paren(self.expr(self.pick((SSOP, STR)), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.bsop(d - 1))} {self.pick(('and', 'or'))} "
                f"{self.paren(self.expr(self.pick((BSOP, BOOL)), d - 1))}"
            ),
            lambda: f"not {self.paren(self.bsop(d - 1))}",
            lambda: f"{self.paren(self.ssop(d - 1))} in {self.list_(d - 1)}",
            lambda: f"contains({self.ssop(d - 1)}, {self.string(0)})",
            lambda: f"has_focus({self.sel(d - 1)})",
            lambda: f"mark_last_instance({self.ssop(d - 1)}, {self.string(0)})",
            lambda: f"mark_first_instance({self.ssop(d - 1)}, {self.string(0)})",
            lambda: self.aggregate(BSOP, d),
            lambda: f"{self.string(0)} in {self.ssop(d - 1)}",
            lambda: (
                f"{self.paren(self.nsop(d - 1))} in {self.expr(self.pick((LIST, DICT)), d - 1)}"
            ),
            lambda: (
                f"{self.expr(self.pick(SOPS), d - 1)} {self.pick(CMP)} {self.expr(self.pick(SOPS), d - 1)}"
            ),
            lambda: f"not {self.paren(self.nsop(d - 1))}",
        ]
        return self.choose(leaf, inner, d)

    def aggregate(self, kind: str, d: int) -> str:
        sel = self.sel(d - 1)
        seq = self.expr(kind, d - 1)
        if self.chance(0.5):
            return f"aggregate({sel}, {seq})"
        default = self.expr(self.pick((NUM, STR, BOOL)) if self.chance(0.3) else _ATOM_OF[kind], 0)
        return f"aggregate({sel}, {seq}, {default})"

    def sel(self, d: int) -> str:
        def side() -> str:
            return self.expr(self.pick((NSOP, NSOP, SSOP, BSOP, NUM, STR)), d - 1)

        leaf = [lambda: f"select(indices, indices, {self.pick(SELECT_OPS)})"]
        inner = [
            lambda: f"select({side()}, {side()}, {self.pick(SELECT_OPS)})",
            lambda: f"select({side()}, {side()}, {self.pick(SELECT_OPS)})",
            lambda: (
                f"{self.paren(self.sel(d - 1))} {self.pick(('and', 'or'))} "
                f"{self.paren(self.sel(d - 1))}"
            ),
            lambda: f"not {self.paren(self.sel(d - 1))}",
            lambda: f"select_next_identical({self.ssop(d - 1)})",
            lambda: f"select_from_first({self.ssop(d - 1)}, {self.string(0)})",
            lambda: f"select_from_last({self.ssop(d - 1)}, {self.string(0)})",
        ]
        return self.choose(leaf, inner, d)


_ATOM_OF = {NSOP: NUM, SSOP: STR, BSOP: BOOL}

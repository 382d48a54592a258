"""A random program generator for the original RASP's language (tech-srl/RASP).

Each program is a list of REPL statements that the original's grammar accepts: atoms
(numbers, strings, bools), lists, dicts and comprehensions, `range`, `zip`, `len`, indexing,
arithmetic (division and modulo by zero included), comparisons between mixed types, `if`/`else`
expressions, elementwise s-op expressions, `select` with every comparison, `aggregate` (categorical
and numerical, with and without a default), `selector_width`, selector `and`/`or`/`not`, functions
(`def` ... `return`), `for` loops (over atoms, and over s-ops building an s-op), `set s-op
example` and `set selector example`, selectors applied to inputs, and the library functions the
original preloads. rasp_gen_layout spreads some defs and fors over several lines (with comment
and blank lines), adds trailing comments, recursion and closures; rasp_gen_more adds the REPL's
`show example`, `set example` of an expression, several values bound to one name, dict
comprehensions of key expressions, `tokens` rebound, lone comments and `load`. Most expressions are well
typed; a few are not on purpose, so that errors are compared too.

The generator avoids what docs/language.md (section 7) lists as deliberate differences: `!=`
outside `select`, indexing a parenthesized value, several statements on a line, `and`/`or`/`not`/
`if` on an applied s-op, `out` as a name, an empty example. A program's names all start with its
prefix, so that many programs can share one REPL session without reading each other's names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests.compat.rasp_gen_layout import laid_out
from tests.compat.rasp_gen_more import more
from tests.compat.rasp_gen_odd import ODD, ODD_INPUTS, ODD_SOPS, ODD_STATEMENTS, ODD_STRINGS

NUM, STR, BOOL, LIST, DICT = "num", "str", "bool", "list", "dict"
NSOP, SSOP, BSOP, SEL = "nsop", "ssop", "bsop", "sel"
ATOMS = (NUM, STR, BOOL)
SOPS = (NSOP, SSOP, BSOP)


_CMP = ("==", "<", ">", "<=", ">=")
_SELECT_OPS = ("==", "<", ">", "<=", ">=", "!=")
_ARITH = ("+", "-", "*", "/", "%", "^")
_STRING_EXAMPLES = ('"hello"', '"abcab"', '"aab"', '"z"', '"baaac"', '["the", "cat", "a"]')
_INT_EXAMPLES = ("[3, 1, 2]", "[0, 0, 5, 1]", "[2]", "[1, 2, 3, 4]", "[-2, 7, 0]", "[0]")
_OTHER_EXAMPLES = ("[1.5, 2, 0.25]", "[True, False, True]", '[1, "a", 2.5]', "[2.0, 3.0]")
# the tokens_X that convert every token of an example of that kind (the others fail on it)
_INT_TOKENS = ("tokens_float", "tokens_int", "tokens_asis", "tokens_str")
_ANY_TOKENS = ("tokens_asis", "tokens_str")


@dataclass(frozen=True)
class Program:
    """One generated program: its example, its statements, and inputs to apply its s-ops to."""

    example: str
    statements: tuple[str, ...]


class _Gen:
    def __init__(
        self, rng: random.Random, prefix: str, layout: random.Random, extra: random.Random
    ) -> None:
        self.rng = rng
        self.layout = layout  # its own stream: the statements drawn from rng stay the same
        self.extra = extra  # rasp_gen_more's, likewise
        self.prefix = prefix
        self.count = 0
        self.names: dict[str, list[str]] = {}
        self.funcs: list[tuple[str, int]] = []  # (name, arity): numeric in, numeric out
        self.int_example = False
        self.tokens = _ANY_TOKENS

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
                f"{self.paren(self.num(d - 1))} {self.pick(_ARITH)} {self.paren(self.num(d - 1))}"
            ),
            lambda: f"-{self.paren(self.num(d - 1))}",
            lambda: f"round({self.num(d - 1)})",
            lambda: f"len({self.list_(d - 1)})",
            lambda: self.index(NUM, d),
            lambda: self.cond(NUM, BOOL, d),
            lambda: self.call(NUM, d),
            lambda: f"+{self.paren(self.num(d - 1))}",
            lambda: (
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))} {self.pick(_ARITH)} "
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
                f"{self.paren(self.expr(self.pick(ATOMS), d - 1))} {self.pick(_CMP)} "
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
            body = f"{var} {self.pick(_ARITH)} {var2}"
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
                f"{self.paren(self.nsop(d - 1))} {self.pick(_ARITH)} {self.paren(self.num(d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.num(d - 1))} {self.pick(_ARITH)} {self.paren(self.nsop(d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.nsop(d - 1))} {self.pick(_ARITH)} {self.paren(self.nsop(d - 1))}"
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
                f"{self.paren(self.bsop(d - 1))} {self.pick(_ARITH)} {self.paren(self.expr(self.pick((NUM, NSOP)), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.ssop(d - 1))} {self.pick(_ARITH)} {self.paren(self.expr(self.pick((NUM, NSOP, STR)), d - 1))}"
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
        leaf = [lambda: f"tokens == {self.string(0)}", lambda: f"indices {self.pick(_CMP)} 1"]
        inner = [
            lambda: (
                f"{self.paren(self.nsop(d - 1))} {self.pick(_CMP)} "
                f"{self.paren(self.expr(self.pick((NSOP, NUM)), d - 1))}"
            ),
            lambda: (
                f"{self.paren(self.ssop(d - 1))} {self.pick(_CMP)} "
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
                f"{self.expr(self.pick(SOPS), d - 1)} {self.pick(_CMP)} {self.expr(self.pick(SOPS), d - 1)}"
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

        leaf = [lambda: f"select(indices, indices, {self.pick(_SELECT_OPS)})"]
        inner = [
            lambda: f"select({side()}, {side()}, {self.pick(_SELECT_OPS)})",
            lambda: f"select({side()}, {side()}, {self.pick(_SELECT_OPS)})",
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

    # -- statements ------------------------------------------------------------------------
    def statement(self) -> list[str]:
        roll = self.rng.random()
        if roll < 0.08:
            return [self.funcdef()]
        if roll < 0.15:
            return self.for_loop()
        if roll < 0.2:
            return [self.multi_assign()]
        if roll < 0.28:
            return [f"{self.pick(ODD + ODD_SOPS)};"]
        if roll < 0.29:
            return [self.pick(ODD_STATEMENTS)]
        if roll < 0.3:
            name = self.fresh()
            self.names.setdefault(NSOP, []).append(name)
            return [f"{name} = {self.pick(ODD_SOPS)};"]
        if roll < 0.31:
            return [f"{self.pick(('tokens', 'indices', 'length', 'True'))} = 1;"]
        if roll < 0.36:
            return self.sop_loop()
        if roll < 0.38:
            return [self.example_command()]
        if roll < 0.42:
            return self.sop_function()
        if roll < 0.33 and self.funcs:
            name, arity = self.rng.choice(self.funcs)
            args = ", ".join(self.num(0) for _ in range(self.rng.randint(0, 3)))
            return [f"{name}({args});"]
        kind = self.pick((*ATOMS, NUM, LIST, DICT, NSOP, NSOP, SSOP, BSOP, SEL))
        text = self.expr(kind, self.rng.randint(1, 3))
        if self.chance(0.25):
            return [f"{text};"]
        name = self.fresh()
        self.names.setdefault(kind, []).append(name)
        return [f"{name} = {text};"]

    def multi_assign(self) -> str:
        kinds = [self.pick((NUM, STR, LIST, NSOP)) for _ in range(2)]
        names = [self.fresh() for _ in kinds]
        values = [self.expr(k, 1) for k in kinds]
        for n, k in zip(names, kinds, strict=True):
            self.names.setdefault(k, []).append(n)
        return f"{', '.join(names)} = {', '.join(values)};"

    def funcdef(self) -> str:
        name = self.fresh()
        params = [self.fresh() for _ in range(self.rng.randint(0 if self.chance(0.1) else 1, 2))]
        saved = {k: list(v) for k, v in self.names.items()}
        self.names = {NUM: list(params)}  # the body reads its parameters (atoms or s-ops)
        body = []
        roll = self.rng.random()
        if roll < 0.3:
            local = self.fresh()
            body.append(f"{local} = {self.num(2)};")
            self.names[NUM].append(local)
        elif roll < 0.45:
            acc, var = self.fresh(), self.fresh()
            iterable = self.pick((*params, "range(3)", "[1, 2]")) if params else "range(3)"
            body += [f"{acc} = 0;", f"for {var} in {iterable} {{ {acc} = {acc} + {var}; }}"]
            self.names[NUM] += [acc, var]
        elif roll < 0.55:
            inner, arg = self.fresh(), self.fresh()
            self.names[NUM].append(arg)
            inner_body = self.num(2)
            self.names[NUM].remove(arg)
            body.append(f"def {inner}({arg}) {{ return {inner_body}; }}")
            self.funcs.append((inner, 1))
            body.append(f"{self.fresh()} = {inner}({self.num(1)});")
            self.funcs.remove((inner, 1))
        if self.chance(0.1):
            body.append(f"return {self.num(2)}, {self.num(1)};")
        elif self.chance(0.1):
            side = self.pick((*params, "indices")) if params else "indices"
            body.append(f"return select({side}, {self.nsop(1)}, {self.pick(_SELECT_OPS)});")
        else:
            body.append(f"return {self.num(2)};")
        self.names = saved
        self.funcs.append((name, len(params)))
        return f"def {name}({', '.join(params)}) {{ {' '.join(body)} }}"

    def for_loop(self) -> list[str]:
        acc, var = self.fresh(), self.fresh()
        init = f"{acc} = {self.num(0)};"
        self.names.setdefault(NUM, []).append(acc)
        if self.chance(0.2):
            var2 = self.fresh()
            head = f"{var}, {var2} in zip({self.list_(1)}, {self.list_(1)})"
            self.names[NUM] += [var, var2]
            body = f"{acc} = {acc} + {var} * {var2};"
            self.names[NUM].remove(var)
            self.names[NUM].remove(var2)
        else:
            iterable = self.dict_(1) if self.chance(0.15) else self.list_(2)
            head = f"{var} in {iterable}"
            self.names[NUM].append(var)
            body = f"{acc} = {acc} {self.pick(('+', '*', '-'))} {self.paren(self.num(1))};"
            self.names[NUM].remove(var)
        return [init, f"for {head} {{ {body} }}", f"{acc};"]

    def sop_loop(self) -> list[str]:
        """A loop over s-ops (a list of them, or a comprehension making them) that builds an s-op:
        each value is tested on the running example as it is computed."""
        acc, var = self.fresh(), self.fresh()
        init = f"{acc} = {self.nsop(1)};"
        if self.chance(0.5):
            items = ", ".join(self.expr(self.pick((NSOP, NSOP, NUM)), 1) for _ in range(2))
            iterable = f"[{items}]"
        else:
            k = self.fresh()
            body = f"{self.paren(self.nsop(1))} {self.pick(_ARITH)} {k}"
            iterable = f"[{body} for {k} in {self.pick(('range(3)', '[1, 2]', '[0]'))}]"
        self.names.setdefault(NSOP, []).append(acc)
        op = self.pick(("+", "-", "*", "and", "or"))
        return [init, f"for {var} in {iterable} {{ {acc} = {acc} {op} {var}; }}", f"{acc};"]

    def sop_function(self) -> list[str]:
        """A function of s-ops (its parameters read as s-ops: select, aggregate, a local s-op,
        perhaps a nested def) and a call of it on s-ops, bound and then applied."""
        name = self.fresh()
        params = [self.fresh() for _ in range(self.rng.randint(1, 2))]
        saved = {k: list(v) for k, v in self.names.items()}
        self.names = {NSOP: list(params)}
        body = []
        if self.chance(0.5):
            local = self.fresh()
            body.append(f"{local} = {self.nsop(2)};")
            self.names[NSOP].append(local)
        if self.chance(0.3):
            inner, arg = self.fresh(), self.fresh()
            self.names[NSOP].append(arg)
            body.append(f"def {inner}({arg}) {{ return {self.nsop(1)}; }}")
            self.names[NSOP].remove(arg)
            result = f"{inner}({self.nsop(1)})"
        else:
            result = self.nsop(2)
        body.append(f"return {result};")
        self.names = saved
        call, bound = f"{name}({', '.join(self.nsop(1) for _ in params)})", self.fresh()
        self.names.setdefault(NSOP, []).append(bound)
        return [f"def {name}({', '.join(params)}) {{ {' '.join(body)} }}", f"{bound} = {call};"]

    def example_command(self) -> str:
        """`set s-op example`, `set selector example`, `full seq display` or `examples` on or
        off (each program starts with every setting reset: gen_diff.session_text)."""
        which = self.pick(("s-op ", "selector ", ""))
        if self.chance(0.5):
            return f"set {which or 's-op '}example {self.pick(_INT_EXAMPLES + _STRING_EXAMPLES)}"
        switch = self.pick(("on", "off"))
        return self.pick((f"full seq display {switch}", f"{which}examples {switch}"))

    def program(self, length: int) -> Program:
        self.int_example = self.chance(0.3)
        example = self.pick(_INT_EXAMPLES if self.int_example else _STRING_EXAMPLES)
        self.tokens = _INT_TOKENS if self.int_example else _ANY_TOKENS
        if self.chance(0.1):
            example = self.pick(_OTHER_EXAMPLES)
            self.tokens = _ANY_TOKENS
        statements: list[str] = []
        for _ in range(length):
            statements += self.statement()
        statements = laid_out(statements, self.prefix, self.layout)
        statements = more(statements, self.prefix, self.int_example, self.extra)
        for kind in (*SOPS, SEL):
            for name in self.names.get(kind, [])[:2]:
                other = self.pick(_INT_EXAMPLES if self.int_example else _STRING_EXAMPLES)
                if self.chance(0.15):
                    other = self.pick(ODD_INPUTS)
                statements.append(f"{name}({other});")
        return Program(example, tuple(statements))


_ATOM_OF = {NSOP: NUM, SSOP: STR, BSOP: BOOL}


def generate(seed: int, count: int, length: int = 8) -> list[Program]:
    """`count` programs of about `length` statements each, the same ones for the same seed."""
    rng = random.Random(seed)
    return [
        _Gen(
            rng, f"p{i}_", random.Random(f"{seed}:{i}"), random.Random(f"{seed}:{i}:more")
        ).program(length)
        for i in range(count)
    ]

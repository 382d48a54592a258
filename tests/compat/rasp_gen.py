"""A random program generator for the original RASP's language (tech-srl/RASP).

Each program is a list of REPL statements that the original's grammar accepts: atoms
(numbers, strings, bools), lists, dicts and comprehensions, `range`, `zip`, `len`, indexing,
arithmetic (division and modulo by zero included), comparisons between mixed types, `if`/`else`
expressions, elementwise s-op expressions, `select` with every comparison, `aggregate` (categorical
and numerical, with and without a default), `selector_width`, selector `and`/`or`/`not`, functions
(`def` ... `return`), `for` loops (over atoms, and over s-ops building an s-op), `set s-op
example` and `set selector example`, selectors applied to inputs, and the library functions the
original preloads. rasp_gen_exprs draws the expressions, this module the statements.
rasp_gen_layout spreads some defs and fors over several lines (with comment and blank lines),
adds trailing comments, recursion and closures; rasp_gen_more adds the REPL's `show example`,
`set example` of an expression, several values bound to one name, dict comprehensions of key
expressions, `tokens` rebound, lone comments and `load`; rasp_gen_extra the corners (s-ops indexed,
functions as values, `%`, the builtins' errors, inf and nan), rasp_gen_user programs as users write
them (paper-style functions, loops in bodies, nested defs and comprehensions, printed floats),
rasp_gen_scope the names the original reads where a statement runs (a local `length` under a
negative index, the library's names as locals, `load` in a body), rasp_gen_files loads of the
program's own files (files that load files), rasp_gen_lines top-level statements typed over
several lines and lines the original's parser rejects, rasp_gen_names the names the original's
assignment gives s-ops (shown in lists and dicts) and errors of functions called from loops,
rasp_gen_prec operators of every precedence level unparenthesized and statements respaced,
rasp_gen_types s-ops whose positions hold values of different types, rasp_gen_iter loops,
comprehensions and assignments unpacking every kind of value.
Most expressions are well typed; a few are not on purpose, so that errors are compared too.

The generator avoids what docs/language.md (section 7) lists as deliberate differences: `!=`
outside `select`, indexing a parenthesized value, several statements on a line, `and`/`or`/`not`/
`if` on an applied s-op, `out` as a name, an empty example. A program's names all start with its
prefix, so that many programs can share one REPL session without reading each other's names.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tests.compat.rasp_gen_exprs import (
    ANY_TOKENS,
    ARITH,
    ATOMS,
    BSOP,
    DICT,
    INT_TOKENS,
    LIST,
    NSOP,
    NUM,
    SEL,
    SELECT_OPS,
    SOPS,
    SSOP,
    STR,
    ExprGen,
)
from tests.compat.rasp_gen_extra import extra
from tests.compat.rasp_gen_files import loaded_files
from tests.compat.rasp_gen_iter import iterated
from tests.compat.rasp_gen_layout import laid_out
from tests.compat.rasp_gen_lines import lines
from tests.compat.rasp_gen_more import more
from tests.compat.rasp_gen_names import named
from tests.compat.rasp_gen_odd import ODD, ODD_INPUTS, ODD_SOPS, ODD_STATEMENTS
from tests.compat.rasp_gen_prec import precedence
from tests.compat.rasp_gen_scope import scoped
from tests.compat.rasp_gen_types import typed
from tests.compat.rasp_gen_user import user

_STRING_EXAMPLES = ('"hello"', '"abcab"', '"aab"', '"z"', '"baaac"', '["the", "cat", "a"]')
_INT_EXAMPLES = ("[3, 1, 2]", "[0, 0, 5, 1]", "[2]", "[1, 2, 3, 4]", "[-2, 7, 0]", "[0]")
_OTHER_EXAMPLES = ("[1.5, 2, 0.25]", "[True, False, True]", '[1, "a", 2.5]', "[2.0, 3.0]")


@dataclass(frozen=True)
class Program:
    """One generated program: its example, its statements, and inputs to apply its s-ops to."""

    example: str
    statements: tuple[str, ...]


class _Gen(ExprGen):
    def __init__(
        self,
        rng: random.Random,
        prefix: str,
        layout: random.Random,
        extra: random.Random,
        corners: random.Random,
        users: random.Random,
        scopes: random.Random,
        files: random.Random,
        typed: random.Random,
        labels: random.Random,
        precs: random.Random,
        types: random.Random,
        iters: random.Random,
    ) -> None:
        super().__init__(rng, prefix, layout)
        self.extra = (
            extra  # rasp_gen_more's own stream: the statements drawn from rng stay the same
        )
        self.corners = corners  # rasp_gen_extra's own stream
        self.users = users  # rasp_gen_user's own stream
        self.scopes = scopes  # rasp_gen_scope's own stream
        self.files = files  # rasp_gen_files' own stream
        self.typed = typed  # rasp_gen_lines' own stream
        self.labels = labels  # rasp_gen_names' own stream
        self.precs = precs  # rasp_gen_prec's own stream
        self.types = types  # rasp_gen_types' own stream
        self.iters = iters  # rasp_gen_iter's own stream

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
            body.append(f"return select({side}, {self.nsop(1)}, {self.pick(SELECT_OPS)});")
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
            body = f"{self.paren(self.nsop(1))} {self.pick(ARITH)} {k}"
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
        self.tokens = INT_TOKENS if self.int_example else ANY_TOKENS
        if self.chance(0.1):
            example = self.pick(_OTHER_EXAMPLES)
            self.tokens = ANY_TOKENS
        statements: list[str] = []
        for _ in range(length):
            statements += self.statement()
        statements = laid_out(statements, self.prefix, self.layout)
        statements = more(statements, self.prefix, self.int_example, self.extra)
        statements = extra(statements, self.prefix, self.int_example, self.corners)
        statements = user(statements, self.prefix, self.int_example, self.users)
        statements = scoped(statements, self.prefix, self.int_example, self.scopes)
        statements = loaded_files(statements, self.prefix, self.int_example, self.files)
        statements = lines(statements, self.prefix, self.typed)
        # (after rasp_gen_lines, so that the lines it types for a seed stay the same)
        statements = named(statements, self.prefix, self.int_example, self.labels)
        statements = precedence(statements, self.prefix, self.int_example, self.precs)
        statements = typed(statements, self.prefix, self.int_example, self.types)
        statements = iterated(statements, self.prefix, self.iters)
        for kind in (*SOPS, SEL):
            for name in self.names.get(kind, [])[:2]:
                other = self.pick(_INT_EXAMPLES if self.int_example else _STRING_EXAMPLES)
                if self.chance(0.15):
                    other = self.pick(ODD_INPUTS)
                statements.append(f"{name}({other});")
        return Program(example, tuple(statements))


def generate(seed: int, count: int, length: int = 8) -> list[Program]:
    """`count` programs of about `length` statements each, the same ones for the same seed."""
    rng = random.Random(seed)
    return [
        _Gen(
            rng,
            f"p{i}_",
            random.Random(f"{seed}:{i}"),
            random.Random(f"{seed}:{i}:more"),
            random.Random(f"{seed}:{i}:extra"),
            random.Random(f"{seed}:{i}:user"),
            random.Random(f"{seed}:{i}:scope"),
            random.Random(f"{seed}:{i}:files"),
            random.Random(f"{seed}:{i}:lines"),
            random.Random(f"{seed}:{i}:names"),
            random.Random(f"{seed}:{i}:prec"),
            random.Random(f"{seed}:{i}:types"),
            random.Random(f"{seed}:{i}:iter"),
        ).program(length)
        for i in range(count)
    ]

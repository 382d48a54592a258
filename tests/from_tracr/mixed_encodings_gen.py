"""The programs of mixed_encodings_campaign.py: tracr programs (as texts) of selectors, widths,
categorical and numerical aggregates, maps of mixed-type values and tracr's library, drawn from a
seeded `random.Random` (`Gen(rng, vocab, max_len, extra).program()`), over the vocabularies of
VOCABS. Needs nothing but the standard library: the texts are run elsewhere (tracr_compare.py).
"""

from __future__ import annotations

import random

VOCABS = [
    [0, 1, 2],
    ["a", "b", "c"],
    [1, "a", True],  # 1 == True: two tokens Python calls equal
    [2, "x", False],
    [0.5, 3, "b"],
    [True, False, "t"],
    [-1, 0, 1],
    [0.0, -1.0, 2.5],  # float zeros of both signs (-x)
]

# functions of one value of any type (some raise on some types: tracr raises, so must the graph)
MAPS1 = [
    "lambda x: x == {c}",
    "lambda x: str(x)",
    "lambda x: type(x).__name__",
    "lambda x: x if isinstance(x, int) else 0",
    "lambda x: isinstance(x, str)",
    "lambda x: x + 1",
    "lambda x: not x",
    "lambda x: None if x == {c} else x",
    "lambda x: len(str(x)) % 3",
    "lambda x: x * 2",
    "lambda x: 1 if x else 0",
    "lambda x: x > 0",
    "lambda x: (x, 1)",
    "lambda x: {c} if x is None else x",
    "lambda x: x is True",
    "lambda x: float(x) if isinstance(x, (int, float)) else -1.0",
    "lambda x: repr(x)",
    "lambda x: x",
    "lambda x: -x",
    "lambda x: x / 2",
]
MAPS2 = [
    "lambda x, y: x == y",
    "lambda x, y: str(x) + str(y)",
    "lambda x, y: (x, y)",
    "lambda x, y: x + y",
    "lambda x, y: x and y",
    "lambda x, y: x or y",
    "lambda x, y: x < y",
    "lambda x, y: x * y",
    "lambda x, y: x if x == y else None",
    "lambda x, y: type(x) is type(y)",
    "lambda x, y: x - y",
]
OPS = ["+", "-", "&", "|", "*"]
COMPARISONS = ["EQ", "LT", "LEQ", "GT", "GEQ", "NEQ", "TRUE", "FALSE"]
PREDICATES = [
    "lambda k, q: k == q",
    "lambda k, q: str(k) < str(q)",
    "lambda k, q: k is None",
    "lambda k, q: q == k + 1",
    "lambda k, q: k != q and k == {c}",
    "lambda k, q: type(k) is type(q)",
    "lambda k, q: bool(k) or q == {c}",
]
DEFAULTS = ["None", "None", "0", "'z'", "False", "1.5", "{c}"]


class Gen:
    def __init__(self, rng: random.Random, vocab: list, max_len: int, extra: bool = False) -> None:
        self.rng, self.vocab, self.max_len = rng, vocab, max_len
        # `--extra`: what tracr allows beyond the steps below (a seed without it keeps its program)
        self.extra = extra
        self.lines: list[str] = []
        self.sops = ["rasp.tokens", "rasp.indices", "rasp.tokens", "rasp.length"]
        self.sels: list[str] = []
        self.n = 0

    def const(self) -> str:
        r = self.rng.random()
        return repr(self.rng.choice(self.vocab)) if r < 0.7 else repr(self.rng.choice([0, 1, 2]))

    def fill(self, text: str) -> str:
        return text.replace("{c}", self.const())

    def sop(self) -> str:
        # recent s-ops more often, so programs are deep rather than wide
        if self.rng.random() < 0.6 and len(self.sops) > 4:
            return self.sops[-1 - self.rng.randrange(min(3, len(self.sops) - 4))]
        return self.rng.choice(self.sops)

    def annotate(self, expr: str) -> str:
        r = self.rng.random()
        if r < 0.3:
            return f"rasp.numerical({expr})"
        if r < 0.5:
            return f"rasp.categorical({expr})"
        return expr

    def new(self, expr: str, kind: str = "sop") -> str:
        name = f"{'s' if kind == 'sop' else 'q'}{self.n}"
        self.n += 1
        self.lines.append(f"{name} = {expr}")
        (self.sops if kind == "sop" else self.sels).append(name)
        return name

    def select(self) -> str:
        rng = self.rng
        if self.extra and rng.random() < 0.1:
            rows = [[rng.random() < 0.4 for _ in range(self.max_len)] for _ in range(self.max_len)]
            return self.new(f"rasp.ConstantSelector({rows!r}, check_length=False)", "sel")
        r = rng.random()
        if r < 0.25 and self.sels:
            a = rng.choice(self.sels)
            b = self.select_leaf()
            op = rng.choice(["&", "|", "&~", "~", "And", "Or", "Not"])
            if op == "~":
                return self.new(f"~{a}", "sel")
            if op == "&~":
                return self.new(f"{a} & ~{b}", "sel")
            if op == "Not":
                return self.new(f"rasp.SelectorNot({a})", "sel")
            if op in ("And", "Or"):
                return self.new(f"rasp.Selector{op}({a}, {b})", "sel")
            return self.new(f"{a} {op} {b}", "sel")
        if r < 0.35 and self.sels:
            return rng.choice(self.sels)
        return self.new(self.select_leaf(), "sel")

    def select_leaf(self) -> str:
        rng = self.rng
        keys, queries = self.sop(), self.sop()
        if rng.random() < 0.1:
            keys = f"rasp.Full({self.const()})"
        elif rng.random() < 0.1:
            queries = f"rasp.Full({self.const()})"
        if rng.random() < 0.65:
            pred = f"rasp.Comparison.{rng.choice(COMPARISONS)}"
        else:
            pred = self.fill(rng.choice(PREDICATES))
        return f"rasp.Select({keys}, {queries}, {pred})"

    def extra_step(self) -> str:
        """LinearSequenceMap, a Map left unsimplified, tracr's Dyck programs."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:
            fst, snd = rng.choice([1, -1, 2, 0.5, 0]), rng.choice([1, -1, 3, 0.25])
            linear = f"rasp.LinearSequenceMap({self.sop()}, {self.sop()}, {fst}, {snd})"
            return self.annotate(linear)
        if r < 0.8:
            return f"rasp.Map({self.fill(rng.choice(MAPS1))}, {self.sop()}, simplify=False)"
        if r < 0.9:
            return "lib.make_shuffle_dyck2()"
        tokens = [x for x in self.vocab if isinstance(x, str)] + ["a", "b"]
        return f"lib.make_shuffle_dyck([{tokens[0] + tokens[1]!r}])"

    def step(self) -> str:
        rng = self.rng
        if self.extra and rng.random() < 0.2:
            return self.new(self.extra_step())
        r = rng.random()
        if r < 0.17:
            return self.new(
                self.annotate(f"rasp.Map({self.fill(rng.choice(MAPS1))}, {self.sop()})")
            )
        if r < 0.3:
            a, b = self.sop(), self.sop()
            while b == a and len(set(self.sops)) > 1:
                b = self.sop() if rng.random() < 0.5 else rng.choice(self.sops)
            return self.new(self.annotate(f"rasp.SequenceMap({rng.choice(MAPS2)}, {a}, {b})"))
        if r < 0.36:
            a = self.sop()
            op = rng.choice(OPS + ["==", "<", "~", "rop"])
            if op == "~":
                return self.new(f"~{a}")
            if op in ("==", "<"):
                return self.new(f"{a} {op} {self.const()}")
            if op == "rop":
                return self.new(f"{self.const()} {rng.choice(OPS)} {a}")
            b = self.sop() if rng.random() < 0.6 else self.const()
            return self.new(f"{a} {op} {b}")
        if r < 0.58:
            sel = self.select()
            d = self.fill(rng.choice(DEFAULTS))
            return self.new(self.annotate(f"rasp.Aggregate({sel}, {self.sop()}, default={d})"))
        if r < 0.68:
            return self.new(self.annotate(f"rasp.SelectorWidth({self.select()})"))
        if r < 0.72:
            if rng.random() < 0.5:
                return self.new(f"rasp.Full({self.const()})")
            values = [self.const() for _ in range(self.max_len)]
            # tracr's ConstantSOp must have the input's length: a map of it with tokens cuts it
            c = f"rasp.ConstantSOp([{', '.join(values)}], check_length=False)"
            return self.new(f"rasp.SequenceMap(lambda x, y: y, rasp.tokens, {c})")
        return self.new(self.lib())

    def lib(self) -> str:
        rng = self.rng
        v = self.vocab
        c = rng.randrange(13)
        s = self.sop()
        if c == 0:
            return "lib.make_length()"
        if c == 1:
            return "lib.make_hist()"
        if c == 2:
            return f"lib.make_reverse({s})"
        if c == 3:
            return f"lib.shift_by({rng.choice([1, 2])}, {s})"
        if c == 4:
            pat = [rng.choice(v) for _ in range(rng.choice([1, 2]))]
            return f"lib.detect_pattern({s}, {pat!r})"
        if c == 5:
            return f"lib.make_count({s}, {rng.choice(v)!r})"
        if c == 6:
            return f"lib.make_sort_unique({s}, {self.sop()})"
        if c == 7:
            return f"lib.make_frac_prevs(rasp.numerical({s} == {rng.choice(v)!r}))"
        if c == 8:
            return f"lib.make_count_less_freq({rng.choice([1, 2])})"
        if c == 9:
            toks = [x for x in v if isinstance(x, str)] or ["a"]
            return f"lib.make_pair_balance({s}, {toks[0]!r}, {v[0]!r})"
        if c == 10:
            return f"lib.make_sort({s}, rasp.indices, max_seq_len={self.max_len}, min_key=1)"
        if c == 11:
            return f"lib.make_nary_sequencemap(lambda x, y, z: (x, z), {s}, {self.sop()}, {self.sop()})"
        return f"lib.make_sort_freq({self.max_len})"

    def program(self) -> str:
        for _ in range(self.rng.choice([1, 2, 2, 3, 3, 4])):
            self.step()
        self.lines.append(f"program = {self.sops[-1]}")
        return "\n".join(self.lines)

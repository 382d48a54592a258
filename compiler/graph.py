"""The compiler's IR: an immutable, typed graph built from a `rasp.sops` root.

Every node of the lazy s-op graph becomes one `IRNode` (identity is kept: two `select(...)` calls are two
nodes). Nodes are stored in topological order (inputs first) and numbered `0..n-1`; unnamed nodes get the
deterministic name `_<op>_<n>`, `_<def>_<op>_<n>` where a `def`'s call made them (numbered within
this compilation, never from a process-wide counter), so residual labels and golden files do not
depend on what else the process has built. A node a `def`'s call made or named also records where
(`IRNode.place`), which messages add to its name (`IRNode.shown`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from enum import Enum
from functools import cached_property
from typing import Any

from rasp import sops, walks
from rasp.call_names import about, local_name, made_in, with_place
from rasp.errors import CompileError, Diagnostic, Span
from rasp.named_text import SEPARATORS
from rasp.nodes import is_one_term
from rasp.written_text import written

# Whether a def's unnamed s-op is named after the def (`_f_aggregate_1`): off only while a model
# file compiled before that (2026-12-06: `_aggregate_1`) is rebuilt to compare its reach
_DEF_STEMS: ContextVar[bool] = ContextVar("def_stems", default=True)


@contextmanager
def names_before_def_stems() -> Iterator[None]:
    """Build graphs (in this context) whose generated names ignore defs, as before 2026-12-06."""
    token = _DEF_STEMS.set(False)
    try:
        yield
    finally:
        _DEF_STEMS.reset(token)


class Op(Enum):
    """The closed set of IR operations."""

    TOKENS = "tokens"  # the input, converted per `kind`
    INDICES = "indices"  # 0..n-1
    LENGTH = "length"  # n at every position
    CONST = "const"  # an atom at every position
    MAP = "map"  # fn(*inputs) per position
    SELECT = "select"  # key OP query, inputs = (keys, queries)
    AND = "and"
    OR = "or"
    NOT = "not"
    AGGREGATE = "aggregate"  # inputs = (selector, sop)
    SELECTOR_WIDTH = "selector_width"  # inputs = (selector,)

    @property
    def is_selector(self) -> bool:
        return self in (Op.SELECT, Op.AND, Op.OR, Op.NOT)


@dataclass(frozen=True)
class IRNode:
    """One operation. `inputs` are indices into `Graph.nodes` (always smaller than `index`)."""

    index: int
    op: Op
    name: str
    inputs: tuple[int, ...]
    span: Span | None
    text: str  # what it computes, for people (`length - indices - 1`)
    fn: Callable[..., Any] | None = None  # MAP only: the interpreter's own function
    kind: sops.TokenKind | None = None  # TOKENS only
    comparison: sops.Comparison | None = None  # SELECT only
    value: Any = None  # CONST: the atom; AGGREGATE: the default
    named: bool = False  # True when `name` is a program variable
    # Made or named by a `def`'s call: where (`in f, called at p.rasp:12:5`), and the name the
    # def's body gave it (a second call's `y` is the residual's `y_2`): see `shown`.
    place: str | None = None
    local: str | None = None

    @property
    def shown(self) -> str:
        """The node as a message names it: its residual name, and for one a `def`'s call made
        or named, where (`y (in f, called at p.rasp:12:5)`, `y_2 (y in f, called at ...)`)."""
        return with_place(self.name, self.local, self.place)

    @property
    def about(self) -> str | None:
        """What `shown` adds in its parenthesis (`y in f, called at ...`); None where no `def`'s
        call named or made the node (rasp.named_text explains labels in messages by it)."""
        return about(self.name, self.local, self.place)


class _Reads(Enum):
    """What an s-op reads through maps, besides constants (`Graph.reads_position_only`)."""

    NOTHING = "nothing"  # a constant, or a map of constants alone
    POSITION = "position"  # `indices`, or a map of it (and constants) alone
    MORE = "more"  # some other s-op


@dataclass(frozen=True)
class Graph:
    nodes: tuple[IRNode, ...]
    root: int

    def __getitem__(self, index: int) -> IRNode:
        return self.nodes[index]

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def output(self) -> IRNode:
        return self.nodes[self.root]

    def reads_position_only(self, index: int) -> bool:
        """Whether node `index` is a map that reads `indices` (and constants) alone, through
        maps: one value per position (`indices < 3`), which the positional embedding can write
        (the planners ask it as `PlanContext.is_positional`). A map of constants alone reads no
        position and is not one (the planners' graph has it folded to a constant)."""
        return self.nodes[index].op is Op.MAP and self._reads[index] is _Reads.POSITION

    @cached_property
    def _reads(self) -> tuple[_Reads, ...]:
        # one pass in node order (inputs first), each node read once: a walk from each node went
        # down every path of maps reading one another several times (a def's recursion, `x - n
        # if x < n else x`: 90% of defs seed 2172227's compile at N = 6), or recursed (a chain of
        # thousands of maps)
        reads: list[_Reads] = []
        for node in self.nodes:
            if node.op is Op.MAP:
                seen = {reads[i] for i in node.inputs}  # a map reads what its inputs read
                if _Reads.MORE in seen:
                    reads.append(_Reads.MORE)
                else:
                    reads.append(_Reads.POSITION if _Reads.POSITION in seen else _Reads.NOTHING)
            elif node.op is Op.CONST:
                reads.append(_Reads.NOTHING)
            else:
                reads.append(_Reads.POSITION if node.op is Op.INDICES else _Reads.MORE)
        return tuple(reads)

    def first_visits(self, index: int, expand: Callable[[int], bool]) -> list[int]:
        """Node `index` and the nodes it reads through the inputs of those `expand` holds for,
        each after its inputs, in the order a depth-first walk of the inputs (left to right)
        first finishes them: iterative, as a chain of maps may be thousands long."""
        nodes = self.nodes
        return list(walks.first_visits(index, lambda i: nodes[i].inputs if expand(i) else (), int))

    def read_by_maps(self) -> frozenset[int]:
        """The nodes some map reads (gated units and fused maps are decided on this)."""
        return frozenset(i for node in self.nodes if node.op is Op.MAP for i in node.inputs)

    def read_from_output(self) -> set[int]:
        """The nodes the output reads, itself included, through every input (a folded constant
        reads nothing)."""
        seen = {self.root}
        stack = [self.root]
        while stack:
            for i in self.nodes[stack.pop()].inputs:
                if i not in seen:
                    seen.add(i)
                    stack.append(i)
        return seen

    def consumers(self) -> dict[int, tuple[int, ...]]:
        """For each node, the nodes that read it (in topological order)."""
        out: dict[int, list[int]] = {n.index: [] for n in self.nodes}
        for node in self.nodes:
            for i in dict.fromkeys(node.inputs):
                out[i].append(node.index)
        return {k: tuple(v) for k, v in out.items()}


_SIMPLE: dict[type, Op] = {
    sops.TokensSOp: Op.TOKENS,
    sops.IndicesSOp: Op.INDICES,
    sops.LengthSOp: Op.LENGTH,
    sops.ConstSOp: Op.CONST,
    sops.MapSOp: Op.MAP,
    sops.Select: Op.SELECT,
    sops.SelectAnd: Op.AND,
    sops.SelectOr: Op.OR,
    sops.SelectNot: Op.NOT,
    sops.AggregateSOp: Op.AGGREGATE,
    sops.SelectorWidthSOp: Op.SELECTOR_WIDTH,
}


def build_graph(root: sops.Node) -> Graph:
    """The IR of everything `root` depends on. Raises CompileError when `root` is not an s-op."""
    return graph_and_index(root)[0]


def graph_and_index(root: sops.Node) -> tuple[Graph, dict[int, int]]:
    """`build_graph`, and each s-op's node index by s-op id. Several s-op objects may share one
    node (every `length` object is one node), so walk positions are not node indices."""
    if not isinstance(root, sops.SOp):
        what = "a selector" if isinstance(root, sops.Selector) else type(root).__name__
        raise CompileError(
            [
                Diagnostic(
                    f"only an s-op can be compiled, got {what}",
                    getattr(root, "span", None),
                    "compile an s-op, e.g. aggregate(selector, values) or selector_width(selector)",
                )
            ]
        )
    index_of: dict[int, int] = {}
    nodes: list[IRNode] = []
    counters: dict[str, int] = {}
    used: set[str] = {"one", "bos", "pad", "tokens", "indices"}
    suffixes: dict[str, int] = {}  # the last suffix each base name took (`used` only grows)
    # the names a label's `.`, `~` or `^` could extend into one the compiler derives
    stems = {*used, "length", *(n.name.replace(":", "_") for n in sops.walk(root) if n.name)}
    leaves: dict[tuple[Op, Any], int] = {}
    sources: list[sops.Node] = []  # the s-op of each node, in node order
    for node in sops.walk(root):
        op = _SIMPLE.get(type(node))
        if isinstance(node, sops.PredicateSelect) or getattr(node, "bools_as_numbers", False):
            raise CompileError(
                [
                    Diagnostic(
                        "a select with a Python predicate, or tracr's mean, is compiled for one "
                        "vocabulary: compile it with compiler.compile_sop, which resolves it first",
                        node.span,
                    )
                ]
            )
        if op is None:
            raise TypeError(f"unknown s-op node {node!r}")  # a bug in rasp.sops, not a user error
        if isinstance(node, sops.MapSOp) and not node.inputs:
            # (only a hand-built node has none: the interpreter calls fn() at every position, but
            # the value analysis and the MLPs read a map's inputs)
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.label}' is a map of no s-ops, which the compiler cannot build",
                        node.span,
                        "map an s-op the value depends on, e.g. MapSOp(fn=lambda n: ..., "
                        "inputs=(LengthSOp(),)), or use a ConstSOp",
                    )
                ]
            )
        inputs = tuple(index_of[c.id] for c in node.children())
        leaf = (op, getattr(node, "kind", None)) if op in _LEAVES else None
        if leaf in leaves:
            # Two `tokens` objects are one s-op: one node, so that nothing derived from them (a
            # joint reading named after its sources) is built twice onto the same dimensions.
            index_of[node.id] = leaves[leaf]
            continue
        if node.name:
            name, named = _own_name(node.name, stems), True
        else:
            # a def's unnamed s-op says which def made it (`_has_focus_aggregate_1`)
            by_def = node.calls and _DEF_STEMS.get()
            stem = f"{node.calls[0][0].lstrip('_')}_{op.value}" if by_def else op.value
            counters[stem] = counters.get(stem, 0) + 1
            name, named = f"_{stem}_{counters[stem]}", False
        if not node.name and op in (Op.TOKENS, Op.INDICES, Op.LENGTH):
            name = op.value
        # Residual labels must be unique: a def inlined twice binds the same local name twice. Input
        # s-ops own no dimensions of their own (they are views of `tokens:*` / `indices:*`).
        base, k = name, 1
        if op not in (Op.TOKENS, Op.INDICES):
            # (from the suffix `base` took last: a loop's thousand `x` counted from 2 each time)
            k = suffixes.get(base, 1)
            name = base if k == 1 else f"{base}_{k}"
            while name in used:
                k += 1
                name = f"{base}_{k}"
            suffixes[base] = k
        used.add(name)
        ir = IRNode(
            index=len(nodes),
            op=op,
            name=name,
            inputs=inputs,
            span=node.span,
            text=node.note or _describe(node, op, [nodes[i] for i in inputs]),
            fn=getattr(node, "fn", None) if op is Op.MAP else None,
            kind=getattr(node, "kind", None) if op is Op.TOKENS else None,
            comparison=getattr(node, "comparison", None) if op is Op.SELECT else None,
            value=_payload(node),
            named=named,
            place=made_in(node),
            local=local_name(node),
        )
        index_of[node.id] = ir.index
        if leaf is not None:
            leaves[leaf] = ir.index
        nodes.append(ir)
        sources.append(node)
    return Graph(_distinct_texts(nodes, sources), index_of[root.id]), index_of


def _own_name(label: str, stems: set[str]) -> str:
    """A label as a residual name: `:` as `_` (labels are `name:value`: `sh:ift` as `sh_ift`),
    and `.`, `~` and `^` too where the label would extend another s-op's name, a built-in's or a
    generated one (`_map_3`) into one the compiler derives (`x.frac`, `indices^2`); kept
    elsewhere (`re.v`), so that a file compiled before still rebuilds the same reach."""
    name = label.replace(":", "_")
    stem = SEPARATORS.split(name, maxsplit=1)[0]
    if stem != name and (stem in stems or stem.startswith("_")):
        return SEPARATORS.sub("_", name)
    return name


def _distinct_texts(nodes: list[IRNode], sources: list[sops.Node]) -> tuple[IRNode, ...]:
    """Nodes with the same source span as one of their inputs (or an input of theirs) described
    by their name (a program's own) or by what they compute instead.

    Every node a Python function builds (a tracr library call such as `make_pair_balance(...)`)
    has the span of that one call: as a description it would name the s-op and the s-ops it is
    computed from alike. (Two equal expressions in a program, or a `def` inlined twice, keep the
    text they share: there it says what each computes.)"""
    shared = set()
    for node in nodes:
        for i in node.inputs:
            if node.span is not None and nodes[i].span == node.span:
                shared.update((node.index, i))

    def distinct(node: IRNode, source: sops.Node) -> IRNode:
        if node.index not in shared or _span_text(source) != node.text:
            return node
        if node.named:
            return replace(node, text=node.name)
        inputs = [nodes[i] for i in node.inputs]
        return replace(node, text=_elided(_structure(source, node.op, inputs, own_text=False)))

    return tuple(distinct(n, s) for n, s in zip(nodes, sources, strict=True))


_LEAVES = (Op.TOKENS, Op.INDICES, Op.LENGTH)


def _payload(node: sops.Node) -> Any:
    if isinstance(node, sops.ConstSOp):
        return node.value
    if isinstance(node, sops.AggregateSOp):
        return node.default
    return None


def _describe(node: sops.Node, op: Op, inputs: list[IRNode]) -> str:
    # (a text rebuilt from its inputs is cut as a source text is: a program built in Python, the
    # compiler fuzz's, quoted 130 characters of it in one message)
    return _span_text(node) or _elided(_structure(node, op, inputs))


TEXT_WIDTH = 80  # a longer source text is shown as its start and end


def _span_text(node: sops.Node) -> str | None:
    """The node's source text on one line, its middle elided past TEXT_WIDTH characters: still
    the program's words, where a description by input names would quote generated ones
    (`aggregate(_or_1, _map_4)` for a long inline selector)."""
    if node.span is not None:
        return _elided(node.span.shown_text()) or None
    return None


def _elided(text: str) -> str:
    """`text`, its middle elided past TEXT_WIDTH characters (cut at spaces where there are
    some), never inside a name."""
    if len(text) <= TEXT_WIDTH:
        return text
    head, start = text[: TEXT_WIDTH - 25], len(text) - 20
    head = head[: head.rfind(" ")] if head.rfind(" ") > 20 else head
    tail = text[start:]
    if 0 <= tail.find(" ") < 10:
        tail = tail[tail.find(" ") + 1 :]
    else:  # never from inside a name: `... lect(indices, 0, >))` read as a word `lect`
        back = start
        while back > start - 15 and _word(text[back - 1]):
            back -= 1
        if _word(text[back - 1]):  # a long name: from the character after it instead
            while start < len(text) and _word(text[start]):
                start += 1
        tail = text[back if not _word(text[back - 1]) else start :]
    return f"{head} ... {tail}"


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _input_text(node: IRNode, source: sops.Node) -> str:
    """An input as the text of what reads it names it: its name where the program gave it one
    (or a built-in's), else its program text where short (rasp.written_text), never a generated
    name (`rank(_map_3)`) that no block of the model may carry to explain it."""
    if node.named or node.op in _LEAVES:
        return node.name
    text = written(source)
    return node.name if len(text) > _INPUT_WIDTH or _GENERATED.search(text) else text


def _operand(text: str) -> str:
    """An operand of `and`, `or`, `not`, bracketed where it is more than a name or a call."""
    return text if is_one_term(text) else f"({text})"


_INPUT_WIDTH = TEXT_WIDTH  # a longer input text is named by its generated name
# a residual name the compiler made (`_map_15`), as compiler.map_failures finds them
_GENERATED = re.compile(r"(?<![\w.])_[a-z][a-z0-9_]*_\d+\b")


def _structure(node: sops.Node, op: Op, inputs: list[IRNode], own_text: bool = True) -> str:
    """What the node computes, from its inputs' names (`aggregate(select(indices, 0, ==),
    opens)`); a map is called by its own text, or `map` where that is the shared source text
    (`own_text=False`)."""
    names = [_input_text(i, c) for i, c in zip(inputs, node.children(), strict=True)]
    match op:
        case Op.TOKENS:
            return f"tokens_{node.kind.value}"  # type: ignore[attr-defined]
        case Op.CONST:
            return repr(node.value)  # type: ignore[attr-defined]
        case Op.MAP:
            fn = node.text if own_text else "map"  # type: ignore[attr-defined]
            return f"{fn}({', '.join(names)})"
        case Op.SELECT:
            return f"select({names[0]}, {names[1]}, {node.comparison.value})"  # type: ignore[attr-defined]
        case Op.AND | Op.OR:
            return f"{_operand(names[0])} {op.value} {_operand(names[1])}"
        case Op.NOT:
            return f"not {_operand(names[0])}"
        case Op.AGGREGATE:
            return f"aggregate({names[0]}, {names[1]})"
        case Op.SELECTOR_WIDTH:
            return f"selector_width({names[0]})"
    return op.value

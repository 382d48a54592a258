"""Value-set inference: every value each node can take, for inputs over `vocab` of length 1..N.

Sets are exact or over-approximations (never under): tokens are the conversions of the vocabulary,
indices 0..N-1, length 1..N, a map is its function over the product of its inputs' sets (a combination
where the function raises is dropped: the interpreter errors there, so the promise does not cover it),
an aggregate is its values, its default and, when several keys can be selected, every mean the
interpreter can compute; selector_width is 0..N.

Relational refinement: a node that depends only on indices, length and constants gets its value at
every (index i, length n) with i < n, so `length - indices - 1` has the values 0..N-1, not -N..N.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compiler.blocks import Atom, value_key
from compiler.graph import Graph, IRNode, Op
from rasp import sops
from rasp.errors import CompileError, Diagnostic, RaspError

MAX_MAP_COMBINATIONS = 1_000_000  # input combinations a map's table may enumerate
MAX_VALUES = 100_000  # values one s-op may take (means included)

# Exceptions the interpreter turns into a runtime error for a map (see `rasp.sops.Evaluator._map`).
_MAP_ERRORS = (ArithmeticError, TypeError, ValueError, KeyError, IndexError, RaspError)

Positional = Mapping[tuple[int, int], Atom]  # (index i, length n) -> value, for every i < n <= N


@dataclass(frozen=True)
class ValueSets:
    """Per node (by `IRNode.index`): its possible values, sorted; positional tables where known."""

    max_len: int
    values: tuple[tuple[Atom, ...], ...]
    positional: tuple[Positional | None, ...]
    at_most_one: tuple[bool, ...]  # selectors: provably selects <= 1 key for every query

    def of(self, node: IRNode) -> tuple[Atom, ...]:
        return self.values[node.index]


def sort_values(values: Any) -> tuple[Atom, ...]:
    """Distinct values (1, 1.0 and True kept apart) in a deterministic order."""
    unique = {value_key(v): v for v in values}
    return tuple(sorted(unique.values(), key=_order))


def _order(v: Atom) -> tuple[int, Any, str]:
    if isinstance(v, bool):
        return (0, int(v), "bool")
    if isinstance(v, (int, float)):
        return (1, v, type(v).__name__)
    return (2, str(v), type(v).__name__)


def is_number(v: Atom) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def infer_values(graph: Graph, vocab: Sequence[Atom], max_len: int) -> ValueSets:
    """Value sets of every node; one CompileError listing every node that cannot be analysed."""
    n_max = max_len
    pairs = [(i, n) for n in range(1, n_max + 1) for i in range(n)]
    values: list[tuple[Atom, ...]] = []
    positional: list[Positional | None] = []
    at_most_one: list[bool] = []
    problems: list[Diagnostic] = []
    for node in graph.nodes:
        table: Positional | None = None
        vals: tuple[Atom, ...] = ()
        single = False
        match node.op:
            case Op.TOKENS:
                vals = _token_values(node, vocab, problems)
            case Op.INDICES:
                table = {(i, n): i for i, n in pairs}
            case Op.LENGTH:
                table = {(i, n): n for i, n in pairs}
            case Op.CONST:
                table = {p: node.value for p in pairs}
            case Op.MAP:
                table, vals = _map_values(node, positional, values, pairs, problems)
            case Op.AND:
                single = any(at_most_one[i] for i in node.inputs)
            case Op.SELECT:
                single = _selects_at_most_one(node, positional)
            case Op.AGGREGATE:
                vals = _aggregate_values(node, values, at_most_one, n_max, problems)
            case Op.SELECTOR_WIDTH:
                vals = tuple(range(n_max + 1))
        if table is not None:
            vals = sort_values(table.values())
        if not node.op.is_selector and not vals and not _already_reported(node, problems):
            problems.append(
                Diagnostic(
                    f"'{node.text}' fails on every input of length 1..{n_max}",
                    node.span,
                    "the interpreter raises an error here for every input, so there is nothing to compile",
                )
            )
        values.append(vals)
        positional.append(table)
        at_most_one.append(single)
    if problems:
        raise CompileError(problems)
    return ValueSets(max_len, tuple(values), tuple(positional), tuple(at_most_one))


def _already_reported(node: IRNode, problems: list[Diagnostic]) -> bool:
    return any(p.span is node.span and node.span is not None for p in problems)


def _token_values(node: IRNode, vocab: Sequence[Atom], problems: list[Diagnostic]) -> tuple[Atom, ...]:
    assert node.kind is not None
    convert = sops._TOKEN_CONVERT[node.kind]
    out = []
    for raw in vocab:
        try:
            out.append(convert(raw))
        except (TypeError, ValueError):
            problems.append(
                Diagnostic(
                    f"the vocabulary token {raw!r} cannot be read as tokens_{node.kind.value}",
                    node.span,
                    f"compile with a vocabulary whose every token converts with {node.kind.value}()",
                )
            )
    return sort_values(out)


def _map_values(
    node: IRNode,
    positional: list[Positional | None],
    values: list[tuple[Atom, ...]],
    pairs: list[tuple[int, int]],
    problems: list[Diagnostic],
) -> tuple[Positional | None, tuple[Atom, ...]]:
    assert node.fn is not None
    fn = node.fn
    if all(positional[i] is not None for i in node.inputs):
        table: dict[tuple[int, int], Atom] = {}
        for p in pairs:
            args = [positional[i][p] for i in node.inputs]  # type: ignore[index]
            ok, out = apply_map(fn, args)
            if ok:
                table[p] = out
        return table, ()
    size = 1
    for combo_set in input_combinations_sizes(node, positional, values):
        size *= combo_set
    if size > MAX_MAP_COMBINATIONS:
        problems.append(
            Diagnostic(
                f"'{node.text}' would need a table of {size} input combinations "
                f"(limit {MAX_MAP_COMBINATIONS})",
                node.span,
                "reduce the vocabulary or max length, or split the expression into maps of fewer s-ops",
            )
        )
        return None, ()
    outs = []
    for args in input_combinations(node.inputs, positional, values):
        ok, out = apply_map(fn, args)
        if ok:
            outs.append(out)
    return None, sort_values(outs)


def input_combinations_sizes(
    node: IRNode, positional: Sequence[Positional | None], values: Sequence[tuple[Atom, ...]]
) -> list[int]:
    distinct = list(dict.fromkeys(node.inputs))
    pos = [i for i in distinct if positional[i] is not None]
    sizes = [len(values[i]) for i in distinct if positional[i] is None]
    if pos:
        sizes.append(len({tuple(value_key(positional[i][p]) for i in pos) for p in positional[pos[0]]}))  # type: ignore[index]
    return sizes


def input_combinations(
    inputs: Sequence[int], positional: Sequence[Positional | None], values: Sequence[tuple[Atom, ...]]
) -> list[tuple[Atom, ...]]:
    """Every combination of input values that can occur at one position (positional inputs jointly)."""
    distinct = list(dict.fromkeys(inputs))
    pos = [i for i in distinct if positional[i] is not None]
    free = [i for i in distinct if positional[i] is None]
    joint: list[tuple[Atom, ...]] = [()]
    if pos:
        seen: dict[tuple, tuple[Atom, ...]] = {}
        for p in positional[pos[0]]:  # type: ignore[union-attr]
            row = tuple(positional[i][p] for i in pos)  # type: ignore[index]
            seen.setdefault(tuple(value_key(v) for v in row), row)
        joint = list(seen.values())
    out = []
    for row in joint:
        for rest in itertools.product(*(values[i] for i in free)):
            env = dict(zip(pos, row)) | dict(zip(free, rest))
            out.append(tuple(env[i] for i in inputs))
    return out


def apply_map(fn: Any, args: Sequence[Atom]) -> tuple[bool, Atom]:
    """(True, fn(*args)) when the interpreter would accept it, else (False, None)."""
    try:
        out = fn(*args)
    except _MAP_ERRORS:
        return False, None
    if sops.type_of_value(out) is None:
        return False, None
    return True, out


def _selects_at_most_one(node: IRNode, positional: Sequence[Positional | None]) -> bool:
    """An EQ select whose keys differ at every position (e.g. `indices`) selects at most one key."""
    if node.comparison is not sops.Comparison.EQ:
        return False
    keys = positional[node.inputs[0]]
    if keys is None:
        return False
    by_length: dict[int, set] = {}
    for (i, n), v in keys.items():
        seen = by_length.setdefault(n, set())
        if value_key(v) in seen:
            return False
        seen.add(value_key(v))
    return True


def _aggregate_values(
    node: IRNode,
    values: list[tuple[Atom, ...]],
    at_most_one: list[bool],
    n_max: int,
    problems: list[Diagnostic],
) -> tuple[Atom, ...]:
    selector, sop = node.inputs
    vals = values[sop]
    base = [*vals, node.value]
    if at_most_one[selector] or n_max < 2 or not vals or not all(is_number(v) for v in vals):
        return sort_values(base)
    means = mean_values(vals, n_max)
    if means is None or len(means) > MAX_VALUES:
        problems.append(
            Diagnostic(
                f"the mean computed by '{node.text}' can take more than {MAX_VALUES} values",
                node.span,
                f"averaging {len(vals)} distinct numbers over up to {n_max} positions; "
                "reduce max length or the number of distinct values averaged",
            )
        )
        return sort_values(base)
    return sort_values([*base, *means])


def mean_values(vals: Sequence[Atom], n_max: int) -> set[float] | None:
    """Every mean of 2..n_max values drawn (with repetition) from `vals`, as the interpreter computes it."""
    nums = sorted({float(v) for v in vals})
    sums: set[float] = set(nums)  # sums of w values
    means: set[float] = set()
    for w in range(2, n_max + 1):
        sums = {s + v for s in sums for v in nums}
        if len(sums) > MAX_VALUES:
            return None
        means.update(s / w for s in sums)
        if len(means) > MAX_VALUES:
            return None
    return means

"""A tracr mean of bools gives one selected bool back as the bool; the resolved mean gives 0 or 1.

tracr's `Aggregate` over bools gives `True` where one key holding True is selected and a float where
several are (`sum / len`). `compiler.resolve` averages the bools as 0/1, so a single selected bool
comes out as the int 0 or 1: equal to the bool, but not to a function of it (`str(v)` is "1", not
"True"; `v is True` is False). A model reads 0, 0.0 and False alike, so the value itself cannot
carry the type; instead, each program function that reads such a mean (a tracr `Map`,
`SequenceMap` or `Select` predicate) is given the bool where the mean gives the int 0 or 1
(`BoolArgs`). The compiler then sees the function's results on the bools, and refuses, as for 1 and
1.0, a function that gives different results for False and 0.0 (the model cannot tell them apart).

A mean that can also give an int 0 or 1 of its own (its default, where nothing is selected, or an
int among the values, selected alone) is ambiguous there: no reading tells that int from the bool,
so a function that gives different results for the two is refused (`BoolMeans.check`), located at
the function.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from compiler.blocks import Atom, is_number
from compiler.rewrite import ValueFacts
from rasp import sops
from rasp.errors import CompileError, Diagnostic
from rasp.seqvalues import value_repr
from rasp.tracr.functions import LengthCheck, NoneCheck, TracrFn

# the nodes whose function may be given bools for the bool means they read
MapOrPredicate = TypeVar("MapOrPredicate", sops.MapSOp, sops.PredicateSelect)

# value combinations checked at most per function reading an ambiguous mean (beyond: refused,
# since an unchecked combination could be one the model gets wrong)
MAX_AMBIGUOUS_CHECKS = 100_000


def as_bool(value: Any) -> Any:
    """The bool a mean's 0 or 1 stands for (one selected bool); any other value unchanged."""
    return bool(value) if type(value) is int and value in (0, 1) else value


@dataclasses.dataclass(frozen=True)
class BoolArgs:
    """A program function (a map's, or a Select predicate `fn(key, query)`) whose arguments at
    `positions` are bool means: their ints 0 and 1 are the bools False and True, as tracr gives
    them."""

    fn: Callable[..., Any]
    positions: tuple[int, ...]

    def __call__(self, *args: Any) -> Any:
        return self.fn(*(as_bool(a) if i in self.positions else a for i, a in enumerate(args)))

    def structure(self) -> Any:
        """Equal for two readings of one function at the same positions (compiler.dedupe)."""
        inner = getattr(self.fn, "structure", None)
        return (
            "bool args",
            self.positions,
            inner() if callable(inner) else ("function", id(self.fn)),
        )


def _program_function(fn: Any) -> bool:
    """A function of the program (a tracr map's, or several composed), not one of the lowering's
    or the resolver's own (None checks, stand-ins), which read numbers as numbers."""
    if isinstance(fn, TracrFn):
        return fn.affine is None  # a·x + b·y is the same number, and type, for True and 1
    return isinstance(getattr(fn, "fn", None), TracrFn) and hasattr(fn, "parts")  # composed


@dataclasses.dataclass
class BoolMeans:
    """The nodes of a graph being resolved whose int 0 or 1 stands for a bool (by new node id, with
    the ints 0 or 1 it may also give as such: its default, a selected int), and the readers to
    check."""

    means: dict[int, frozenset[int]] = dataclasses.field(default_factory=dict)
    # (reader, its function, {position: the ints of their own it may read}): results must not
    # depend on whether such an int is read as the bool
    ambiguous: list[tuple[sops.Node, Any, dict[int, frozenset[int]]]] = dataclasses.field(
        default_factory=list
    )

    # copies (a sort's) that give one of equal numbers of two types (1 for 1.0: one token to the
    # copy), by new node id -> {value: the others it stands for}; and their functions' readers
    twins: dict[int, dict[Any, tuple[Any, ...]]] = dataclasses.field(default_factory=dict)
    # readers, with {argument position: the id of the node of twins it reads}
    twin_readers: list[tuple[sops.Node, dict[int, int]]] = dataclasses.field(default_factory=list)
    # nodes that pass such a copy's values on (another copy, a None check, an affine map), by new
    # node id -> (the node, or None for a copy of its one source; {position: source id}): a copy
    # of the sorted copy gives 1 where tracr gives 1.0 too, and its readers went unchecked
    # (str of it certified, "1" for "1.0")
    carriers: dict[int, tuple[sops.Node | None, dict[int, int]]] = dataclasses.field(
        default_factory=dict
    )

    def mark(self, node: sops.Node, defaults: frozenset[int]) -> sops.Node:
        self.means[node.id] = self.means.get(node.id, frozenset()) | defaults
        return node

    def reads(self, node: sops.Node) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(node.children()) if c.id in self.means)

    def copied(self, node: sops.Node) -> frozenset[int]:
        """The ints of their own (0 or 1) of the bool means `node` reads."""
        return frozenset().union(*(self.means.get(c.id, frozenset()) for c in node.children()))

    def rebuilt(self, node: sops.Node) -> sops.Node:
        """`node` (rebuilt on the resolved children) reading bool means as tracr gives them: a
        program function gets the bools; a None check or length check passes the mean on."""
        positions = self.reads(node)
        if not positions or not isinstance(node, sops.MapSOp):
            self._read_twins(node)
            return node
        if isinstance(node.fn, NoneCheck | LengthCheck):
            self._read_twins(node)
            return self.mark(node, self.copied(node))
        if not _program_function(node.fn):
            self._read_twins(node)
            return node
        return self._given_bools(node, positions)

    def _given_bools(self, node: MapOrPredicate, positions: tuple[int, ...]) -> MapOrPredicate:
        """`node` whose function reads the bool means at `positions` as bools (`BoolArgs`)."""
        new = dataclasses.replace(node, fn=BoolArgs(node.fn, positions))
        self._read_twins(node, new)
        self._check_ambiguous(new, node.fn, positions)
        return new

    def _read_twins(self, node: sops.Node, as_read: sops.Node | None = None) -> None:
        """Note `node` if it reads a copy of twins; `as_read`: `node` with the bools its function
        reads (a sort's copy of a mean of one selected False gives the int 0, which its reader
        takes as False: it must be checked against the twin 0.0 as it reads it)."""
        twins = {i: c.id for i, c in enumerate(node.children()) if self.holds_twins(c.id)}
        if not twins:
            return
        if isinstance(node, sops.PredicateSelect) or (
            isinstance(node, sops.MapSOp) and _program_function(node.fn)
        ):
            self.twin_readers.append((as_read or node, twins))
        elif isinstance(node, sops.MapSOp):  # a None check, an affine map: its results carry
            self.carriers[node.id] = (node, twins)
        elif isinstance(node, sops.AggregateSOp):
            self.carry(node, node.sop)

    def holds_twins(self, node_id: int) -> bool:
        """Whether node `node_id` may give one of equal numbers of two types for the other."""
        return node_id in self.twins or node_id in self.carriers

    def carry(self, result: sops.Node, values: sops.Node) -> None:
        """Note that `result` copies `values` (a tracr aggregate, however resolved): where those
        hold a sort's copy of twins, so does `result`."""
        if self.holds_twins(values.id) and result.id != values.id:
            self.carriers[result.id] = (None, {0: values.id})

    def predicate(self, node: sops.PredicateSelect) -> sops.PredicateSelect:
        positions = self.reads(node)
        if not positions:
            self._read_twins(node)
            return node
        return self._given_bools(node, positions)

    def _check_ambiguous(self, node: sops.Node, fn: Any, positions: tuple[int, ...]) -> None:
        children = node.children()
        unsure = {i: self.means[children[i].id] for i in positions if self.means[children[i].id]}
        if unsure:
            self.ambiguous.append((node, fn, unsure))

    def check(self, vocab: Sequence[Atom], max_len: int) -> None:
        """Refuse each function that reads an ambiguous mean and gives another result for an int 0
        or 1 of the mean's own (its default, a selected int) than for the bool."""
        problems = []
        for node, fn, unsure in self.ambiguous:
            inputs = list(node.children())
            facts = ValueFacts(inputs, vocab, max_len)
            sets = [facts.values(c) for c in inputs]
            narrowed = {
                i: [v for v in sets[i] if type(v) is int and v in ints]
                for i, ints in unsure.items()
            }
            combos = _combinations(sets, narrowed)
            if combos is None:
                problems.append(_too_many(node, "a tracr mean of bools"))
                continue
            positions = node.fn.positions  # type: ignore[attr-defined] (BoolArgs)
            sources = _sources(node, inputs)
            for args in _one_value_per_node(combos, sources):
                # the model reads every mean's 0 or 1 as the bool; tracr gives each ambiguous one
                # as its own int or as the bool, independently (a default beside a selected bool)
                as_read = tuple(as_bool(a) if i in positions else a for i, a in enumerate(args))
                own = {
                    i: (args[i],)
                    for i, ints in unsure.items()
                    if type(args[i]) is int and args[i] in ints
                }
                clash = _clash(fn, as_read, own, sources)
                if clash is not None:
                    one, other, mixed = clash
                    shown = ", ".join(value_repr(a) for a in mixed)
                    bools = ", ".join(value_repr(a) for a in as_read)
                    one, other = other, one
                    problems.append(
                        Diagnostic(
                            f"'{getattr(node, 'text', node.label)}' gives {value_repr(one)} for "
                            f"({shown}) but {value_repr(other)} for ({bools}): it reads a tracr "
                            "mean whose int 0 or 1 (its default, or a selected int) a model cannot "
                            "tell from the bool that one selected False or True gives",
                            node.span,
                            "give the aggregate a default that is not 0 or 1 (None, or a bool) and "
                            "values of one kind, or make the function give the same result for 0 "
                            "and False, 1 and True",
                        )
                    )
                    break
        problems.extend(self._twin_problems(vocab, max_len))
        if problems:
            raise CompileError(problems)

    def _carried(
        self,
        node_id: int,
        tables: dict[int, dict[Any, tuple[Any, ...]]],
        vocab: Sequence[Atom],
        max_len: int,
        problems: list[Diagnostic],
    ) -> dict[Any, tuple[Any, ...]]:
        """The twins carrier `node_id` gives: a copy's are its source's, a map's its results for
        an argument and its twin that are equal numbers of two types (2 and 2.0 of 2 * x); a map
        giving results that differ otherwise is refused, as a reader is."""
        node, sources = self.carriers[node_id]
        found = {i: _joined(self.twins.get(s, {}), tables.get(s, {})) for i, s in sources.items()}
        own = dict(self.twins.get(node_id, {}))
        if node is None:
            return _joined(own, found[0])
        inputs = list(node.children())
        facts = ValueFacts(inputs, vocab, max_len)
        sets = [facts.values(c) for c in inputs]
        combos = _combinations(
            sets, {i: [v for v in sets[i] if _in_table(v, t)] for i, t in found.items()}
        )
        if combos is None:
            problems.append(_too_many(node, "a sort's copy of equal numbers of two types"))
            return own
        fn = node.fn  # type: ignore[attr-defined]
        sources = _sources(node, inputs)
        for args in _one_value_per_node(combos, sources):
            try:
                one = fn(*args)
            except Exception:  # noqa: BLE001 (the program's function)
                continue
            for mixed in _mixes(args, _twins_of(args, found), sources):
                try:
                    two = fn(*mixed)
                except Exception:  # noqa: BLE001 (the program's function)
                    continue
                if type(one) is type(two) and one == two and repr(one) == repr(two):
                    continue
                if not (is_number(one) and is_number(two) and one == two):
                    i = next(i for i, a in enumerate(args) if a is not mixed[i])
                    problems.append(self._twin_problem(node, one, two, i, args[i], mixed[i]))
                    return own
                own = _joined(own, {(type(one), one): (two,), (type(two), two): (one,)})
        return own

    def _twin_problems(self, vocab: Sequence[Atom], max_len: int) -> list[Diagnostic]:
        """Each function that reads a copy of equal numbers of two types (1 and 1.0) and gives
        another result for one than for the other: the copy cannot say which it was."""
        problems: list[Diagnostic] = []
        tables: dict[int, dict[Any, tuple[Any, ...]]] = {}
        for node_id in self.carriers:  # (noted in the order they were built: sources first)
            tables[node_id] = self._carried(node_id, tables, vocab, max_len, problems)
        for node, sources in self.twin_readers:
            twins = {
                i: _joined(self.twins.get(s, {}), tables.get(s, {})) for i, s in sources.items()
            }
            inputs = list(node.children())
            facts = ValueFacts(inputs, vocab, max_len)
            sets = [facts.values(c) for c in inputs]
            fn = node.fn  # type: ignore[attr-defined]
            narrowed = {
                i: [v for v in sets[i] if _in_table(v, table)] for i, table in twins.items()
            }
            combos = _combinations(sets, narrowed)
            if combos is None:
                problems.append(_too_many(node, "a sort's copy of equal numbers of two types"))
                continue
            sources = _sources(node, inputs)
            for args in _one_value_per_node(combos, sources):
                found = _twin_clash(fn, args, twins, sources)
                if found is not None:
                    problems.append(self._twin_problem(node, *found))
                    break
        return problems

    def _twin_problem(
        self, node: sops.Node, one: Any, other: Any, i: int, a: Any, b: Any
    ) -> Diagnostic:
        """The refusal of `node`, which gives `one` for its argument `i` = `a` and `other` for
        its twin `b`; a copy of a bool mean gets its own words (float(x) of the mean, not int(x):
        int(0.5) is 0)."""
        name = getattr(node, "text", node.label)
        if node.children()[i].id not in self.means:
            return Diagnostic(
                f"'{name}' gives {value_repr(one)} for {value_repr(a)} but {value_repr(other)} "
                f"for {value_repr(b)}: it reads a sort's copy of values that hold both, equal "
                "numbers a model copies as one",
                node.span,
                "give the sorted values one type (float(x) or int(x))",
            )
        # (the copy holds one selected False as the int 0; the function reads it as False)
        a, b = (as_bool(a), b) if type(b) is float else (a, as_bool(b))
        return Diagnostic(
            f"'{name}' gives {value_repr(one)} for {value_repr(a)} but {value_repr(other)} for "
            f"{value_repr(b)}: it reads a sort's copy of a tracr mean of bools, which gives one "
            "selected False or True as the bool and several as 0.0 or 1.0, equal numbers a "
            "model copies as one",
            node.span,
            "sort the mean as floats (numerical(Map(float, mean)) before the sort), or make the "
            "function give the same result for False and 0.0, True and 1.0",
        )


def _sources(node: sops.Node, inputs: Sequence[sops.Node]) -> list[Any]:
    """What each argument of `node`'s function reads, equal where two must hold one value: a
    map's arguments are read at one position, so two reading one node hold its one value alike;
    a select's key and query are read at two positions (each query against every key), so they
    are apart even where they are one node (`select(s, s, type(k) is type(q))` of a sort's copy
    meets the key 1 beside the query 1.0: checked on equal ones alone, it compiled, certified and
    wrong)."""
    if isinstance(node, sops.PredicateSelect):
        return [(c.id, i) for i, c in enumerate(inputs)]
    return [c.id for c in inputs]


def _one_value_per_node(
    combos: list[tuple[Any, ...]], sources: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """The combinations in which positions reading one source (`_sources`) hold one value (it
    has one at a position: `f(x, x)` never reads 0 beside 1)."""
    at: dict[Any, list[int]] = {}
    for i, source in enumerate(sources):
        at.setdefault(source, []).append(i)
    same = [ps for ps in at.values() if len(ps) > 1]
    if not same:
        return combos
    return [
        args
        for args in combos
        if all(all(repr(args[i]) == repr(args[ps[0]]) for i in ps[1:]) for ps in same)
    ]


def _combinations(
    sets: Sequence[Sequence[Any]], narrowed: dict[int, list[Any]]
) -> list[tuple[Any, ...]] | None:
    """The argument combinations in which some position `i` of `narrowed` takes one of its
    values there (the only ones where a reading can differ), None when they are more than
    `MAX_AMBIGUOUS_CHECKS` (a partial check proves nothing)."""
    total = 0
    for i, values in narrowed.items():
        count = len(values)
        for j, other in enumerate(sets):
            count *= 1 if j == i else len(other)
        total += count
    if total > MAX_AMBIGUOUS_CHECKS:
        return None
    combos: list[tuple[Any, ...]] = []
    for i, values in narrowed.items():
        combos.extend(itertools.product(*(values if j == i else s for j, s in enumerate(sets))))
    return combos


def _joined(
    a: dict[Any, tuple[Any, ...]], b: dict[Any, tuple[Any, ...]]
) -> dict[Any, tuple[Any, ...]]:
    """Two twin tables as one: each value's twins in either."""
    out = dict(a)
    for key, others in b.items():
        out[key] = tuple(dict.fromkeys((*out.get(key, ()), *others)))
    return out


def _in_table(value: Any, table: dict[Any, tuple[Any, ...]]) -> bool:
    try:
        return (type(value), value) in table
    except TypeError:  # (an unhashable value is no number)
        return False


def _too_many(node: sops.Node, what: str) -> Diagnostic:
    return Diagnostic(
        f"'{getattr(node, 'text', node.label)}' reads {what}, and its value combinations are "
        f"more than the {MAX_AMBIGUOUS_CHECKS:,} the compiler checks to prove the model reads "
        "them as tracr does",
        node.span,
        "give the values one type (bool, int or float), or a smaller vocabulary or maximum length",
    )


def _twin_clash(
    fn: Any,
    args: tuple[Any, ...],
    twins: dict[int, dict[Any, tuple[Any, ...]]],
    sources: Sequence[Any],
) -> tuple[Any, Any, int, Any, Any] | None:
    """(result, other result, a position that differs, argument there, its twin) where `fn`
    gives another result for some mix of the arguments and their twins."""
    clash = _clash(fn, args, _twins_of(args, twins), sources)
    if clash is None:
        return None
    one, two, mixed = clash
    i = next(i for i, (a, b) in enumerate(zip(args, mixed, strict=True)) if a is not b)
    return one, two, i, args[i], mixed[i]


def _twins_of(
    args: tuple[Any, ...], twins: dict[int, dict[Any, tuple[Any, ...]]]
) -> dict[int, tuple[Any, ...]]:
    """{position: the twins of the argument there}, for the arguments that have any."""
    found = {}
    for i, table in twins.items():
        try:
            others = table.get((type(args[i]), args[i]), ())
        except TypeError:  # (an unhashable value is no number)
            continue
        if others:
            found[i] = others
    return found


def _mixes(
    args: tuple[Any, ...], alternatives: dict[int, tuple[Any, ...]], sources: Sequence[Any]
) -> Iterator[tuple[Any, ...]]:
    """`args` with each position of `alternatives` holding its own value or one of those, every
    mix but `args` itself: at one position two such arguments are each either, independently
    (a default int 0 beside a selected False; two copies of a sort, 1.0 in both), but positions
    reading one source (`sources`, `_sources`) hold its one value alike."""
    groups: dict[Any, list[int]] = {}
    for i in alternatives:
        groups.setdefault((sources[i], repr(args[i])), []).append(i)
    members = list(groups.values())
    options = [(args[at[0]], *alternatives[at[0]]) for at in members]
    for picks in itertools.product(*(range(len(o)) for o in options)):
        if any(picks):
            mixed = list(args)
            for at, o, k in zip(members, options, picks, strict=True):
                for i in at:
                    mixed[i] = o[k]
            yield tuple(mixed)


def _clash(
    fn: Any,
    args: tuple[Any, ...],
    alternatives: dict[int, tuple[Any, ...]],
    sources: Sequence[Any],
) -> tuple[Any, Any, tuple[Any, ...]] | None:
    """(fn(*args), fn(*mixed), mixed) for the first mix of `args` (`_mixes`) on which `fn`
    gives another result (of another type, or unequal), or None."""
    if not alternatives:
        return None
    try:
        one = fn(*args)
    except Exception:  # noqa: BLE001 (the program's function: the model gives nothing here)
        return None
    for mixed in _mixes(args, alternatives, sources):
        try:
            two = fn(*mixed)
        except Exception:  # noqa: BLE001 (tracr raises there: nothing to match)
            continue
        if type(one) is not type(two) or one != two:
            return one, two, mixed
    return None

"""Resolve, for one vocabulary and maximum length, the two node kinds only tracr programs have:

- `PredicateSelect` (a Python predicate) becomes selects the compiler reads (`compiler.predicates`),
  built from the values its keys and queries can take;
- an `AggregateSOp` with tracr's mean (`bools_as_numbers`) becomes a plain aggregate: unchanged when
  its selector selects at most one key or its values hold no bool, else over the values with bools
  read as 0/1 (a mean of bools is then the same number); a single selected True then gives 1, and
  the program's functions that read it are given True back (`compiler.bool_means`).

The result computes the same values as the input graph on every input over the vocabulary of length
1..max_len (`rasp.sops.evaluate` of both; tests/from_tracr/ checks it). A graph without such nodes is
returned unchanged, the very same object, so the compiler and the tools see a RASP program exactly
as before. Value sets come from the compiler's own analysis (`compiler.values`), run on the part of
the graph below the nodes being resolved.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from compiler.blocks import Atom
from compiler.bool_means import BoolMeans
from compiler.first_values import analysed_values, never_none_first, one_key_only_at_first
from compiler.mean_markers import (
    AS_NUMBER_TEXT,
    AsNumber,
    Markers,
    as_number_note,
    none_marker,
)
from compiler.plan_context import NUMERIC_COPY_MIN_VALUES
from compiler.predicates import MAX_TABLE_CELLS, Rebuild, fails_everywhere, table_of
from compiler.ranks import (
    copy_numbers,
    distinct_by_position,
    key_inputs,
    rank_keys,
    ranks_every_position,
    ties_never_averaged,
)
from compiler.rewrite import ValueFacts, rebuilt
from compiler.rounded import Rounded
from rasp import sops
from rasp.errors import CompileError, Diagnostic, ErrorKind
from rasp.seqvalues import value_repr
from rasp.tracr.functions import NoneCheck


def needs_resolving(node: sops.Node) -> bool:
    return isinstance(node, sops.PredicateSelect) or (
        isinstance(node, sops.AggregateSOp) and node.bools_as_numbers
    )


def resolve(root: sops.Node, vocab: Sequence[Atom], max_len: int) -> sops.Node:
    """`root` with every predicate select and tracr mean replaced (see the module docstring)."""
    root = _named_checks(_one_source_maps(root))
    order = list(sops.walk(root))
    if not any(needs_resolving(n) for n in order):
        return root
    level = _levels(order)
    new: dict[int, sops.Node] = {}
    bools = BoolMeans()  # the means whose 0 or 1 is one selected bool, and who reads them
    for depth in sorted({level[n.id] for n in order if needs_resolving(n)}):
        batch = [n for n in order if needs_resolving(n) and level[n.id] == depth]
        # Everything below this batch is final now: rebuild it, then learn its values at once.
        for node in order:
            ready = all(c.id in new for c in node.children())
            if (
                node.id not in new
                and not needs_resolving(node)
                and level[node.id] <= depth
                and ready
            ):
                new[node.id] = bools.rebuilt(rebuilt(node, new))
        inputs = [new[c.id] for node in batch for c in node.children()]
        for node in batch:  # a sort's keys: their inputs' values decide whether ranks differ
            if isinstance(node, sops.AggregateSOp):
                keys = rank_keys(new[node.selector.id])
                inputs.extend(key_inputs(keys) if keys is not None else [])
        facts = ValueFacts(inputs, vocab, max_len)
        for node in batch:
            new[node.id] = _resolve_one(node, new, facts, bools)
        # Nodes above the batch that are ready are rebuilt on the next pass (or at the end).
    for node in order:
        if node.id not in new:
            new[node.id] = bools.rebuilt(rebuilt(node, new))
    bools.check(vocab, max_len)
    return _canonical_output(new[root.id])


def _canonical_output(root: sops.Node) -> sops.Node:
    """A tracr program's output map gives floats to 12 significant digits: tracr computes the same
    number in different ways on different inputs (14.4 and 14.399999999999999), and a numerical
    output lists each value it can snap to, so such twins would be one value listed twice."""
    if isinstance(root, sops.MapSOp) and root.loose:
        return dataclasses.replace(root, fn=Rounded(root.fn))
    return root


def _one_source_maps(root: sops.Node) -> sops.Node:
    """A tracr map of several s-ops that are all maps of one s-op (`x if len(x) > 1 else None` of
    tokens and a map of tokens) becomes one map of that s-op. The value analysis takes a map's
    inputs as independent, so it would list combinations that never occur (a value the program
    never outputs); one map of the common source lists exactly what occurs."""
    order = list(sops.walk(root))
    form: dict[int, tuple[sops.Node | None, Any]] = {}  # node -> (its one source, fn from it)
    for node in order:
        if isinstance(node, sops.MapSOp) and node.loose:
            parts = [form[c.id] for c in node.inputs]
            sources = {id(src): src for src, _ in parts if src is not None}
            if len(sources) <= 1:
                source = next(iter(sources.values()), None)
                form[node.id] = (source, _Composed(node.fn, tuple(f for _, f in parts)))
                continue
        if isinstance(node, sops.ConstSOp):
            form[node.id] = (None, _Constant(node.value))
        else:
            form[node.id] = (node, None)
    new: dict[int, sops.Node] = {}
    for node in order:
        source, fn = form[node.id]
        if (
            isinstance(node, sops.MapSOp)
            and source is not None
            and fn is not None
            and len({c.id for c in node.inputs}) > 1
        ):
            new[node.id] = dataclasses.replace(node, fn=fn, inputs=(new[source.id],))
        else:
            new[node.id] = rebuilt(node, new)
    return new[root.id]


def _named_checks(root: sops.Node) -> sops.Node:
    """A select's None check of a named map (`opp` in tracr's `make_reverse`) takes the map's name
    when it is the map's only reader: the check is then the node the compiler materialises (the map
    is fused into it), so blocks and the certificate show the user's name, not `_map_2`."""
    order = list(sops.walk(root))
    readers: dict[int, int] = {}
    for node in order:
        for c in {c.id: c for c in node.children()}.values():
            readers[c.id] = readers.get(c.id, 0) + 1
    renamed: dict[int, sops.MapSOp] = {}  # check -> the map whose name (and text) it takes
    for node in order:
        if (
            isinstance(node, sops.MapSOp)
            and isinstance(node.fn, NoneCheck)
            and node.fn.constant is None
            and not node.name
            and len(node.inputs) == 1
            and isinstance(node.inputs[0], sops.MapSOp)
            and node.inputs[0].name
            and readers.get(node.inputs[0].id) == 1
            and node.inputs[0] is not root
        ):
            renamed[node.id] = node.inputs[0]
    if not renamed:
        return root
    unnamed = {n.inputs[0].id for n in order if n.id in renamed}  # type: ignore[attr-defined]
    new: dict[int, sops.Node] = {}
    for node in order:
        copy = rebuilt(node, new)
        if node.id in renamed:
            named = renamed[node.id]
            copy = dataclasses.replace(copy, name=named.name, text=named.text, span=named.span)
        elif node.id in unnamed:
            copy = dataclasses.replace(copy, name=None)
        new[node.id] = copy
    return new[root.id]


@dataclasses.dataclass(frozen=True)
class _Composed:
    """`fn` of its inputs, each computed from one source value (None: the source itself)."""

    fn: Any
    parts: tuple[Any, ...]

    def __call__(self, value: Any = None) -> Any:
        return self.fn(*(value if part is None else part(value) for part in self.parts))


@dataclasses.dataclass(frozen=True)
class _Constant:
    value: Any

    def __call__(self, value: Any = None) -> Any:
        return self.value


def _levels(order: list[sops.Node]) -> dict[int, int]:
    """For each node, how many nodes needing resolution lie on the longest path up to and
    including it: a node needing resolution at level L reads only nodes of levels < L."""
    level: dict[int, int] = {}
    for node in order:
        below = max((level[c.id] for c in node.children()), default=0)
        level[node.id] = below + (1 if needs_resolving(node) else 0)
    return level


def _resolve_one(
    node: sops.Node, new: dict[int, sops.Node], facts: ValueFacts, bools: BoolMeans
) -> sops.Node:
    if isinstance(node, sops.PredicateSelect):
        keys, queries = new[node.keys.id], new[node.queries.id]
        assert isinstance(keys, sops.SOp) and isinstance(queries, sops.SOp)
        # a side that is a mean of bools: the predicate is given the bool it stands for
        node = bools.predicate(dataclasses.replace(node, keys=keys, queries=queries))
        kv, qv = facts.values(keys), facts.values(queries)
        if len(kv) * len(qv) > MAX_TABLE_CELLS:
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.text}' would need its predicate on {len(kv)} key values x "
                        f"{len(qv)} query values (limit {MAX_TABLE_CELLS} pairs)",
                        node.span,
                        "select on s-ops with fewer values, or use a Comparison",
                    )
                ]
            )
        table = table_of(node.fn, kv, qv)
        if not any(any(row) for row in table) and (failed := fails_everywhere(node.fn, kv, qv)):
            key, query, why = failed
            raise CompileError(
                [
                    Diagnostic(
                        f"'{node.text}' fails on every input of length 1..{facts.sets.max_len}: "
                        f"{why}",
                        node.span,
                        "the interpreter raises an error here for every input, so there is "
                        f"nothing to compile; it fails at key {value_repr(key)}, query "
                        f"{value_repr(query)}",
                        kind=ErrorKind.EVALUATION,
                    )
                ]
            )
        rebuild = Rebuild(keys, queries, kv, qv, table, name=node.name, span=node.span)
        return rebuild.selector()
    assert isinstance(node, sops.AggregateSOp)
    result = _tracr_mean(node, new, facts, bools)
    bools.carry(result, new[node.sop.id])  # a copy of a sort's copy of twins holds them too
    return result


def _source(node: sops.Node) -> str:
    """The node as the program wrote it (its source text on one line), or its label."""
    return node.span.shown_text() if node.span else node.label


def _tracr_mean(
    node: sops.AggregateSOp, new: dict[int, sops.Node], facts: ValueFacts, bools: BoolMeans
) -> sops.Node:
    """tracr's Aggregate as a plain one. Where several keys may be selected the compiler averages
    numbers and copies anything else, so the values it averages must be numbers only: bools become
    0/1, and None (one selected None is None) and a default that is not a number become stand-in
    numbers below every value, mapped back after the mean. A mean over several values with a None
    among them is an error in tracr: the map back raises there too, so that no model promises a
    value and the value analysis lists none of those means."""
    selector, values = new[node.selector.id], new[node.sop.id]
    assert isinstance(selector, sops.Selector) and isinstance(values, sops.SOp)
    plain = dataclasses.replace(node, selector=selector, sop=values, bools_as_numbers=False)
    # an int default 0 or 1 the mean may give: there its int is not one selected bool's
    int_default = type(node.default) is int and node.default in (0, 1)
    unsure = frozenset([node.default] if int_default and not facts.never_empty(selector) else [])
    copied = bools.means.get(values.id)  # the values are a mean of bools already: copied on

    def marked(result: sops.Node, of_bools: bool) -> sops.Node:
        return bools.mark(result, (copied or frozenset()) | unsure) if of_bools else result

    if facts.at_most_one(selector):  # never a mean: the aggregate copies one value
        if _copies_many_numbers(plain, facts):
            return marked(_none_as_number(plain, facts.values(values)), copied is not None)
        return marked(plain, copied is not None)
    keys = rank_keys(selector)
    n = facts.sets.max_len
    if keys is not None and (
        distinct_by_position(keys, facts.values, n)
        # keys that repeat only where a value is None: averaging raises, so copy there too
        or ties_never_averaged(keys, facts.values, lambda p: facts.at_position(values, p), n)
    ):
        # A sort: each query selects one key (the value analysis cannot see it), so copy.
        possible_values = facts.values(values)
        if possible_values and ranks_every_position(selector):
            # and every query one: tracr's default None is never given, and listed it made a
            # sorted value's readers tables over None too (1.4M parameters at N = 16 for
            # make_pair_balance of make_sort_freq, 180 s at N = 32); a value it takes stands in
            node = dataclasses.replace(node, default=possible_values[0])
            plain = dataclasses.replace(plain, default=possible_values[0])
        if any(_is_number(v) for v in possible_values):
            copy = copy_numbers(node, selector, values, possible_values)
            twins = _number_twins(possible_values)
            if twins:  # one token for 1 and 1.0: the copy gives one of them for both
                bools.twins[copy.id] = twins
            return marked(copy, copied is not None)
        return plain
    of_bools = copied is not None or any(isinstance(v, bool) for v in facts.values(values))
    if copied is None:  # an int 0 or 1 among the values, selected alone, is no bool either
        unsure |= {v for v in facts.values(values) if type(v) is int and v in (0, 1)}
    possible = [int(v) if isinstance(v, bool) else v for v in facts.values(values)]
    numbers = [v for v in possible if _is_number(v)]
    others = [v for v in possible if v is not None and not _is_number(v)]
    if not numbers:
        return plain  # nothing to average: several selected values are an error, as in tracr
    if others:
        raise CompileError(
            [
                Diagnostic(
                    f"'{_source(node)}' may average numbers and copy {value_repr(others[0])}: its values mix "
                    "numbers with other kinds where several keys can be selected",
                    node.span,
                    "give the aggregate values of one kind (a Map before it), or a selector that "
                    "selects at most one key",
                )
            ]
        )
    given = node.default
    if given is None and facts.never_empty(selector):
        # every query selects a key: tracr's default None is never given, and a None marker would
        # make the output a one-hot of every mean (545,481 parameters at N = 32 for the running
        # mean of two numbers, 151 with default=0); a value the mean takes stands in for it
        given = min(numbers)
    outputs = [*numbers, *([given] if _is_number(given) else [])]
    lo, hi = min(outputs), max(outputs)
    below = math.floor(lo) - 1
    markers: dict[Any, int] = {}  # what a stand-in number stands for -> the number
    alone_raises = False  # None's stand-in is never one selected None (then it raises too)
    mixes = None  # the open interval the means of None's stand-in with numbers fall in
    if None in possible:
        # Several selected values with a None among them are an error in tracr, so the mean must
        # raise there, not give a number the value analysis would list. A stand-in this far from
        # the numbers puts every mean of it with numbers (at most N selected, the others as far the
        # other way as lo or hi) strictly between the numbers and the stand-in, where no mean of
        # numbers lies: the map back raises there. (Several selected Nones alone average to the
        # stand-in: None, where tracr raises.) Above the numbers where they are nonnegative: a
        # mean of nonnegative values errs relative to itself (compiler.numeric.mean_error).
        n = facts.sets.max_len
        reach = (n - 1) * (hi - lo)
        up, down = math.ceil(hi + reach) + 1, math.floor(lo - reach) - 1
        # a mean of k <= n values with the stand-in among them is at least lo + (up - lo) / k >=
        # hi + 1/n (up - lo >= n (hi - lo) + 1); one of numbers alone at most hi, up to float64's
        # rounding of the sum (three 0.1s average to 0.10000000000000002): the gap's middle parts
        gap = 0.5 / n
        if lo >= 0 or abs(up) <= abs(down):
            markers[None], mixes = up, (hi + gap, up)
        else:
            markers[None], mixes = down, (down, lo - gap)
            below = down - 1
        if (
            given is not None
            and one_key_only_at_first(selector)
            and never_none_first(values, analysed_values(facts), none_marker)
        ):
            # one selected key is key 0, never None there: the stand-in is a mean of several
            # Nones, tracr's error, so it maps back to no None (compiler.first_values); a default
            # None (`<`'s query at 0) would share the stand-in
            mixes = (mixes[0], mixes[1] + 1) if mixes[1] == up else (mixes[0] - 1, mixes[1])
            alone_raises = True
    elif given is None:
        markers[None] = below
    if given is not None and not _is_number(given):
        markers[given] = below
    if None in possible or any(isinstance(v, bool) for v in facts.values(values)):
        values = sops.MapSOp(
            fn=AsNumber(markers.get(None)),
            inputs=(values,),
            text=AS_NUMBER_TEXT,
            span=node.span,
            loose=True,
            note=as_number_note(values, markers.get(None)),
        )
    if not markers:
        return marked(dataclasses.replace(plain, sop=values, default=given), of_bools)
    default = markers.get(given, given)
    mean = dataclasses.replace(plain, sop=values, default=default, name=None)
    back = {marker: value for value, marker in markers.items()}
    if alone_raises:
        del back[markers[None]]
    return marked(
        sops.MapSOp(
            fn=Markers(tuple(back.items()), mixes),
            inputs=(mean,),
            text=f"stand-ins back to {tuple(back.values())!r}"
            + (", a mean over None an error" if mixes else ""),
            span=node.span,
            name=node.name,
            loose=True,
        ),
        of_bools,
    )


def _copies_many_numbers(plain: sops.AggregateSOp, facts: ValueFacts) -> bool:
    """Whether single-key aggregate `plain` copies many numbers (ints and floats; None beside
    them) with tracr's default None: a copy that `_none_as_number` lets the compiler make as one
    number. Equal numbers of two types among them (a prefix mean's 1 and 1.0) are one number to
    the copy and one column of the map back (`MapPlanner._twins_merged`), their types told apart
    by position where positions decide them (`compiler.output_types`), as a one-hot copy's are."""
    numbers = [v for v in facts.values(plain.sop) if v is not None]
    return (
        plain.default is None
        and len(numbers) > NUMERIC_COPY_MIN_VALUES
        and all(_is_number(v) and math.isfinite(v) for v in numbers)
    )


def _none_as_number(plain: sops.AggregateSOp, possible: Sequence[Atom]) -> sops.Node:
    """`plain` (a copy of one key's number or None, default None) with a number below the
    numbers standing in for None, in the values and as the default, mapped back to None after
    the copy: with the default None, the copy of a mean of 788 values (tracr's `shift_by(16,
    make_frac_prevs(tokens))` at N = 17) was their one-hot, 11.3M parameters, where only the 4
    at position 0 are ever copied; a number lets the compiler copy the number itself
    (`PlanContext.is_mean`, `numeric_copies`) and decode the values the copy takes. A sort of
    sorted means by the indices, whose values hold None (make_sort_unique of a sort that leaves
    a position empty), copied their one-hot of 1,600 or more values at N = 20."""
    marker = math.floor(min(v for v in possible if v is not None)) - 1
    values = plain.sop
    if None in possible:
        values = sops.MapSOp(
            fn=AsNumber(marker),
            inputs=(values,),
            text="None as a number",
            span=plain.span,
            loose=True,
            note=as_number_note(values, marker),
        )
    copy = dataclasses.replace(plain, sop=values, default=marker, name=None)
    return sops.MapSOp(
        fn=Markers(((marker, None),)),
        inputs=(copy,),
        text="stand-in back to None",
        span=plain.span,
        name=plain.name,
        loose=True,
    )


def _number_twins(values: Sequence[Any]) -> dict[Any, tuple[Any, ...]]:
    """(type, value) -> the values equal to it of another type, among `values`' numbers."""
    numbers = [v for v in values if _is_number(v)]
    return {
        (type(v), v): others
        for v in numbers
        if (others := tuple(w for w in numbers if w == v and type(w) is not type(v)))
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

"""numpy scalars a tracr program's functions give, kept for the functions that read them.

tracr programs compute with numpy too (`np.abs(x) > 1` is an `np.bool_`). The lowered graph holds
Python values (`rasp.tracr.boxes.plain`: the compiler, the models and the tools read those), but a
function that reads such a value computes with numpy's arithmetic in tracr: `np.True_ + np.True_`
is `True` (Python's `True + True` is 2), `np.float32(1/3) * 3` is `1.0`. Each lowered function
remembers the numpy type of each value it gave (`NumpyTypes`) and the functions reading it
(`rasp.tracr.functions.TracrFn.sources`) are given the numpy scalar back. A value the function gave
both as a numpy scalar and as a Python value (or as two numpy types) is one value to the graph:
a clash, refused by the compiler where a function reads it. Past an aggregate the graph's value may
also be one tracr gives in another form than the one the reader was called with (the aggregate's
default as written, numpy's or Python's; a mean of several, np.float64 or not by what it
selected): a reader that gives different results for some combination of its arguments' forms is
refused (`ambiguous_problems`, from the calls `AmbiguousReads` records). numpy parts of a
tuple are not kept (a tuple travels as a string token of its Python values)."""

from __future__ import annotations

import bisect
import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rasp import sops
from rasp.atoms import atom_key
from rasp.errors import Diagnostic
from rasp.tracr.boxes import plain

# multisets of a function's values listed at most to find which means one aggregate can give
MAX_MEAN_SETS = 50_000


def form_key(out: Any) -> tuple[type, Any] | None:
    """A function's output `out` as (its plain value's type, that value), the key its numpy forms
    are noted under; None where none is kept (None, a tuple or list, whose numpy parts are not
    kept: see the module doc, or an unhashable value)."""
    if out is None or isinstance(out, (tuple, list)):
        return None
    value = plain(out)
    try:
        key = (type(value), value)
        hash(key)
    except TypeError:
        return None
    return key


@dataclass(eq=False)  # one object, shared (compared by identity)
class NumpyTypes:
    """The numpy scalar types a program function gave, by the Python value the graph holds for
    each (`plain`), so that a function reading them computes as tracr's does; a value given both as
    numpy's and as Python's (or as two numpy types) is a `clash`: the graph holds one value."""

    types: dict[tuple[type, Any], type] = field(default_factory=dict)
    python: set[tuple[type, Any]] = field(default_factory=set)
    clash: tuple[Any, Any] | None = None
    # some function reads the values (only then are they noted); one `NumpyTypes` serves every map
    # of one Python function in a graph, as `compiler.dedupe` may keep any one of them
    read: bool = False
    compared: bool = False  # a Comparison select compares them (`comparison_problem`)
    averaged: bool = False  # an aggregate may average them (`MeanCheck`)
    float64: bool = False  # it gave an np.float64 (a mean of its values may be one)

    def note(self, out: Any) -> None:
        key = form_key(out)
        if key is None:
            return
        value = key[1]
        if isinstance(out, np.generic):
            self.float64 = self.float64 or type(out) is np.float64
            seen = self.types.setdefault(key, type(out))
            other = (
                seen(value) if seen is not type(out) else (value if key in self.python else None)
            )
        else:
            self.python.add(key)
            seen = self.types.get(key)
            other = None if seen is None else seen(value)
        if other is not None and self.clash is None:
            self.clash = (out, other)

    @property
    def noted(self) -> bool:
        return self.read or self.compared or self.averaged

    def given(self, value: Any) -> Any:
        """`value` as the function gave it: its numpy scalar, where it gave one (outside an
        evaluation: the compiler's calls, a clash refused; in one, `Source.forms`)."""
        if not self.types:
            return value
        try:
            numpy_type = self.types.get((type(value), value))
        except TypeError:
            return value
        return value if numpy_type is None else numpy_type(value)


@dataclass(frozen=True)
class Source:
    """Where a reader's argument comes from: the types of the program function that gave it, and
    the defaults of the aggregates between them (a default travels as the same value as the
    function's, though tracr gives it to the reader as written, not as the function's numpy)."""

    numpy: NumpyTypes
    text: str
    defaults: tuple[Any, ...] = ()
    averages: bool = False  # an aggregate between them may average
    # the compiler may compute the function from its affine form instead of calling it on every
    # argument (`TracrFn.affine`): then `numpy` need not hold all its values
    affine: bool = False
    # the reader's input node itself, from which an evaluation finds the function's output that
    # reached a position (`rasp.tracr.input_forms`)
    node: sops.Node | None = field(default=None, compare=False, repr=False)
    aggregates: int = 0  # how many aggregates lie between (one: the means are of its values)

    def given(self, value: Any) -> Any:
        """`value` as the model is built to read it: the function's form of it, or where the
        function never gave it, an aggregate default written as a numpy scalar equal to it (then
        tracr gives it so where nothing is selected; a mean equal to it is `ambiguous`)."""
        form = self.numpy.given(value)
        if not self._numpy_defaults or isinstance(value, np.generic):
            return form
        try:
            key = (type(value), value)
            if key in self.numpy.types or key in self.numpy.python:
                return form
        except TypeError:  # (an unhashable value: no number)
            return form
        for default in self.defaults:
            if isinstance(default, np.generic) and type(plain(default)) is type(value):
                if plain(default) == value:
                    return default
        return form

    def ambiguous(self, value: Any, max_len: int | None = None) -> list[tuple[str, Any]]:
        """Each (what, form) in which tracr may give the graph's `value` other than the one the
        reader is given (`given`): an aggregate default between them equal to it (tracr gives the
        default as written, numpy's or Python's), the function's own form of it (one selected),
        or a float a mean of several may give in another form (np.float64 where a selected value
        is one, Python's where all are Python's; with `max_len`, only where a mean of at most
        that many of the function's values can be `value`, else any float)."""
        if not self.read_through or not (self.numpy.types or self._numpy_defaults):
            return []  # (Python values only: each is its own form)
        base = plain(value)
        try:
            key = (type(base), base)
            numpy_type = self.numpy.types.get(key)
            gives = numpy_type is not None or key in self.numpy.python
        except TypeError:  # (an unhashable value: no number)
            return []
        built = self.given(value)
        found: list[tuple[str, Any]] = []
        if gives and numpy_type is not None and type(built) is not numpy_type:
            scalar = numpy_type(base)
            found.append((f"{scalar!r} (the function's, one selected)", scalar))
        if gives and numpy_type is None and type(built) is not type(base):
            found.append((f"{base!r} (the function's, one selected)", base))
        for default in self.defaults:
            same = type(plain(default)) is type(base) and plain(default) == base
            if same and type(default) is not type(built):
                found.append((f"the aggregate default {default!r}", default))
        if self.averages and type(base) is float:
            python, float64 = self._mean_forms(base, max_len)
            if float64 and type(built) is not np.float64:
                scalar = np.float64(base)
                found.append((f"{scalar!r} (a mean of values one of them np.float64)", scalar))
            if python and type(built) is not float:
                found.append((f"{base!r} (a mean of Python values)", base))
        if self.averages and type(base) in (int, bool) and abs(base) <= 2**53:
            # the graph holds an equal mean of several as this bool or int (one number to a
            # model): its float forms are given to the reader too (1.0 beside one selected True)
            python, float64 = self._mean_forms(float(base), max_len)
            if float64:
                scalar = np.float64(base)
                found.append((f"{scalar!r} (a mean of values one of them np.float64)", scalar))
            if python:
                found.append((f"{float(base)!r} (a mean of Python values)", float(base)))
        return found

    def _mean_forms(self, base: float, max_len: int | None) -> tuple[bool, bool]:
        """Whether a mean of several may be `base` as Python's float, and as np.float64: of one
        aggregate's at most `max_len` values of the function, those that tracr averages (Python's
        numbers, np.float64; a mean with another numpy scalar raises), np.float64 where one is.
        Near `base` counts (the graph adds in key order, rounding by it). Where the values are not
        all known (an affine map's, nested means, `max_len` None, too many to list): any."""
        anyhow = (self._python_numbers, self.numpy.float64 or self._numpy_defaults)
        if max_len is None or self.affine or self.aggregates != 1:
            return anyhow
        try:
            python = [(float(v), False) for t, v in self.numpy.python if t in (int, bool, float)]
        except OverflowError:  # (an int too large for a float: not listed)
            return anyhow
        wide = [(float(v), True) for (_, v), t in self.numpy.types.items() if t is np.float64]
        if not all(math.isfinite(v) for v, _ in python + wide):
            return anyhow  # (inf and NaN: no order to search)
        listed = _means(tuple(sorted(python + wide)), max_len)
        if listed is None:
            return anyhow
        means, wides = listed
        low, high = (base - _near(base), base + _near(base))
        found = wides[bisect.bisect_left(means, low) : bisect.bisect_right(means, high)]
        return (False in found, True in found)

    @property
    def _numpy_defaults(self) -> bool:
        return any(isinstance(d, np.generic) for d in self.defaults)

    @property
    def _python_numbers(self) -> bool:
        """Whether a mean of several may be of Python numbers only (then it is Python's float):
        the function gave one, or its values are not all known (affine), or a default is one."""
        return (
            self.affine
            or any(t in (int, bool, float) for t, _ in self.numpy.python)
            or any(type(d) in (int, bool, float) for d in self.defaults)
        )

    @property
    def read_through(self) -> bool:
        return bool(self.defaults) or self.averages


@dataclass(eq=False)
class AmbiguousReads:
    """The arguments a reader was called with where one is `Source.ambiguous`: after compiling,
    `ambiguous_problems` asks whether the reader's result there depends on the forms (numpy's or
    Python's) tracr may give them in."""

    # (an ordered set, keyed by type and value: (0,) and (False,) are one key to a plain dict, but
    # tracr gives them to a reader in different forms)
    calls: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)

    def record(self, sources: Sequence[Source | None], values: Sequence[Any]) -> None:
        # (the function's values are noted before a reader reads them: the types are known here)
        if any(s is not None and s.ambiguous(v) for v, s in zip(values, sources)):
            try:
                self.calls.setdefault(tuple(atom_key(v) for v in values), tuple(values))
            except TypeError:  # (an unhashable value: no default of a number)
                pass


def _near(value: float) -> float:
    return abs(value) * 1e-9 + 1e-12


@functools.lru_cache(maxsize=64)
def _means(
    values: tuple[tuple[float, bool], ...], max_len: int
) -> tuple[list[float], list[bool]] | None:
    """Each mean of 2 to `max_len` of `values` (with repeats), sorted, and whether an np.float64
    (flagged True) is among its values; None where they are more than `MAX_MEAN_SETS`."""
    sizes = range(2, max_len + 1)
    if sum(math.comb(len(values) + n - 1, n) for n in sizes) > MAX_MEAN_SETS:
        return None
    found = sorted(
        (sum(v for v, _ in picked) / n, any(w for _, w in picked))
        for n in sizes
        for picked in itertools.combinations_with_replacement(values, n)
    )
    return [m for m, _ in found], [w for _, w in found]


def sources_of(
    inputs: Sequence[sops.Node], compared: bool = False, averaged: bool = False
) -> tuple[Source | None, ...]:
    """Per input, the lowered program function whose value it is (through None checks and
    aggregates, which pass a value on as it is; None where none): a numpy scalar it gave is given
    to the reader as such. Each function found is marked as read (it then notes its types), or as
    `compared` by a Comparison select."""
    found: list[Source | None] = []
    for node in inputs:
        start = node
        defaults: list[Any] = []
        through = 0  # aggregates
        while True:
            fn = getattr(node, "fn", None)
            if isinstance(node, sops.MapSOp) and getattr(fn, "passes_value", False):
                node = node.inputs[0]
            elif isinstance(node, sops.AggregateSOp):
                # (as written: tracr gives a reader the default in its own form)
                defaults.append(node.default if node.numpy_default is None else node.numpy_default)
                through += 1
                node = node.sop
            else:
                break
        fn = getattr(node, "fn", None) if isinstance(node, sops.MapSOp) else None
        numpy = getattr(fn, "numpy", None)
        if isinstance(numpy, NumpyTypes):
            if compared:  # (a clash is no problem to an exact comparison: noted, not read)
                numpy.compared = True
            elif averaged:  # (nor to a mean, which refuses numpy's ints in a form it can tell)
                numpy.averaged = True
            else:
                numpy.read = True
            text = str(getattr(fn, "text", ""))
            kept = tuple(d for d in defaults if d is not None)
            affine = getattr(fn, "affine", None) is not None
            found.append(Source(numpy, text, kept, through > 0, affine, start, through))
        else:
            found.append(None)
    return tuple(found)


def comparison_problem(
    node: sops.Select, vocab: Sequence[Any] | None = None, max_len: int | None = None
) -> Diagnostic | None:
    """A `Comparison` select (lowered to the graph's exact comparison) where tracr's comparison
    can differ: numpy compares a float narrower than Python's (`np.float32`) with a Python number
    rounded to its precision (`np.float32(0.1) == 0.1` is True), the graph and a model exactly.
    Rounding keeps order, so the two differ only where a number the other side gives is not the
    narrow float it rounds to and that float is one this side gives: any other values (small
    ints, floats exact in float32) compare alike. Where the other side's values are not known
    (`_other_values`), any narrow float is refused. (A sort compares one s-op with itself:
    exact in any precision.)"""
    if node.keys is node.queries:
        return None
    sources = sources_of((node.keys, node.queries), compared=True)
    sides = (node.keys, node.queries)
    for i, source in enumerate(sources):
        narrow = _narrow_values(source)
        if not narrow:
            continue
        other = (
            None if source is None or source.affine else _other_values(sides[1 - i], vocab, max_len)
        )
        clash = _rounding_clash(narrow, other)
        if clash is None:
            continue
        names = " and ".join(sorted({t.__name__ for t in narrow.values()}))
        shown = "" if clash is True else f" ({clash[0]!r} rounds to {clash[1]!r}, a value it gives)"
        assert source is not None
        return Diagnostic(
            f"a select compares the values of '{source.text}', numpy {names}, with values "
            f"tracr rounds to that precision{shown}: tracr compares them rounded "
            "(np.float32(0.1) == 0.1 is True), a compiled model exactly",
            node.span,
            "give Python floats (float(...)), or compare with a function "
            "(lambda key, query: key == query), which is given the numpy values",
        )
    return None


def _narrow_values(source: Source | None) -> dict[float, type]:
    """The floats narrower than Python's (np.float32, np.float16) that `source`'s function gave,
    by value."""
    if source is None:
        return {}
    return {
        value: t
        for (_, value), t in source.numpy.types.items()
        if issubclass(t, np.floating) and np.finfo(t).bits < 64
    }


def _other_values(
    node: sops.Node, vocab: Sequence[Any] | None, max_len: int | None
) -> list[tuple[Any, type | None]] | None:
    """Every value the side `node` may give a comparison, each with the numpy type it may come
    as (None: Python's, which numpy rounds to the other side's precision); None where unknown."""
    while isinstance(node, sops.MapSOp) and getattr(node.fn, "passes_value", False):
        node = node.inputs[0]
    if isinstance(node, sops.TokensSOp):
        return None if vocab is None else [(v, None) for v in vocab]
    if max_len is not None and isinstance(node, sops.IndicesSOp):
        return [(i, None) for i in range(max_len)]
    if max_len is not None and isinstance(node, (sops.LengthSOp, sops.SelectorWidthSOp)):
        return [(i, None) for i in range(max_len + 1)]
    if isinstance(node, sops.ConstSOp):
        return [(node.value, None)]
    fn = getattr(node, "fn", None)
    numpy = getattr(fn, "numpy", None)
    if not isinstance(node, sops.MapSOp) or not isinstance(numpy, NumpyTypes):
        return None  # (an aggregate's means, a function's values not recorded: unknown)
    if getattr(fn, "affine", None) is not None:
        return None
    return [(v, None) for _, v in numpy.python] + [(v, t) for (_, v), t in numpy.types.items()]


def _rounding_clash(
    narrow: dict[float, type], other: list[tuple[Any, type | None]] | None
) -> tuple[Any, float] | bool | None:
    """(a value of `other`, the narrow float it rounds to) where tracr's rounded comparison and
    an exact one can differ; True where that is not known; None where they agree everywhere."""
    if other is None:
        return True
    for value, numpy_type in other:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue  # (a bool is 0 or 1 in any precision; a string never equals a number)
        if numpy_type is not None and (
            numpy_type is np.bool_
            or (issubclass(numpy_type, np.floating) and np.finfo(numpy_type).bits >= 64)
            or (issubclass(numpy_type, np.integer) and abs(value) <= 2**24)
        ):
            continue  # numpy promotes both to a type that holds each exactly
        for t in set(narrow.values()):
            try:
                with np.errstate(all="ignore"):
                    rounded = float(t(value))
            except (OverflowError, ValueError):
                return True
            if rounded != value and rounded in narrow:
                return value, rounded
    return None


def ambiguous_problems(
    call: Callable[..., Any],
    sources: Sequence[Source | None],
    reads: AmbiguousReads,
    text: str,
    span: Any,
    max_len: int | None = None,
) -> list[Diagnostic]:
    """Where the reader `call` (the program's function, named `text`) gives another result for
    some of its arguments in a form tracr may give them (an aggregate's default as written, a mean
    of Python floats, a mean of np.float64) than for the forms the model was built from
    (`Source.given`): a model holds one value for all of them (`Source.ambiguous`). Every
    combination of the arguments' forms is tried: a reader may differ only where two arguments
    are both in their other form."""
    for values in reads.calls.values():
        given = [v if s is None else s.given(v) for v, s in zip(values, sources)]
        options = [
            [(None, g)] + ([] if s is None else list(s.ambiguous(v, max_len)))
            for v, s, g in zip(values, sources, given)
        ]
        if all(len(o) == 1 for o in options):
            continue
        built = _result(call, given)
        whole = [type(plain(v)) in (int, bool) for v in values]
        for combo in itertools.product(*options):
            args = [form for _, form in combo]
            other = _result(call, args)
            if type(other) is type(built) and other == built:
                continue
            if _retyped(other, built) and all(
                w for w, (what, _) in zip(whole, combo, strict=True) if what is not None
            ):
                continue  # (a whole number's float form: an int for a float, as verify allows)
            whats = " and ".join(what for what, _ in combo if what is not None)
            names = ", ".join(sorted({f"'{s.text}'" for s in sources if s is not None}))
            return [
                Diagnostic(
                    f"'{text}' gives {other!r} for {whats} but {built!r} for {_shown(given)}, "
                    f"the form{'s' if len(given) > 1 else ''} the model is built from (values of "
                    f"{names}): tracr gives either on some input, a compiled model one value",
                    span,
                    "give the aggregate a default the function never gives (None), or make the "
                    "function return Python values (bool(...), int(...), float(...))",
                )
            ]
    return []


def _retyped(a: Any, b: Any) -> bool:
    """Equal numbers, an int and a float (`rasp verify` counts it a type, not a value)."""
    return {type(a), type(b)} == {int, float} and a == b


def _shown(args: Sequence[Any]) -> str:
    return repr(args[0]) if len(args) == 1 else repr(tuple(args))


def _result(call: Callable[..., Any], args: Sequence[Any]) -> Any:
    """The program function's result as the graph holds it, or the kind of error it raised."""
    try:
        return plain(call(*args))
    except Exception as exc:  # noqa: BLE001 (the program's own function may raise anything)
        return ("raises", type(exc).__name__)

"""The functions a lowered tracr graph calls (`rasp.tracr.lower.to_sops` makes them): a map's
with tracr's None rule (`TracrFn`), a Select's predicate, the checks that stand for tracr's errors
(None compared, a constant of another length) and the constants' value functions. Each holds what
the compiler needs to see in it: a map's affine form, the value it returned that no model can
hold (`bad`), the numpy scalar types it gave (`rasp.tracr.numpy_values`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rasp.errors import RaspRuntimeError
from rasp.sops import current_evaluation
from rasp.tracr.boxes import box, equality_token, is_value, marked, plain, unbox
from rasp.tracr.input_forms import (
    call_given,
    compile_facts,
    next_call,
    note_form,
    note_output,
    numpy_here,
)
from rasp.tracr.numpy_values import AmbiguousReads, NumpyTypes, Source
from rasp.tracr.signed_zeros import ZeroSigns


@dataclass
class TracrFn:
    """A Map's or SequenceMap's function with tracr's None rule: None in, None out. Any exception is
    an evaluation error (as tracr raises it); a value no model can hold is recorded."""

    f: Callable[..., Any]
    text: str
    # (a, b, 0) for a LinearSequenceMap's a·x + b·y, or an operator's `+` or `-` of two s-ops:
    # its form on numbers, so the compiler need not call it on every combination of their values
    # (compiler.known_affine, compiler.vector_maps)
    affine: tuple[int | float, ...] | None = None
    bad: tuple[tuple[Any, ...], Any] | None = field(default=None, repr=False)
    # per argument, the program function that gave it (`sources_of`): its numpy scalars, which the
    # graph holds as Python values, are given back as numpy's (np.True_ + np.True_ is True, not 2)
    sources: tuple[Source | None, ...] = field(default=(), repr=False, compare=False)
    numpy: NumpyTypes = field(default_factory=lambda: NumpyTypes(), repr=False, compare=False)
    ambiguous: AmbiguousReads = field(default_factory=AmbiguousReads, repr=False, compare=False)
    # whether it gave -0.0, and a result it gives for 0.0 and not for -0.0 (`signed_zeros`)
    zeros: ZeroSigns = field(default_factory=ZeroSigns, repr=False, compare=False)

    def __call__(self, *args: Any) -> Any:
        # (in an evaluation, the k-th call is position k: every call counts, None's too)
        numpy = bool(self.sources) and numpy_here(self.sources)
        position = next_call(self) if numpy else None
        if None in args:
            if self.numpy.noted:
                note_output(self, None)
            return None
        given = [unbox(a) for a in args]
        # (what the compiler reads off this function, noted only where it is the compile's: an
        # input's evaluation, on tokens outside its vocabulary, refused a later compile)
        facts = compile_facts()
        if self.sources and facts:
            self.ambiguous.record(self.sources, given)
        if numpy:
            at = None if position is None else [position] * len(given)
            out = call_given(self._call, self.sources, given, self.text, at)
        else:  # (Python values only: each is its own form)
            out = self._call(*given)
        if facts:  # (the flipped calls in the forms this call gave the function)
            self.zeros.check(_in_forms(self._call, self.sources, self.text, numpy), given, out)
        if self.numpy.noted:
            if facts:
                self.numpy.note(out)
            note_form(self.numpy, out)
            note_output(self, out)
        out = plain(out)
        if marked(out) and self.bad is None and facts:  # a string of its own, read back as a tuple
            self.bad = (args, out)
        out = box(out)
        if not is_value(out) and self.bad is None and facts:
            self.bad = (args, out)
        return out

    def _call(self, *args: Any) -> Any:
        try:
            return self.f(*args)
        except RaspRuntimeError:
            raise
        except Exception as exc:  # noqa: BLE001 (the program's own function may raise anything)
            what = "a Map's function" if len(args) == 1 else "a SequenceMap's function"
            raise RaspRuntimeError(_error_text(exc, what, len(args))) from None

    def structure(self) -> tuple[str, int]:
        """Equal for two maps of one Python function (compiler.dedupe): `Map(f, x)` written twice
        computes the same values (tracr's functions are pure)."""
        return ("tracr", id(self.f))


def _in_forms(
    call: Callable[..., Any], sources: tuple[Source | None, ...], text: str, numpy: bool
) -> Callable[..., Any]:
    """`call` given its arguments in the forms tracr gives them (numpy's where a source gave
    numpy scalars): a function may tell the zeros apart in numpy's form only (`v.round(1)` raises
    on a Python float, and `str` of np.float64(-0.0) is "-0.0")."""
    if not numpy:
        return call
    return lambda *args: call_given(call, sources, args, text)


@dataclass
class TracrPredicate:
    """A Select's predicate, called as `predicate(key, query)`; exceptions as TracrFn's."""

    predicate: Callable[[Any, Any], Any]
    text: str
    sources: tuple[Source | None, ...] = field(default=(), repr=False, compare=False)
    ambiguous: AmbiguousReads = field(default_factory=AmbiguousReads, repr=False, compare=False)
    zeros: ZeroSigns = field(default_factory=ZeroSigns, repr=False, compare=False)

    def __call__(self, key: Any, query: Any) -> bool:
        key, query = unbox(key), unbox(query)
        at = None
        facts = compile_facts()
        numpy = bool(self.sources) and numpy_here(self.sources)
        if facts and (type(key) is float or type(query) is float):  # (a zero's sign: signed_zeros)
            self.zeros.check(
                _in_forms(self._call, self.sources, self.text, numpy), (key, query), None
            )
        if not numpy:
            return self._call(key, query)  # (Python values only: each is its own form)
        if facts:
            self.ambiguous.record(self.sources, (key, query))
        # (in an evaluation, cells are called query by query, each over every key)
        cell, evaluation = next_call(self), current_evaluation()
        if cell is not None and evaluation is not None:
            at = [cell % evaluation.n, cell // evaluation.n]
        return bool(call_given(self._call, self.sources, (key, query), self.text, at))

    def _call(self, key: Any, query: Any) -> bool:
        try:
            return bool(self.predicate(key, query))
        except Exception as exc:  # noqa: BLE001
            raise RaspRuntimeError(_error_text(exc, "a Select's predicate", 2)) from None


def _error_text(exc: Exception, what: str, count: int) -> str:
    """Python's error, and how the function is called where it takes other arguments (`lambda k:
    k == "a"` as a Select's predicate: Python's message alone does not say who called it so)."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TypeError) and "positional argument" in str(exc):
        called = (
            "as predicate(key, query)"
            if "Select" in what
            else f"with {count} argument{'s' * (count > 1)}"
        )
        text += f" ({what} is called {called})"
    return text


@dataclass(frozen=True)
class NoneCheck:
    """tracr's Comparison refuses None: the value itself, or the error tracr raises.

    A tuple or list travels as a string token (`box`), whose text orders (2, 0) after (10, 0) and
    tells (1,) from (1.0,), which tracr's Comparison compares element by element. With `tuples`
    "equal" (`==`, `!=`) the check reads such a token as one that is equal exactly where the
    values are (`equality_token`); with "order" it raises there, as no model orders tuples."""

    role: str
    constant: Any = None  # given: the check's value instead of the value it checks
    passes_value: ClassVar[bool] = True  # (numpy_values.sources_of: the value goes on as it is)
    tuples: str = ""  # "", "equal" or "order"
    # the first tuple it could not read as tracr compares it (tracr did not raise there, so the
    # lowered graph's error is no value of tracr's): reported by `value_problems`, as a refusal
    refused: list[str] = field(default_factory=list, compare=False, hash=False, repr=False)

    def __call__(self, value: Any) -> Any:
        if value is None:
            raise RaspRuntimeError(f"ValueError: {self.role} is None!")
        if self.tuples and marked(value):
            try:
                if self.tuples == "order":
                    raise RaspRuntimeError(
                        f"a compiled model cannot order the {self.role} {unbox(value)!r}: tracr "
                        "orders a tuple element by element, a model holds it as one token; "
                        "compare its parts instead"
                    )
                return equality_token(value, self.role)
            except RaspRuntimeError as err:
                if not self.refused and compile_facts():
                    self.refused.append(str(err))
                raise
        return value if self.constant is None else self.constant


@dataclass(frozen=True)
class ConstantFn:
    """ConstantSOp's value at (index, length); tracr refuses another length when it checks.
    `repeat`: Full's one value at every index. Where the program wrote numpy scalars, `forms`
    holds them and `numpy` their types, which a function reading them is given back, as a map's
    (`TracrFn.numpy`): tracr keeps them (`Full(np.True_)` read by `a + a` is `np.True_`)."""

    values: tuple[Any, ...]
    check_length: bool
    repeat: bool = False
    forms: tuple[Any, ...] | None = field(default=None, compare=False, repr=False)
    numpy: NumpyTypes | None = field(default=None, compare=False, repr=False)
    text: str = ""

    def __call__(self, index: int, n: int) -> Any:
        if self.repeat:
            index = 0
        elif self.check_length and n != len(self.values):
            raise RaspRuntimeError(f"Constant len {len(self.values)} doesn't match input len {n}.")
        if index >= len(self.values):
            raise RaspRuntimeError(f"the constant has no position {index}")
        if self.numpy is not None and self.forms is not None and self.numpy.noted:
            note_form(self.numpy, self.forms[index])
            note_output(self, self.forms[index])
        return self.values[index]


@dataclass(frozen=True)
class LengthCheck:
    """A value of an s-op whose tracr value has `length` positions: the value itself on an input
    of that length, else the error that tracr's differently shaped value stands for here."""

    length: int
    passes_value: ClassVar[bool] = True

    def __call__(self, value: Any, n: int) -> Any:
        if n != self.length:
            raise RaspRuntimeError(
                f"a constant of length {self.length} (check_length=False) read on an input of "
                f"length {n}: tracr's value has the constant's length"
            )
        return value


@dataclass(frozen=True)
class MatrixFn:
    """ConstantSelector's predicate: the fixed matrix, indexed [query][key]."""

    matrix: tuple[tuple[bool, ...], ...]

    def __call__(self, key: int, query: int) -> bool:
        try:
            return self.matrix[query][key]
        except IndexError:
            raise RaspRuntimeError(f"the constant selector has no cell [{query}][{key}]") from None

"""The base of tracr's expressions: annotations (name, encoding), unique ids and labels.

As in tracr, an expression is immutable to its user: `.named(...)`, `.annotated(...)`,
`numerical(...)` and `categorical(...)` return a shallow copy with new annotations (and a new id),
never change the original. Missing annotations come from `DEFAULT_ANNOTATORS` when first read.
Unlike tracr, a default is not stored into the expression: `explicit_name(expr)` tells a name the
program gave from the default one (the compiler labels only given names).
"""

from __future__ import annotations

import abc
import copy
import enum
import functools
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

from rasp.errors import Span
from rasp.tracr.sites import creation_span

Value = None | int | float | str | bool
NumericValue = int | float
SelectorValue = list[list[bool]]
RASPExprT = TypeVar("RASPExprT", bound="RASPExpr")

_NAME_KEY = "name"
_ENCODING_KEY = "encoding"


class Annotator(Protocol):
    def __call__(self, expr: RASPExpr) -> Any:
        """The default value of one annotation of `expr`."""


# Default annotations, computed when first read: DEFAULT_ANNOTATORS["foo"] gives expr.annotations["foo"].
DEFAULT_ANNOTATORS: dict[str, Annotator] = {}


class _Annotations(Mapping[str, Any]):
    """An expression's annotations: the ones given, and defaults computed (and kept) on first read."""

    def __init__(self, expr: RASPExpr, **given: Any) -> None:
        self._expr = expr
        self._given: dict[str, Any] = dict(given)
        self._defaults: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key in self._given:
            return self._given[key]
        if key not in self._defaults:
            if key not in DEFAULT_ANNOTATORS:
                known = sorted(set(self._given) | set(DEFAULT_ANNOTATORS))
                raise KeyError(f"No annotation exists for key '{key}'. Available keys: {known}")
            self._defaults[key] = DEFAULT_ANNOTATORS[key](self._expr)
        return self._defaults[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)

    def given(self, key: str) -> bool:
        return key in self._given


class RASPExpr(abc.ABC):
    """A tracr RASP expression (an s-op or a selector)."""

    _ids = itertools.count(1)
    default_name = "expr"

    def __init__(self) -> None:
        self._annotations = _Annotations(self)
        self.span: Span | None = creation_span()

    @abc.abstractmethod
    def __call__(self, xs: Sequence[Value]) -> Any:
        """Evaluates the expression on input `xs` (tracr's evaluator)."""

    @property
    def annotations(self) -> Mapping[str, Any]:
        return self._annotations

    @annotations.setter
    def annotations(self, annotations: Mapping[str, Any]) -> None:
        self._annotations = _Annotations(self, **annotations)

    @property
    def name(self) -> str:
        return self.annotations[_NAME_KEY]

    @property
    @abc.abstractmethod
    def children(self) -> Sequence[RASPExpr]:
        """The direct dependencies of this expression."""

    @functools.cached_property
    def unique_id(self) -> int:
        return next(self._ids)

    def copy(self) -> Self:
        """A shallow copy with a new id."""
        new = copy.copy(self)
        new.__dict__.pop("unique_id", None)
        return new

    @property
    def label(self) -> str:
        return f"{self.name}_{self.unique_id}"

    def named(self, name: str) -> Self:
        return annotate(self, name=name)

    def annotated(self, **annotations: Any) -> Self:
        return annotate(self, **annotations)

    def _evaluate(self, inputs: Sequence[Any], xs: Sequence[Value]) -> Any:
        """The value on `xs`, given the values of `children` (tracr's semantics)."""
        raise NotImplementedError(f"Evaluation of {self} is not defined.")


def annotate(expr: RASPExprT, **annotations: Any) -> RASPExprT:
    """A copy of `expr` with `annotations` added (replacing any with the same key)."""
    new = expr.copy()
    given = expr.annotations._given if isinstance(expr.annotations, _Annotations) else {}
    new.annotations = {**given, **annotations}
    return new


def explicit_name(expr: RASPExpr) -> str | None:
    """The name the program gave `expr` with `.named(...)`, or None for a default name."""
    ann = expr.annotations
    if isinstance(ann, _Annotations) and ann.given(_NAME_KEY):
        return str(ann[_NAME_KEY])
    return None


def default_name(expr: RASPExpr) -> str:
    return type(expr).default_name


DEFAULT_ANNOTATORS[_NAME_KEY] = default_name


# ------------------------------------------------------------------------------------------------
# Encodings


class Encoding(enum.Enum):
    """How an s-op is encoded in tracr's residual stream. Only numbers may be numerical."""

    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


def numerical(sop: RASPExprT) -> RASPExprT:
    return annotate(sop, encoding=Encoding.NUMERICAL)


def categorical(sop: RASPExprT) -> RASPExprT:
    return annotate(sop, encoding=Encoding.CATEGORICAL)


def get_encoding(sop: RASPExpr) -> Encoding:
    return sop.annotations[_ENCODING_KEY]


def is_numerical(sop: RASPExpr) -> bool:
    return get_encoding(sop) == Encoding.NUMERICAL


def is_categorical(sop: RASPExpr) -> bool:
    return get_encoding(sop) == Encoding.CATEGORICAL


def default_encoding(expr: RASPExpr) -> Encoding:
    if not getattr(expr, "is_sop", False):
        raise TypeError(f"expr {expr} is not a SOp.")
    return Encoding.CATEGORICAL


DEFAULT_ANNOTATORS[_ENCODING_KEY] = default_encoding


# what to do about an expression of DeepMind's own tracr given to this module
FOREIGN_HINT = (
    "build the whole program with `from rasp import tracr as rasp`, or load the unmodified tracr "
    "file with --tracr-compat"
)


def is_foreign(value: object) -> bool:
    """Whether `value` is an object of DeepMind's own tracr (`from tracr.rasp import rasp` beside
    rasp.tracr in one program): its class name alone (`Map`) reads as this module's."""
    return type(value).__module__.split(".")[0] == "tracr"


def type_said(value: object) -> str:
    """`value`'s type for a TypeError; DeepMind tracr's own said as such, with what to do."""
    cls = type(value)
    if not is_foreign(value):
        return cls.__name__
    return (
        f"{cls.__name__} of DeepMind's tracr ({cls.__module__}), not of rasp.tracr: {FOREIGN_HINT}"
    )


def check_callable(f: Callable[..., Any], what: str) -> None:
    if not callable(f) or isinstance(f, RASPExpr):
        raise TypeError(f"{what} must be a Python function, got {type_said(f)}")

"""`compile_sop`'s arguments checked before anything is built: the name, the vocabulary, max_len,
and an s-op whose aggregates' defaults are atoms (every problem found, located at the s-op)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from compiler.blocks import Atom, sort_values
from rasp import sops
from rasp.errors import CompileError, Diagnostic, Source
from rasp.tracr.expr import FOREIGN_HINT, is_foreign
from rasp.values import kind_name


def check_arguments(
    sop: object,
    vocab: Sequence[Atom],
    max_len: int,
    name: str | None,
    *,
    max_params: float | None = None,
    source: object = None,
    flags: dict[str, object] | None = None,
) -> tuple[Atom, ...]:
    """The vocabulary as a tuple (a set given one order, numpy scalars as Python atoms);
    CompileError if `name` is no string (at once), or with every problem of the others.
    `flags`: the keyword switches (`causal`, ...), each a bool: `causal="no"` is truthy."""
    if name is not None and not isinstance(name, str):  # the file's output.name is a string
        raise CompileError([Diagnostic(f"name must be a string, got {name!r}", None)])
    span = getattr(sop, "span", None)
    problems: list[Diagnostic] = []
    if isinstance(vocab, np.ndarray) and vocab.ndim == 1:
        vocab = vocab.tolist()  # numpy scalars -> Python atoms
    tokens: tuple[Atom, ...] = ()
    if isinstance(vocab, (list, tuple, set, frozenset, str)):
        # numpy scalars count as their Python kind, as the runtime reads input tokens
        tokens = tuple(t.item() if isinstance(t, np.generic) else t for t in vocab)
        if isinstance(vocab, (set, frozenset)):  # tracr passes sets: give them one order
            tokens = sort_values(tokens)
        if not tokens:
            problems.append(
                Diagnostic("the vocabulary is empty", span, "give at least one input token")
            )
    else:
        problems.append(
            Diagnostic(
                "the vocabulary must be a list, tuple, set or str of tokens, "
                f"got {type(vocab).__name__}",
                span,
            )
        )
    bad = [t for t in tokens if not isinstance(t, (bool, int, float, str))]
    if bad:
        problems.append(Diagnostic(f"vocabulary tokens must be atoms, got {bad[0]!r}", span))
    # a model file's metadata is JSON, which has no NaN or infinity (saving failed on them)
    infinite = [t for t in tokens if isinstance(t, float) and not math.isfinite(t)]
    if infinite:
        problems.append(
            Diagnostic(f"vocabulary tokens must be finite numbers, got {infinite[0]!r}", span)
        )
    keys = [(type(t).__name__, t) for t in tokens if isinstance(t, (bool, int, float, str))]
    if len(set(keys)) != len(keys):
        problems.append(
            Diagnostic("the vocabulary lists a token twice", span, "list each token once")
        )
    if isinstance(max_len, bool) or not isinstance(max_len, int) or max_len < 1:
        problems.append(Diagnostic(f"max_len must be an integer >= 1, got {max_len!r}", span))
    if max_params is not None and (
        isinstance(max_params, bool)
        or not isinstance(max_params, numbers.Real)
        or not max_params >= 1
    ):
        problems.append(
            Diagnostic(
                "max_params must be a number of parameters >= 1, or None for no limit, "
                f"got {max_params!r}",
                None,
            )
        )
    if source is not None and not isinstance(source, Source):  # the file records its text
        problems.append(
            Diagnostic(
                "source must be a rasp.errors.Source (the program's name and text) or None, "
                f"got {type(source).__name__}",
                None,
            )
        )
    for flag, value in (flags or {}).items():
        if not isinstance(value, bool | np.bool_):
            problems.append(Diagnostic(f"{flag} must be True or False, got {value!r}", None))
    if not isinstance(sop, sops.Node):
        problems.append(
            Diagnostic(f"expected an s-op to compile, got {type(sop).__name__}", None)
            if not is_foreign(sop)
            else Diagnostic(
                f"expected an s-op to compile, got DeepMind tracr's {type(sop).__name__} "
                f"({type(sop).__module__}), not rasp.tracr's",
                None,
                FOREIGN_HINT,
            )
        )
    else:
        problems += _defaults_not_atoms(sop)
    if problems:
        raise CompileError(problems)
    return tokens


def _defaults_not_atoms(sop: sops.Node) -> list[Diagnostic]:
    """An aggregate whose default is a list, dict or function: the interpreter accepts it, as the
    original does, and fails only where the default is used; a model's values are atoms."""
    problems = []
    for node in sops.walk(sop):
        default = getattr(node, "default", 0) if isinstance(node, sops.AggregateSOp) else 0
        if default is not None and not isinstance(default, (bool, int, float, str)):
            problems.append(
                Diagnostic(
                    f"this aggregate's default is a {kind_name(default)}, not an atom",
                    node.span,
                    "a compiled model computes atoms: give the aggregate an atom default",
                )
            )
    return problems

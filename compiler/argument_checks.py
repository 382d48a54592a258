"""`compile_sop`'s arguments checked before anything is built: the name, the vocabulary, max_len,
and an s-op whose aggregates' defaults are atoms (every problem found, located at the s-op)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from compiler.blocks import Atom, sort_values
from rasp import sops
from rasp.errors import CompileError, Diagnostic
from rasp.values import kind_name


def check_arguments(
    sop: object, vocab: Sequence[Atom], max_len: int, name: str | None
) -> tuple[Atom, ...]:
    """The vocabulary as a tuple (a set given one order); CompileError if `name` is no string
    (at once), or with every problem of the others."""
    if name is not None and not isinstance(name, str):  # the file's output.name is a string
        raise CompileError([Diagnostic(f"name must be a string, got {name!r}", None)])
    span = getattr(sop, "span", None)
    problems: list[Diagnostic] = []
    if isinstance(vocab, (set, frozenset)):  # tracr passes sets: give them one order
        vocab = sort_values(vocab)
    tokens = tuple(vocab) if isinstance(vocab, (list, tuple, set, frozenset, str)) else ()
    if not tokens:
        problems.append(
            Diagnostic("the vocabulary is empty", span, "give at least one input token")
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
    if not isinstance(sop, sops.Node):
        problems.append(Diagnostic(f"expected an s-op to compile, got {type(sop).__name__}", None))
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

"""After a compile: does the program itself fail on some of the inputs its model accepts?

A compiled model accepts every input of 1..N tokens of its vocabulary, but where the interpreter
raises an error (`10 / (indices - 2)` at position 2, `{"a": 1}[tokens]` on a "b", several strings
averaged) the program has no output, so the model's is not defined there: `rasp verify` skips such
inputs. The compiler does not say so (its value analysis only drops what fails), and a user who
runs the model on such an input sees numbers. `probe_warnings` evaluates the program on a small,
fixed set of inputs (every input up to a short length, then seeded samples up to N) so that
`rasp compile` and the REPL's `:compile` can warn. It is a probe, not a proof: an input that fails
and is not among those tried goes unreported, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rasp.call_names import call_chain
from rasp.errors import Diagnostic, RaspError
from rasp.sops import Evaluator, Node, walk
from rasp.tools.verify import default_exhaustive_len, plan_inputs
from rasp.tools.verify_text import show_tokens
from rasp.wording import atom_text

PROBE_EXHAUSTIVE = 200  # every input up to the longest length whose count stays within this
PROBE_SAMPLES = 40  # then seeded random inputs of the longer lengths
PROBE_SEED = 0


@dataclass(frozen=True)
class Failures:
    """How many of the probed inputs the program fails on, and the first of them."""

    failed: int
    probed: int
    example: tuple[Any, ...]
    error: RaspError

    def warning(self) -> str:
        where = self.error.span
        at = f"{where.file}:{where.line}:{where.col}: " if where is not None else ""
        # inside a def (the prelude's too): also the program's own call, as a refusal's notes say
        calls = self.error.calls or (where.calls if where is not None else ())
        called = f" {call_chain(calls)}" if calls else ""  # down to the program's own call
        return (
            f"the program fails on {self.failed:,} of the {self.probed:,} inputs tried (e.g. "
            f"{show_tokens(self.example)}: {at}{self.error.message}{called}); the model accepts "
            "such inputs, but its output on them is not defined (rasp verify skips them)"
        )


def probe_warnings(
    program: Node,
    vocab: Sequence[Any],
    max_len: int,
    name: str,
    warned: Sequence[Diagnostic] = (),
) -> list[str]:
    """What `rasp compile` and `:compile` warn of: the inputs the program fails on, and an output
    that is one value everywhere (a vocabulary without the token the program looks for, `--vocab
    bc` for a count of "a"s, compiled silently to a model of no head). `warned`: the program's
    precedence warnings (rasp.lint) shown before; one of an expression the output reads is named
    as the likely cause of a constant (`0 < x < 3` is `(0 < x) < 3`, a bool below 3: True)."""
    failures, constant, probed = _probe(program, vocab, max_len)
    warnings = [] if failures is None else [failures.warning()]
    if failures is None and constant is not None and probed > 1:  # (else failures explain it)
        cause = _read_warning(program, warned)
        why = (
            "(does the vocabulary hold the tokens the program looks for?)"
            if cause is None
            else f"likely because of the warning at {cause}"
        )
        warnings.append(
            f"the output `{name}` is {constant[1]} at every position of all {probed:,} inputs "
            f"tried: the model computes a constant{' ' if cause is None else ', '}{why}"
        )
    return warnings


def _read_warning(program: Node, warned: Sequence[Diagnostic]) -> str | None:
    """The first of `warned` located at an expression `program` reads (a node of its graph has
    that span, in the same text: a REPL's statements each start at line 1), as `FILE:LINE:COL
    (its message)`; None where none is."""
    spans = {
        (id(n.span.source), n.span.line, n.span.col, n.span.end_line, n.span.end_col)
        for n in walk(program)
        if n.span is not None
    }
    for warning in warned:
        span = warning.span
        if (
            warning.severity == "warning"
            and span is not None
            and ((id(span.source), span.line, span.col, span.end_line, span.end_col) in spans)
        ):
            return f"{span.location()} ({warning.message})"
    return None


def _probe(
    program: Node, vocab: Sequence[Any], max_len: int
) -> tuple[Failures | None, tuple[str, str] | None, int]:
    """The failures, the one output value seen (its type and text) where there is one, and how
    many inputs gave an output."""
    k = default_exhaustive_len(len(vocab), max_len, PROBE_EXHAUSTIVE)
    plan = plan_inputs(vocab, max_len, k, PROBE_SAMPLES, PROBE_SEED)
    failed, first = 0, None
    # by type and text: 0, 0.0 and False apart; a string quoted ("a b", "" read as words)
    seen: set[tuple[str, str]] = set()
    for tokens in plan.inputs():
        try:
            values = Evaluator(tokens).value(program)
        except RaspError as err:
            failed += 1
            if first is None:
                first = (tuple(tokens), err)
            continue
        if len(seen) <= 1:
            seen.update((type(v).__name__, atom_text(v)) for v in getattr(values, "values", ()))
    constant = next(iter(seen)) if len(seen) == 1 else None
    failures = None if first is None else Failures(failed, plan.total, first[0], first[1])
    return failures, constant, plan.total - failed

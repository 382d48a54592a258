"""A build's memo locates a failure's diagnostics at the node that failed and keeps the rest of
each diagnostic (its severity: a `note` of what else was tried stays a note; its kind)."""

from __future__ import annotations

import pytest

from compiler.graph import IRNode, Op
from compiler.model import OverParamLimit
from compiler.plan_state import Memo, Skip
from rasp.errors import CompileError, Diagnostic, ErrorKind, Source, Span

SOURCE = Source("p.rasp", "x = indices;\n")
NODE = IRNode(index=0, op=Op.INDICES, name="x", inputs=(), span=Span(SOURCE, 1, 1, 1, 2), text="x")
FAILED = [
    Diagnostic("a refusal"),
    Diagnostic("also tried: a table", severity="note"),
    Diagnostic("fails at every input", kind=ErrorKind.EVALUATION),
]


def _check(located: list[Diagnostic]) -> None:
    assert [d.span for d in located] == [NODE.span] * 3
    assert [d.severity for d in located] == ["error", "note", "error"]
    assert located[2].kind is ErrorKind.EVALUATION
    assert [d.message for d in located] == [d.message for d in FAILED]


def test_a_refusal_is_located_at_its_node_with_its_severity_and_kind() -> None:
    memo = Memo()

    def fail() -> None:
        raise CompileError(FAILED)

    with pytest.raises(Skip):
        memo.once(("k",), NODE, fail)
    _check(memo.problems)


def test_a_build_over_the_limit_is_located_with_its_severity_and_kind() -> None:
    def over() -> None:
        raise OverParamLimit(FAILED)

    with pytest.raises(OverParamLimit) as caught:
        Memo().once(("k",), NODE, over)
    _check(list(caught.value.diagnostics))

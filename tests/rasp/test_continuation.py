"""`rasp.continuation.Continuation` reads a statement's lines once and answers as
`rasp.parser.is_complete` answers for the whole text, at every line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp.continuation import Continuation
from rasp.parser import is_complete

ROOT = Path(__file__).resolve().parents[2]

STATEMENTS = [
    "x = 1 +\n2 +\n3;",
    "x = 1 +\n2 2\n;",  # an error inside: is_complete says so at once
    "x = select\n(indices, indices, ==);",  # `select\n(` lexes as one token in the whole text
    "x = aggregate\n(select(indices, indices, ==), tokens);",
    "x = len\n(tokens);",
    "x = 1 +\non",  # a keyword at the end: its error waits for more
    "x = 1 +\non\n+ 2;",
    'set example\n"ab"',  # a command's words over lines (`parse` ends the line with ';')
    'y = 1 +\nset example "ab"',
    "full seq display\non",
    "def f(a) {\n  b = a +\n  1;\n  return b;\n}",
    "for i in [1, 2] {\n  x = i;\n}",
    'x = 1 # a comment ; "\n+ 2;',
    'x = "a;b" +\n"c";',
    'x = "a\n";',  # an unterminated string: a lexer error, said by is_complete
    "x = 1 + $\n2;",
    "x = 1;\ny = 2 +\n3; z = 4 +\n5;",
    "x = 1 if\nTrue else\n2;",
    "x = [1,\n2];",
    "x = 1\n",
    "# only a comment\n",
    "x = 1 + \r\n2;",
    "1 +\nreturn 2;",
    "exit",
    'y = 1 +\n2;\nset example "ab"\nz = 3 +\n4;',
    'y = 1 +\n2; x = 1 +\nset example "ab"',
]


def _agree(lines: list[str]) -> None:
    reader = Continuation()
    for end in range(1, len(lines) + 1):
        prefix = lines[:end]
        assert reader.is_complete(prefix) == is_complete("\n".join(prefix)), prefix


def test_a_line_holding_newlines_is_read_as_its_lines() -> None:
    # (`ReplSession.feed` may be given text of several lines; a command on a later one)
    for text in STATEMENTS:
        lines = text.split("\n")
        for cut in range(1, len(lines)):
            joined = ["\n".join(lines[:cut]), "\n".join(lines[cut:])]
            _agree(joined)


@pytest.mark.parametrize("text", STATEMENTS)
def test_each_prefix_is_complete_as_the_whole_text_is(text: str) -> None:
    _agree(text.split("\n"))


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "tests" / "golden" / "repl").glob("*.in"))[:6]
    + sorted((ROOT / "programs").glob("*.rasp"))[:4],
    ids=lambda p: p.name,
)
def test_runs_of_lines_of_real_sessions_agree(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    for start in range(0, len(lines), 4):
        _agree(lines[start : start + 12])

"""The precedence lint (`rasp.lint`): valid RASP that probably means something else is warned
about, never changed.

Each `tests/golden/warnings/NAME.rasp` warns as `NAME.txt` shows (rewrite with `UPDATE_GOLDEN=1`);
the program library, the prelude and the examples of docs/class.md and docs/language.md warn about
nothing; the spelling each hint suggests, and the parenthesised one it says keeps the meaning,
warn about nothing either.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rasp.errors import RaspError, Source
from rasp.interpreter import Interpreter
from rasp.lint import lint
from rasp.parser import parse
from rasp.sops import evaluate

ROOT = Path(__file__).resolve().parents[2]
WARNINGS = ROOT / "tests" / "golden" / "warnings"
CASES = sorted(WARNINGS.glob("*.rasp"))


def warnings_of(text: str, name: str = "t.rasp") -> list[str]:
    return [d.render() for d in lint(parse(Source(name, text)).statements)]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_rendered_warning(path: Path, golden: Callable[[Path, str], None]) -> None:
    found = lint(parse(Source(path.name, path.read_text(encoding="utf-8"))).statements)
    assert found, f"{path.name} warns about nothing"
    assert all(d.severity in ("warning", "note") and d.span is not None for d in found)
    golden(path.with_suffix(".txt"), "\n".join(d.render() for d in found) + "\n")


TRAPS = [
    'not tokens == "b"',
    'not tokens != "b"',
    "not indices < 2",
    "not indices + 1",
    "not tokens in [1]",
    'tokens == "a" or "b"',
    "indices == 1 or 2",
    'tokens != "a" and "b"',
    '"b" or tokens == "a"',
    "indices < 1 and 0",
    "not tokens or -1",
    "a or b and c",
    "a < b < c",
    "a == b != c",
    "x == 1 in xs",
    "a in b in c",
    "x in xs == y",
    "a % b * c",
    "a % b / c",
    "2 ^ 3 ^ 2",
    "-x ^ 2",
    "not x ^ 2",
    "a if b else c if d else e",
    "a and b in c",
    "x in xs and y",
    "x in xs or y",
    "x in xs if c else d",
    "a if c else b in l",
    "a and not b in c",
]


@pytest.mark.parametrize("text", TRAPS)
def test_each_trap_warns_and_its_spellings_do_not(text: str) -> None:
    (warning,) = lint(parse(f"y = {text};").statements)
    meant, kept = _spellings(warning.hint or "")
    for spelling in (*meant, kept):
        assert not warnings_of(f"y = {spelling};"), f"{text}: {spelling} warns too"
    # what keeps the meaning is the grouping the parser gave, written out
    assert _grouping(kept) == _grouping(text)


def _spellings(hint: str) -> tuple[list[str], str]:
    """The spellings a hint suggests (`write X (or Y)`), and the one that keeps the meaning."""
    suggestion, kept = re.fullmatch(
        r"(.*); (.*) keeps this meaning without the warning", hint
    ).groups()
    written = re.fullmatch(r"write (.*?)(?: \(or (.*)\))?(?: to choose .*)?", suggestion)
    return ([] if written is None else [s for s in written.groups() if s]), kept


def _grouping(text: str) -> str:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_parser import show

    return show(parse(f"y = {text};").statements[0].values[0])


QUIET = [
    "a and b or c",  # the same in Python
    "not a and b",
    "not a or b",
    "a if not b else c",
    "a + b in l",
    "-x * y",
    "-x % y",
    "a * b % c",
    "a - b - c",
    "a ^ -b",
    "x and y if c else z",
    "3 and 4",  # atoms: Python's meaning, documented
    'x or "default"',  # a name may be an atom: a default, not a condition
    'n == 0 and "none" or "some"',  # Python's conditional before it had one
    "(not tokens) == 1",  # parentheses say it is meant
    "not (tokens == 1)",
    "(a or b) and c",
    "(a < b) < c",
    "(x == 1) in xs",
    "a % (b * c)",
    "(2 ^ 3) ^ 2",
    "(-x) ^ 2",
    "(a if b else c) if d else e",
    "(a and b) in c",
    "x in (xs and y)",
    "x in (xs if c else d)",
    "indices == 1 or (2)",
    'tokens in ["a", "b"]',
    "[x for x in xs]",  # a comprehension's `in` is no operator
    "select(tokens, tokens, ==) and select(indices, 0, ==)",
    "( not # a comment with ( and )\n tokens) == 1",
]


@pytest.mark.parametrize("text", QUIET)
def test_no_warning_where_python_reads_it_the_same_or_parentheses_say_so(text: str) -> None:
    assert warnings_of(f"y = {text};") == []


def test_a_warned_program_still_means_what_the_original_says() -> None:
    """`not tokens == "b"` is `(not tokens) == "b"`, False everywhere, as the original computes it:
    the lint reads the tree and changes nothing."""
    program = parse('y = not tokens == "b";\nz = tokens == "a" or "b";')
    assert len(lint(program.statements)) == 2
    interp = Interpreter()
    interp.exec_program(program)
    assert list(evaluate(interp.get("y"), list("abc")).values) == [False] * 3
    assert list(evaluate(interp.get("z"), list("abc")).values) == [True] * 3


def test_a_deep_expression_lints_without_recursion() -> None:
    text = "y = " + " + ".join(["indices"] * 5000) + " < 1 < 2;"
    limit = sys.getrecursionlimit()
    assert len(lint(parse(text).statements)) == 1
    assert sys.getrecursionlimit() == limit
    chain = " or ".join(["indices == 1"] * 5000) + ' or "b"'  # (each link asks what is beside it)
    assert len(lint(parse(f"y = {chain};").statements)) == 1
    literals = " or ".join(["1"] * 5000) + " or indices == 1"
    assert lint(parse(f"y = {literals};").statements) == ()


def test_the_library_lints_clean() -> None:
    files = [*sorted((ROOT / "programs").glob("*.rasp")), ROOT / "rasp" / "prelude.rasp"]
    assert len(files) > 10
    for path in files:
        assert warnings_of(path.read_text(encoding="utf-8"), str(path)) == [], path


def _doc_programs(path: Path) -> list[tuple[str, str]]:
    """(where, text) of each program in a doc: `rasp` blocks, `<!-- file: X.rasp -->` blocks,
    and each statement typed into a REPL transcript (`>> `, `.. `)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from doc_examples import blocks

    found = []
    for block in blocks(path):
        if block.language == "rasp" or block.marks.get("file", "").endswith(".rasp"):
            if "warns" not in block.marks:
                found.append((block.where, block.text))
        elif block.language == "console" and block.text.startswith(">> "):
            typed: list[str] = []
            for line in block.text.splitlines():
                if line.startswith(">> ") and typed:
                    found.append((block.where, "\n".join(typed)))
                    typed = []
                if line.startswith((">> ", ".. ")):
                    typed.append(line[3:])
            if typed:
                found.append((block.where, "\n".join(typed)))
    return found


@pytest.mark.parametrize("doc", ["class.md", "language.md"])
def test_the_docs_examples_lint_clean(doc: str) -> None:
    programs = _doc_programs(ROOT / "docs" / doc)
    assert programs
    for where, text in programs:
        try:
            statements = parse(Source(where, text)).statements
        except RaspError:
            continue  # an example of an error, or a REPL command
        assert [d.render() for d in lint(statements)] == [], where

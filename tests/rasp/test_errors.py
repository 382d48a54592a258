"""Golden files of rendered errors: each `tests/golden/errors/NAME.rasp` fails as `NAME.txt` shows.

A program whose first line is `# input: JSON` is also evaluated (its last assigned name) on that
input, for errors that only an input reveals. Rewrite the goldens with `UPDATE_GOLDEN=1`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rasp.errors import RaspError, RaspSyntaxError
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.sops import evaluate

ERRORS = Path(__file__).parent.parent / "golden" / "errors"
CASES = sorted(ERRORS.glob("*.rasp"))


def run_until_error(path: Path) -> RaspError:
    text = path.read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    try:
        interpreter = Interpreter()
        interpreter.exec_program(parse(text, path.name))
        if first.startswith("# input:"):
            name = interpreter.last_assigned
            assert name is not None, f"{path.name} assigns nothing to evaluate"
            evaluate(interpreter.get(name), json.loads(first.removeprefix("# input:")))
    except RaspError as exc:
        return exc
    pytest.fail(f"{path.name} ran without an error")


def test_there_is_a_golden_for_every_kind() -> None:
    names = {p.stem for p in CASES}
    assert {
        "unknown_name",
        "arity",
        "average_strings",
        "missing_dict_key",
        "division_by_zero",
    } <= names
    assert {"mixed_types", "wrong_kind_selector", "reserved_name"} <= names
    assert sum(n.startswith("syntax_") for n in names) >= 6


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_rendered_error(path: Path, golden: Callable[[Path, str], None]) -> None:
    error = run_until_error(path)
    rendered = error.render()
    assert rendered.startswith(f"{path.name}:"), "every error is located in the file"
    assert "Traceback" not in rendered and "$END" not in rendered
    golden(path.with_suffix(".txt"), rendered + "\n")


def test_incomplete_only_at_the_end() -> None:
    unclosed = run_until_error(ERRORS / "syntax_unclosed_def.rasp")
    assert isinstance(unclosed, RaspSyntaxError) and unclosed.incomplete
    missing = run_until_error(ERRORS / "syntax_missing_semicolon.rasp")
    assert isinstance(missing, RaspSyntaxError) and not missing.incomplete


def test_caret_lines_up_under_tab_indented_source() -> None:
    text = "def f(x) {\n\treturn x + nope;\n}\ny = f(1);\n"
    with pytest.raises(RaspError) as info:
        Interpreter().exec_program(parse(text, "tabs.rasp"))
    lines = info.value.render().splitlines()
    assert lines[1] == "    \treturn x + nope;"
    assert lines[2] == "    \t           ^~~~"

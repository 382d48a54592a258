"""Generated programs (rasp_gen) run in our REPL and in the original's, statement by statement.

Each statement is preceded by a marker statement (`"@@i:j";`, which both print as a value), so
that the two outputs, normalized as in test_original_sessions, split into one chunk per statement
and a divergence is located. Many programs share one original process (it starts slowly).

`python tests/compat/gen_diff.py SEED COUNT [LENGTH]` (with RASP_ORIGINAL set) prints the divergences.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rasp.errors import RaspError
from rasp.expressions import Expressions
from rasp.nodes import Selector, SOp
from rasp.tools.repl import ReplSession
from tests.compat.rasp_gen import Program, generate
from tests.compat.rasp_gen_layout import code
from tests.compat.test_original_sessions import original_lines, our_lines, run_original

_OUR_ERROR = re.compile(r"^\S+:\d+:\d+: error: ", re.MULTILINE)  # (after any warnings)
_MARKER = re.compile(r'^\s*value: out =  "@@(\d+):(\d+)"$')
# an s-op's or selector's label: unnamed ones are shown by expression here (section 7)
_LABEL = re.compile(r"^(.*(?:s-op|selector): ).*$")
_COMPLEX = re.compile(r"value: \w+ =  \(-?[\d.e+-]+[+-][\d.e+-]+j\)$")
_EXAMPLE = re.compile(r"^(\s*Example: ).*(\([^()]*\) = .*)$")


@dataclass(frozen=True)
class Divergence:
    program: int
    statement: int
    source: str
    ours: tuple[str, ...]
    original: tuple[str, ...]


def session_text(programs: list[Program]) -> str:
    lines: list[str] = []
    for i, program in enumerate(programs):
        # (a program may change the display settings: each starts from the defaults; and it may
        # bind `tokens` to anything, which the original allows: a silent loop binds it back, so
        # that a program means what it means alone, as made_sop_fails and the others replay it)
        lines += ["full seq display off", "examples on", f"set example {program.example}"]
        lines.append("for gd_reset in [tokens_str] { tokens = gd_reset; }")
        for j, statement in enumerate(program.statements):
            lines += [f'"@@{i}:{j}";', statement]
    return "\n".join(lines) + "\n"


def _normalize(line: str, keep_labels: bool = False) -> str:
    if keep_labels:
        return line
    line = _LABEL.sub(r"\1_", line)
    return _EXAMPLE.sub(r"\1_\2", line)


_NAME = re.compile(r"[A-Za-z_]\w*")
# an input keeps its name when assigned here (docs/language.md, section 5); the original cuts
# a name past 30 characters to `s-op` or `sel` (section 7)
_KEPT_NAMES = re.compile(r"tokens|tokens_\w+|indices|length")


def _label(line: str) -> tuple[str, str] | None:
    """A label line's text before the label, and the label (an s-op's or selector's, or the
    name an `Example:` line applies)."""
    found = _LABEL.match(line)
    if found:
        return found[1], line[len(found[1]) :]
    found = _EXAMPLE.match(line)
    if found:
        return found[1] + found[2], line[len(found[1]) : len(line) - len(found[2])]
    return None


def labels_differ(ours: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Whether a named s-op or selector is shown by another name there (both labels names):
    an unnamed one is shown by its expression here, differently there (section 7), so a label
    that is no name on either side is not compared. The loose comparison had hidden every label,
    the names the original's assignment gives an s-op (`b = a;` renames a) among them."""
    for a, b in zip(ours, theirs, strict=True):
        if a == b:
            continue
        la, lb = _label(a), _label(b)
        if la is None or lb is None or la[0] != lb[0]:
            continue  # (the loose comparison found them equal: another label form)
        if not (_NAME.fullmatch(la[1]) and _NAME.fullmatch(lb[1])):
            continue
        if _KEPT_NAMES.fullmatch(la[1]) or lb[1] == "sel" or len(la[1]) > 30:
            continue
        return True
    return False


def _long_tokens(example: str) -> bool:
    return example.startswith("[") and any(len(t.strip(' "')) > 1 for t in example[1:-1].split(","))


def chunks(
    lines: list[str], programs: list[Program], keep_labels: bool = False
) -> dict[tuple[int, int], tuple[str, ...]]:
    """The output of each statement, keyed by (program, statement); s-op and selector labels
    replaced by `_` unless `keep_labels`."""
    out: dict[tuple[int, int], list[str]] = {}
    current: list[str] | None = None
    long_tokens = False
    for line in lines:
        found = _MARKER.match(line)
        if found:
            current = out.setdefault((int(found[1]), int(found[2])), [])
            program = programs[int(found[1])]
            applied = re.search(r"\((\[.*\])\);$", program.statements[int(found[2])])
            long_tokens = _long_tokens(selector_example(program, int(found[2]))) or bool(
                applied and _long_tokens(applied[1])
            )
        elif current is not None:
            line = _normalize(line, keep_labels)
            if long_tokens and "\t\t\t" in line and "=" not in line:
                line = "".join(line.split())  # grids are aligned for long tokens here (section 7)
            current.append(line)
    return {k: tuple(v) for k, v in out.items()}


def selector_example(program: Program, statement: int, which: str = "selector") -> str:
    """The selector example (or `which`: the s-op example) in force at `statement`: a `set
    example` that fails (`set example hello`, an unbound name, in both) leaves it as it was
    (seed 951801: the grid of `[-2, 7, 0]`, aligned for long tokens, read as one of "hello")."""
    example = program.example
    for k, line in enumerate(map(code, program.statements[:statement])):
        if line.startswith((f"set {which} example ", "set example ")) and not _fails(program, k):
            example = line.split(" example ", 1)[1]
    return example


@functools.cache
def _fails(program: Program, statement: int) -> bool:
    """Whether the statement reports an error here (after the program's statements before it)."""
    return bool(_our_error(program, statement))


def _documented(
    program: Program, statement: int, ours: tuple[str, ...], theirs: tuple[str, ...]
) -> bool:
    """Whether a divergence is one that docs/language.md (section 7) lists."""
    if ours == ("ERR",) and "ERR" not in theirs:
        if over_a_limit(program, statement) or complex_power(program, statement):
            return True
    if ours[-1:] == theirs[-1:] == ("ERR",) and made_sop_fails(program, statement):
        # both fail, after printing different lines: the original stops at a body's failing s-op,
        # before the loads the body runs after it list their names (rasp_gen_scope)
        return True
    if theirs == ("ERR",) and ours != ("ERR",):
        if sub_expression_fails(program, statement) or made_sop_fails(program, statement):
            return True
        if _dict_indexed_by_position(program, statement):
            return True
    elif "ERR" in theirs and "ERR" not in ours and _dict_indexed_by_position(program, statement):
        return True
    if _without_input_rows(ours) == _without_input_rows(theirs) and any(
        line.startswith(("set s-op example ", "set selector example "))
        for line in program.statements[:statement]
    ):
        return True  # the original's `full seq display` input row shows the selector example
    if theirs == ("ERR",) and any("selector: " in line for line in ours):
        # tested on the selector example here, on the s-op example there, where it fails
        # (after `set s-op example`, too, the two differ: seed 2000934)
        return selector_example(program, statement) != selector_example(program, statement, "s-op")
    if ours != ("ERR",):
        return False
    # a selector is tested on the selector example here, on the s-op example there: there it is
    # bound, and fails to show on the selector example; `^` with a complex result is an error here
    # (one of several values bound at once, `a, b = f(s);`, may be the selector)
    shown_selector = any("selector: " in line for line in theirs)
    return any(
        _COMPLEX.search(line)
        or (shown_selector and ("fails on evaluation" in line or "evaluation failed in" in line))
        for line in theirs
    )


def _dict_indexed_by_position(program: Program, statement: int) -> bool:
    """An s-op applied to a dict, where the original indexes the dict by position (`something
    went wrong: 0`): tokens_asis in an operation keeps the dict, and the full seq display's
    input row reads it so (section 7)."""
    text = code(program.statements[statement])
    if not re.search(r"\(\{.*\}\);$", text):
        return False
    before = [*program.statements[: statement + 1]]
    before += [line for typed in before for line in _loaded_lines(code(typed))]
    return any("tokens_asis" in line or code(line) == "full seq display on" for line in before)


def _loaded_lines(text: str, depth: int = 0) -> list[str]:
    """The lines of the files a statement loads by full path (rasp_gen_files), and of the
    files they load: a file's `full seq display on` acts on the session (seed 2000924)."""
    lines: list[str] = []
    for path in re.findall(r'load "(/[^"]*)"', text):
        file = Path(path + ".rasp")
        if file.is_file() and depth < 5:
            for line in file.read_text(encoding="utf-8").splitlines():
                lines += [line, *_loaded_lines(line, depth + 1)]
    return lines


def _without_input_rows(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The lines without the full seq display's input row; the output row is aligned with it.
    (`input:` without its space: `chunks` squashes a grid's rows for long tokens, seed 2001019.)"""
    return tuple(
        " ".join(line.split()) if line.strip().startswith("output:") else line
        for line in lines
        if not line.strip().startswith("input:")
    )


def _arguments(text: str) -> list[str]:
    """The text of each comma-separated part inside each pair of brackets of `text`."""
    parts: list[str] = []
    stack: list[tuple[int, list[int]]] = []  # (opening position, top-level comma positions)
    in_string = False
    for i, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif ch in "([{":
            stack.append((i, []))
        elif ch in ")]}" and stack:
            start, commas = stack.pop()
            bounds = [start, *commas, i]
            parts += [text[a + 1 : b].strip() for a, b in zip(bounds, bounds[1:], strict=False)]
        elif ch == "," and stack:
            stack[-1][1].append(i)
    return [p for p in parts if p and " for " not in f" {p} "]


def sub_expression_fails(program: Program, statement: int) -> bool:
    """Whether a part of the statement fails here on the running example (docs/language.md,
    section 7: the original tests every sub-expression, so it fails where we drop that part)."""
    session = ReplSession()
    session.feed(f"set example {program.example}")
    for line in program.statements[:statement]:
        session.feed(code(line))
    text = code(program.statements[statement])
    if text.startswith("def "):
        return False
    if text.startswith("for "):  # its iterable
        text = "(" + text.split(" in ", 1)[1].rsplit(" { ", 1)[0] + ")"
    text = text.split(" = ", 1)[-1] if re.match(r"^\w+(, \w+)* = ", text) else text
    for part in _arguments(text.rstrip(";")):
        if part.startswith(("def ", "for ")):
            continue
        if ": " in part:  # a dict's entry: its value
            part = part.split(": ", 1)[1]
        printed = session.feed(f"{part};")
        # an s-op's or selector's failure on the example, not an atom's (which both evaluate)
        if _OUR_ERROR.search(printed) and "fails on the running example" in printed:
            return True
    return False


def made_sop_fails(program: Program, statement: int) -> bool:
    """Whether an s-op that the statement makes anywhere, a called function's body included,
    fails here on the running example (docs/language.md, section 7: the original tests the value
    of every sub-expression as it computes it, so it fails where we drop that s-op). The words
    of a body do not tell it: `def f(a) { b = a % "b"; return 3; }` makes a failing s-op of its
    parameter when called on one (seed 951074). A selector made and dropped counts too, tested on
    the s-op example as there (seed 951431: `f(select(tokens, indices >= 1, >=), 1)` of a body that
    returns 0.0 fails there, comparing strings with bools)."""
    session = ReplSession()
    session.feed(f"set example {program.example}")
    for line in program.statements[:statement]:
        session.feed(code(line))
    made: list[SOp | Selector] = []
    evaluate = Expressions._eval

    def recording(self: Expressions, expr: Any, scope: Any) -> Any:
        value = evaluate(self, expr, scope)
        if isinstance(value, SOp | Selector):
            made.append(value)
        return value

    with patch.object(Expressions, "_eval", recording):
        session.feed(code(program.statements[statement]))
    for node in made:
        try:
            session._example_check.evaluate(node, session.settings.seq_example)
        except RaspError:
            return True
    return False


_LIMIT = re.compile(r"longer than \d+ items|is too large a number")


def _our_error(program: Program, statement: int) -> str:
    """The first line of the error the statement reports here, or "" if none."""
    session = ReplSession()
    session.feed(f"set example {program.example}")
    for line in program.statements[:statement]:
        session.feed(code(line))
    printed = session.feed(code(program.statements[statement]))
    error = _OUR_ERROR.search(printed)  # (after any warnings)
    return printed[error.start() :].splitlines()[0] if error else ""


def over_a_limit(program: Program, statement: int) -> bool:
    """Whether the statement fails here on a limit docs/language.md (section 6) sets and the
    original lacks: ranges and repeated lists or strings of at most 100,000 items, `^` of at most
    100,000 bits (`tokens * n` in a loop passes it at some position)."""
    return bool(_LIMIT.search(_our_error(program, statement)))


def complex_power(program: Program, statement: int) -> bool:
    """Whether the statement fails here on a `^` with a complex result, which the original
    computes (docs/language.md, section 7): its value may be dropped there, never shown, as in
    seed 951500's `++3 or -len([1, 2]) ^ 0.5` (3 there, the complex number being the dropped
    right side of `or`), so the original's output need not show it."""
    return _our_error(program, statement).endswith("is not a real number")


def compare(programs: list[Program], original_stdout: str) -> tuple[list[Divergence], int]:
    """The divergences, and how many more were the documented sub-expression difference."""
    text = session_text(programs)
    our_text, their_text = our_lines(text), original_lines(original_stdout)
    ours, theirs = chunks(our_text, programs), chunks(their_text, programs)
    ours_named = chunks(our_text, programs, keep_labels=True)
    theirs_named = chunks(their_text, programs, keep_labels=True)
    found = []
    documented = 0
    broken: set[int] = set()  # a program whose statement diverged: its later ones may follow
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key, ("<missing>",)), theirs.get(key, ("<missing>",))
        if a == b:
            a, b = ours_named.get(key, a), theirs_named.get(key, b)
            if key[0] not in broken and labels_differ(a, b):
                broken.add(key[0])
                program = programs[key[0]]
                found.append(Divergence(key[0], key[1], program.statements[key[1]], a, b))
            continue
        program = programs[key[0]]
        if key[0] in broken or _documented(program, key[1], a, b):
            documented += 1
            broken.add(key[0])
            continue
        found.append(Divergence(key[0], key[1], program.statements[key[1]], a, b))
    # the statements after the last that printed its marker on either side ran on neither (both
    # sessions ended early: `quit` alone on a line): compared with nothing, they are reported once,
    # so that a cut batch never passes for a clean one. (A marker missing in the middle was read
    # as part of the statement before it, on both sides, whose chunk holds its output.)
    last = max(set(ours) | set(theirs), default=(-1, -1))
    never = [
        (i, j)
        for i, program in enumerate(programs)
        for j in range(len(program.statements))
        if (i, j) > last
    ]
    if never:
        i, j = never[0]
        lost = ("<never ran>", f"{len(never)} statements")
        found.append(Divergence(i, j, programs[i].statements[j], lost, lost))
    return found, documented


def original_output(programs: list[Program]) -> str:
    checkout = os.environ["RASP_ORIGINAL"]
    return run_original(Path(checkout), session_text(programs))


def _report(programs: list[Program], d: Divergence) -> str:
    program = programs[d.program]
    head = [f"set example {program.example}", *program.statements[: d.statement + 1]]
    return "\n".join(
        [
            f"--- program {d.program} statement {d.statement}: {d.source}",
            *("  | " + s for s in head),
            "  ours: " + " / ".join(d.ours),
            "  orig: " + " / ".join(d.original),
        ]
    )


USAGE = (
    "usage: python tests/compat/gen_diff.py SEED COUNT [LENGTH]\n"
    "set RASP_ORIGINAL to a checkout of tech-srl/RASP (the directory holding RASP_support) and\n"
    "RASP_ORIGINAL_PYTHON to a Python that runs it (antlr4-python3-runtime==4.9.1, termcolor)"
)


def usage_error(argv: list[str]) -> str:
    """Why this run cannot start ("" if it can): a newcomer typing README's command without the
    original got a KeyError traceback after the batch was generated."""
    if not 2 <= len(argv) <= 3 or not all(a.isdigit() for a in argv):
        return USAGE
    checkout = os.environ.get("RASP_ORIGINAL", "")
    if not checkout or not (Path(checkout) / "RASP_support").is_dir():
        return (
            f"error: RASP_ORIGINAL ({checkout or 'unset'}) is no checkout of the original\n{USAGE}"
        )
    return ""


def main(argv: list[str]) -> int:
    problem = usage_error(argv)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    seed, count = int(argv[0]), int(argv[1])
    programs = generate(seed, count, int(argv[2]) if len(argv) > 2 else 8)
    divergences, documented = compare(programs, original_output(programs))
    for d in divergences:
        print(_report(programs, d))
    print(f"{len(divergences)} divergences in {count} programs ({documented} documented)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""REPL sessions compared with what the original RASP (tech-srl/RASP) printed for them.

`sessions/NAME.rasp` is typed into our REPL a line at a time; `sessions/NAME.orig` is the
original's standard output for the same lines (its REPL reading them piped), recorded. Both are
normalized the same way before they are compared:

- the prompts (`>> `, `.. `) and the banner go, and so does the blank line the original prints at
  the end of its input; our notes and warnings go, with their source, caret and hints;
- an error becomes one line `ERR`: the original's `!!ignoring input:` and the message below it,
  `something went wrong: ...`, `!! antlr exception: ...` and `not implemented this command yet!`;
  ours, the whole located report (`<repl>:1:5: error: ...` with its source, caret and hints),
  except an internal error, which is kept as printed, so that it never passes for an error;
  Messages differ in form (ours are located), so only where an error happens is compared;
- our precedence warnings (`<repl>:1:5: warning: ...`, `rasp.lint`) go: the original has none;
- a library function is `prelude function:` here and `RASP_support/rasplib function:` there, the
  `full seq display` input row gives the input's type here, `(strings)` always there, and a
  dict's atom value is shown with its key here, alone there (docs/language.md, section 7).

Everything else must be the same, character for character: values, type labels, `[v]*n`, float
rounding, T/F, selector grids, the `full seq display` rows, lists and dicts. The sessions keep to
programs where the original and this project mean the same thing, so a line that differs is a
bug (docs/language.md, section 7 lists the deliberate differences, which these sessions avoid).

With `RASP_ORIGINAL` set to a checkout of tech-srl/RASP (the directory holding `RASP_support`,
with `RASP_ORIGINAL_PYTHON` a Python that runs it, default this one), the recordings are also
checked against the original itself; without it that test skips.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rasp.tools.repl import ReplSession

SESSIONS = Path(__file__).parent / "sessions"
NAMES = sorted(p.stem for p in SESSIONS.glob("*.rasp"))

_ORIGINAL_ERROR = ("something went wrong", "!! antlr exception", "not implemented this command")
_OUR_ERROR = re.compile(r"^\S+:\d+:\d+: error: ")
_REPL_ERROR = re.compile(r"^<repl>:\d+:\d+: error: ")  # a typed statement's, not a loaded file's
_SHOWN_EXAMPLE = re.compile(r"^\t(s-op|selector) example: ")
_PROMPT = re.compile(r"^(  )*(>> |\.\. )")  # a '.. ' is indented 2 spaces for each 'def'


def _without_prompts(raw: str) -> str:
    line = raw.rstrip()
    if not raw.startswith((">> ", ".. ")):
        return line
    while _PROMPT.match(line):
        line = _PROMPT.sub("", line, count=1)
    while line.startswith("      "):  # the last prompt's indent, before a display's own 4 or 5
        line = line[2:]
    return line


def original_lines(text: str) -> list[str]:
    """The original's stdout, normalized (see the module docstring)."""
    lines = text.splitlines()[2:]  # the banner: 'RASP 0.1', 'running example is: hello'
    out: list[str] = []
    in_error = False
    for raw in lines:
        line = _without_prompts(raw)
        if in_error and raw.startswith("\t") and not line.strip().startswith("!!"):
            # an error's message lines: tab first, no prompt (output lines start with ' '), but
            # for `show example`'s, which a loaded file may print right after an error
            if not _SHOWN_EXAMPLE.match(raw):
                continue
        in_error = False
        if line.strip() == "!!ignoring input:" or line.strip().startswith(_ORIGINAL_ERROR):
            out.append("ERR")
            in_error = True
        elif line.strip() and line.strip() != ">>":
            out.append(_same_form(line))
    return out


def _same_form(line: str) -> str:
    """The forms docs/language.md (section 7) lists as deliberately different, made one."""
    line = line.replace("RASP_support/rasplib function:", "prelude function:")
    # a dict's atom value is shown with its key here ('\t\t\t "k" :    value:  1'), alone there
    line = re.sub(r"^(\t+) \S.*? :(    value: )", r"\1\2", line)
    # the original's `full seq display` input row always says (strings)
    return re.sub(r"^(\s*input: .*\t )\((\w+)\)$", r"\1(input type)", line)


def our_lines(source: str) -> list[str]:
    """Our REPL's output for each line of `source`, normalized (see the module docstring)."""
    session = ReplSession()
    out: list[str] = []
    for line in [*source.splitlines(), None]:
        printed = session.end_of_input() if line is None else session.feed(line)
        out += _errors_as_err(printed.splitlines())
        if session.finished:
            break
    return out


# a warning is ours alone (the original warns of nothing): dropped as a note is, with its source,
# caret and hints, so that a warning never reads as a divergence
_DIAGNOSTIC = re.compile(r"^(?:\S+:\d+:\d+: (error|note|warning)|(warning)): ")
_CARET = re.compile(r"^    [\t ]*\^~*$")


def _errors_as_err(lines: list[str]) -> list[str]:
    """A statement's printed lines, each located error one `ERR` (its source, caret, hints and
    notes dropped): a loaded file's among the names its load lists, as the original's `!!ignoring
    input:` there. A typed statement's error ends what it printed (a load in a called def lists
    its file's names before it, as the original's does); an internal error is kept as printed:
    it is a bug wherever it is. A precedence warning (`rasp.lint`) goes: the original has none."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        found = _DIAGNOSTIC.match(line)
        i += 1
        if found is None:
            if line.strip():
                out.append(_same_form(line))
            continue
        if ": error: internal error: " in line:
            out.append(line)
        elif found[1] == "error":
            out.append("ERR")
            if _REPL_ERROR.match(line):
                break
        while i < len(lines) and re.match(r"^  \S", lines[i]):  # the message, wrapped
            i += 1
        if i + 1 < len(lines) and _CARET.match(lines[i + 1].rstrip()):
            i += 2  # the source line and its caret
        while i < len(lines) and lines[i].startswith("hint: "):
            i += 1
            while i < len(lines) and re.match(r"^      \S", lines[i]):  # the hint, wrapped
                i += 1
    return out


@pytest.mark.parametrize("name", NAMES)
def test_session_prints_what_the_original_printed(name: str) -> None:
    source = (SESSIONS / f"{name}.rasp").read_text(encoding="utf-8")
    recorded = (SESSIONS / f"{name}.orig").read_text(encoding="utf-8")
    want, got = original_lines(recorded), our_lines(source)
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        assert g == w, f"{name}: line {i + 1} of the normalized output: got {g!r}, want {w!r}"
    assert len(got) == len(want), f"{name}: got {len(got)} lines, want {len(want)}"


def run_original(checkout: Path, source: str) -> str:
    python = os.environ.get("RASP_ORIGINAL_PYTHON", sys.executable)
    done = subprocess.run(
        [python, "-m", "RASP_support"],
        input=source,
        capture_output=True,
        text=True,
        cwd=checkout,  # it reads RASP_support/rasplib.rasp from the working directory
        timeout=300,
        check=False,
    )
    return done.stdout


@pytest.mark.parametrize("name", NAMES)
def test_recording_is_the_originals_output(name: str) -> None:
    checkout = os.environ.get("RASP_ORIGINAL")
    if not checkout or not (Path(checkout) / "RASP_support").is_dir():
        pytest.skip("set RASP_ORIGINAL to a checkout of tech-srl/RASP to run the original")
    source = (SESSIONS / f"{name}.rasp").read_text(encoding="utf-8")
    recorded = (SESSIONS / f"{name}.orig").read_text(encoding="utf-8")
    assert original_lines(run_original(Path(checkout), source)) == original_lines(recorded)


def test_an_internal_error_is_never_normalized_to_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """gen_diff compares only error-or-not: an internal error taken for ERR (`len(range(10 ^
    400))` where the original also fails) would hide a bug."""
    report = "<repl>:1:1: error: internal error: OverflowError: x\n    y;\n    ^"
    monkeypatch.setattr(ReplSession, "feed", lambda self, line: report)
    assert our_lines("y;")[0] == "<repl>:1:1: error: internal error: OverflowError: x"


def test_a_warning_is_dropped_with_its_source_and_hints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The original warns of nothing: a warning of ours (a precedence trap, `not x == y`) with its
    source, caret and hint, located or not, is no line of the comparison; an error still is."""
    report = (
        "<repl>:1:1: warning: `not` binds tighter than `==`\n"
        "    not x == 1;\n"
        "    ^~~\n"
        "hint: write not (x == 1)\n"
        "warning: draw(...) draws only in the REPL\n"
        "     value: out =  False\n"
    )
    monkeypatch.setattr(ReplSession, "feed", lambda self, line: report)
    assert our_lines("not x == 1;") == ["     value: out =  False"]
    monkeypatch.setattr(ReplSession, "feed", lambda self, line: "error: unlocated\n")
    assert our_lines("y;") == ["error: unlocated"]  # an error without a place is a bug


def test_a_loaded_files_error_among_its_names_is_one_err(tmp_path: Path) -> None:
    """The original lists a loaded file's failing statement as `!!ignoring input:` among the
    names (one ERR); ours, located in the file with its source, caret and hints, was compared
    line by line (a generated file's error was a divergence), and a file's error listed first
    made the whole listing one ERR."""
    lib = tmp_path / "lib.rasp"
    lib.write_text('a = 1;\nb = tokens_int + 1;\nc = nosuch;\nd = "s";\n', encoding="utf-8")
    lines = our_lines(f'load "{tmp_path / "lib"}";\nd;\nnosuch;\n')
    assert lines == [
        "    value: a =  1",
        "ERR",
        "ERR",
        '    value: d =  "s"',
        '    value: d =  "s"',
        "ERR",
    ]


def test_a_shown_example_after_a_loaded_files_error_is_no_error_line() -> None:
    """The original's error message lines start with a tab, and so does what `show example`
    prints: after a loaded file's error, they were dropped as the error's (seed 2000910)."""
    recorded = (
        "RASP 0.1\nrunning example is: hello\n"
        ">> \t\t!!ignoring input:\n\t index 5 out of range for list of length 1\n"
        '\ts-op example: "hello"\n\tselector example: "hello"\n     s-op: x\n>> \n'
    )
    assert original_lines(recorded) == [
        "ERR",
        '\ts-op example: "hello"',
        '\tselector example: "hello"',
        "     s-op: x",
    ]

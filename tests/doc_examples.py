"""Executable documentation: the examples in README.md and docs/*.md, run and compared.

A Markdown file is read as a list of fenced blocks, each with the HTML comments right above it:

- ```` ```console ```` with `$ rasp ...` lines: each command runs (as `python -m rasp`, in a
  scratch directory where `programs/` is the repository's), and what it prints on stdout and
  stderr, in order, must be the lines up to the next `$`. A command whose expected output has an
  `error:` line must fail (exit status not 0); any other must succeed. `< FILE` feeds a file to
  standard input. No shell runs: only `rasp` commands.
- ```` ```console ```` starting with `>> `: a REPL session (`rasp.tools.repl.ReplSession`, one per
  file, so later blocks see earlier names), compared as a transcript: `>> ` and `.. ` lines are
  input, the lines after each are what the REPL prints.
- ```` ```pycon ````: a doctest (`>>> ` lines and their outputs), one namespace per file.
- ```` ```python ````: run; it must not raise. One namespace per file, shared with the doctests.
- `<!-- file: NAME -->` above a block: the block's text is written to NAME in the scratch
  directory first (the program an example runs), and the block itself is not run.
- `<!-- not-tested: REASON -->` above a block: skipped, with the reason kept for the report.
- `<!-- needs: MODULE -->` above a block: skipped when the Python module MODULE is not installed
  (an optional extra), unless RASP_REQUIRE_TRANSFORMER_LENS=1 says CI installed it.

In expected output a line holding only `...` stands for any number of lines. Trailing spaces are
ignored. Blocks of other languages (`bash`, `json`, unlabelled) are not run.

`pytest tests/test_docs.py --update-golden` rewrites the output under each `$` command of the
console blocks that have no `...` line from what the program prints (REPL transcripts and doctests
are edited by hand).
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
RUN_LANGUAGES = ("console", "pycon", "python")
_FENCE = re.compile(r"^(`{3,})([\w-]*)\s*$")
_COMMENT = re.compile(r"^<!--\s*([\w-]+)\s*:\s*(.*?)\s*-->\s*$")
_ERROR_LINE = re.compile(r"^(?:\S+:\d+:\d+: |rasp(?: \w+)?: )?error: ")


@dataclass(frozen=True, eq=False)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{shown}:{self.line}"

    @property
    def runs(self) -> bool:
        return (
            self.language in RUN_LANGUAGES
            and "not-tested" not in self.marks
            and "file" not in self.marks
        )


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with the `<!-- key: value -->` comments above each."""
    found: list[Block] = []
    marks: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        comment = _COMMENT.match(line.strip())
        fence = _FENCE.match(line)
        if comment:
            marks[comment.group(1)] = comment.group(2)
        elif fence:
            end = next(
                (j for j in range(index + 1, len(lines)) if lines[j].strip() == fence.group(1)),
                len(lines),
            )
            text = "\n".join(lines[index + 1 : end]) + "\n"
            found.append(Block(path, index + 1, fence.group(2), text, marks))
            marks = {}
            index = end
        elif line.strip():
            marks = {}  # a comment marks only the block right below it
        index += 1
    return found


# ------------------------------------------------------------------------------------------------
# Comparing output


def matches(expected: str, actual: str) -> bool:
    """`actual` equals `expected` line by line (trailing spaces aside); a `...` line in `expected`
    matches any number of lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line.strip() == "..." else re.escape(line.rstrip()) + r"\n"
        for line in expected.splitlines()
    )
    return re.fullmatch(pattern, _normal(actual)) is not None


def _normal(text: str) -> str:
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


# ------------------------------------------------------------------------------------------------
# Running the blocks of one file


@dataclass
class Failure:
    block: Block
    what: str
    expected: str
    actual: str

    def report(self) -> str:
        return (
            f"{self.block.where}: {self.what}\n--- the documentation says:\n{self.expected}"
            f"--- the program prints:\n{_normal(self.actual)}"
        )


class DocRun:
    """Runs the blocks of one Markdown file in order, in one scratch directory."""

    def __init__(self, scratch: Path, *, update: bool = False) -> None:
        self.scratch = scratch
        self.update = update
        self.rewritten: dict[Block, str] = {}  # block -> its text with the outputs printed now
        (scratch / "programs").symlink_to(ROOT / "programs", target_is_directory=True)
        self.namespace: dict[str, Any] = {"__name__": "__docs__"}
        self.session: Any = None
        self.failures: list[Failure] = []
        self.skipped: list[tuple[Block, str]] = []
        self.ran = 0

    def run(self, block: Block) -> None:
        if "not-tested" in block.marks:
            self.skipped.append((block, block.marks["not-tested"]))
            return
        needs = block.marks.get("needs")
        if needs and importlib.util.find_spec(needs) is None and not _required(needs):
            self.skipped.append((block, f"{needs} is not installed"))
            return
        if "file" in block.marks:
            (self.scratch / block.marks["file"]).write_text(block.text, encoding="utf-8")
            return
        if block.language not in RUN_LANGUAGES:
            return
        self.ran += 1
        with _working_directory(self.scratch):
            if block.language == "console" and block.text.lstrip().startswith(">> "):
                self._repl(block)
            elif block.language == "console":
                self._shell(block)
            elif block.language == "pycon":
                self._doctest(block)
            else:
                self._python(block)

    # -- console: `$ rasp ...` ------------------------------------------------------------------

    def _shell(self, block: Block) -> None:
        rewritten = []
        for command, expected in _commands(block):
            code, output = self.command(command)
            rewritten.append(f"$ {command}\n{_normal(output)}")
            if self.update and "..." not in expected.split("\n"):
                continue
            failed = any(_ERROR_LINE.match(line) for line in expected.splitlines())
            if not matches(expected, output):
                self.failures.append(Failure(block, f"$ {command}", expected, output))
            elif (code != 0) != failed:
                what = f"$ {command}: exit status {code}, expected " + (
                    "non-zero" if failed else "0"
                )
                self.failures.append(Failure(block, what, expected, output))
        if self.update:
            self.rewritten[block] = "".join(rewritten)

    def command(self, command: str) -> tuple[int, str]:
        words = shlex.split(command)
        if words[:1] != ["rasp"]:
            raise ValueError(f"only `rasp` commands run in documentation examples: {command}")
        feed = None
        if "<" in words:
            at = words.index("<")
            feed = (self.scratch / words[at + 1]).read_bytes()
            words = words[:at] + words[at + 2 :]
        # The documented outputs are a machine's without a GPU: `rasp verify` adds CUDA runs to its
        # sweep where there is one, so the examples run with CUDA hidden.
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = dict(
            os.environ,
            PYTHONPATH=path,
            PYTHONUNBUFFERED="1",
            COLUMNS="100",
            CUDA_VISIBLE_DEVICES="",
        )
        env.pop("RASP_DEBUG", None)
        done = subprocess.run(
            [sys.executable, "-m", "rasp", *words[1:]],
            cwd=self.scratch,
            env=env,
            input=feed,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=1200,
            check=False,
        )
        return done.returncode, done.stdout.decode("utf-8", errors="replace")

    # -- console: `>> ` REPL transcript ---------------------------------------------------------

    def _repl(self, block: Block) -> None:
        from rasp.tools.repl import ReplSession

        if self.session is None:
            self.session = ReplSession()
        out: list[str] = []
        for line in block.text.splitlines():
            if line.startswith((">> ", ".. ")) or line in (">>", ".."):
                prompt = (
                    self.session.continuation_prompt
                    if self.session.is_continuing
                    else self.session.prompt
                )
                typed = line[3:]
                out.append(prompt + typed)
                with _without_cuda():
                    printed = self.session.feed(typed)
                if printed:
                    out.append(printed)
        actual = "\n".join(out) + "\n"
        if not matches(block.text, actual):
            self.failures.append(Failure(block, "REPL transcript", block.text, actual))

    # -- python ---------------------------------------------------------------------------------

    def _doctest(self, block: Block) -> None:
        parser = doctest.DocTestParser()
        test = parser.get_doctest(
            block.text, self.namespace, block.where, str(block.path), block.line
        )
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        report: list[str] = []
        with _without_cuda():
            runner.run(test, out=report.append, clear_globs=False)
        self.namespace.update(test.globs)  # DocTest ran on a copy; later blocks see its names
        if runner.failures:
            self.failures.append(Failure(block, "doctest", block.text, "".join(report)))

    def _python(self, block: Block) -> None:
        try:
            code = compile(block.text, block.where, "exec")
            exec(code, self.namespace)  # noqa: S102 - the repository's own documentation
        except Exception as exc:  # noqa: BLE001 - any failure of the example is the finding
            self.failures.append(
                Failure(block, f"python raised {type(exc).__name__}: {exc}", block.text, "")
            )


def rewrite(path: Path, rewritten: dict[Block, str]) -> None:
    """Put each block's new text into the Markdown file (`--update-golden`)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for block in sorted(rewritten, key=lambda b: b.line, reverse=True):
        if "\n...\n" in "\n" + block.text:
            continue
        old = block.text.count("\n")
        lines[block.line : block.line + old] = [rewritten[block]]
    path.write_text("".join(lines), encoding="utf-8")


def _required(module: str) -> bool:
    return module == "transformer_lens" and os.environ.get("RASP_REQUIRE_TRANSFORMER_LENS") == "1"


def _commands(block: Block) -> Iterator[tuple[str, str]]:
    """(command, expected output) for each `$ ` line of a console block."""
    command: str | None = None
    expected: list[str] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            if command is not None:
                yield command, "".join(e + "\n" for e in expected)
            command, expected = line[2:], []
        elif command is not None:
            expected.append(line)
    if command is not None:
        yield command, "".join(e + "\n" for e in expected)


@contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextmanager
def _without_cuda() -> Iterator[None]:
    """In this process what CUDA_VISIBLE_DEVICES="" is to the `rasp` commands: the documented
    outputs are a machine's without a GPU."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    with mock.patch("torch.cuda.is_available", return_value=False):
        yield

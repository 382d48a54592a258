"""Generated programs (rasp_gen) run in our REPL and in the original's, statement by statement.

Each statement is preceded by a marker statement (`"@@i:j";`, which both print as a value), so
that the two outputs, normalized as in test_original_sessions, split into one chunk per statement
and a divergence is located. Many programs share one original process (it starts slowly).

`python tests/compat/gen_diff.py SEED COUNT` (with RASP_ORIGINAL set) prints the divergences.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.compat.rasp_gen import Program, generate
from tests.compat.test_original_sessions import original_lines, our_lines, run_original

_MARKER = re.compile(r'^\s*value: out =  "@@(\d+):(\d+)"$')
# an s-op's or selector's label: unnamed ones are shown by expression here (section 7)
_LABEL = re.compile(r"^(\s*(?:s-op|selector|list|dict|value): )\S.*?( =|$)")
_INNER_LABEL = re.compile(r"^(.*\S.*(?:s-op|selector): ).*$")
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
        lines.append(f"set example {program.example}")
        for j, statement in enumerate(program.statements):
            lines += [f'"@@{i}:{j}";', statement]
    return "\n".join(lines) + "\n"


def _normalize(line: str) -> str:
    line = _INNER_LABEL.sub(r"\1_", _LABEL.sub(r"\1_\2", line))
    return _EXAMPLE.sub(r"\1_\2", line)


def chunks(lines: list[str]) -> dict[tuple[int, int], tuple[str, ...]]:
    """The output of each statement, keyed by (program, statement)."""
    out: dict[tuple[int, int], list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        found = _MARKER.match(line)
        if found:
            current = out.setdefault((int(found[1]), int(found[2])), [])
        elif current is not None:
            current.append(_normalize(line))
    return {k: tuple(v) for k, v in out.items()}


def compare(programs: list[Program], original_stdout: str) -> list[Divergence]:
    text = session_text(programs)
    ours = chunks(our_lines(text))
    theirs = chunks(original_lines(original_stdout))
    found = []
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key, ("<missing>",)), theirs.get(key, ("<missing>",))
        if a != b:
            source = programs[key[0]].statements[key[1]]
            found.append(Divergence(key[0], key[1], source, a, b))
    return found


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


def main(argv: list[str]) -> int:
    seed, count = int(argv[0]), int(argv[1])
    programs = generate(seed, count)
    divergences = compare(programs, original_output(programs))
    for d in divergences:
        print(_report(programs, d))
    print(f"{len(divergences)} divergences in {count} programs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

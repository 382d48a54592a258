"""docs/inspect.md's "Options, by command" table lists every option of every `rasp` subcommand,
and no option a subcommand lacks.

tests/test_docs_claims.py checks the options of the `rasp COMMAND` lines the docs quote; an option
no example quotes could be added to the command line, or removed from it, with no page saying so
(`rasp verify --device` and `rasp draw --max-params` were documented nowhere). Each check is a
function of the text, so that a stale table is shown to fail it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSPECT = ROOT / "docs" / "inspect.md"
# what every command takes, said once above the table
COMMON = {"--help", "--quiet", "--verbose"}
_OPTION = re.compile(r"(?<![\w-])(--[a-z][\w-]*)")


def table_options(text: str) -> dict[str, set[str]]:
    """The table under "### Options, by command": subcommand -> the options its row lists."""
    at = text.index("### Options, by command")
    rows: dict[str, set[str]] = {}
    for line in text[at:].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and cells[0].startswith("`rasp "):
            rows[cells[0].strip("`").split()[1]] = set(_OPTION.findall(cells[1]))
        elif rows and not line.startswith("|"):
            break
    return rows


def option_mismatches(text: str) -> list[str]:
    """Options the command line has that the table does not list, and the reverse."""
    from rasp.tools.cli_parser import arguments, build_parser

    commands = build_parser().subcommand_parsers  # type: ignore[attr-defined]
    listed = table_options(text)
    found = [f"rasp {name}: no row" for name in commands if name not in listed]
    found += [f"rasp {name}: no such command" for name in listed if name not in commands]
    for name, parser in commands.items():
        real = {o for a in arguments(parser) for o in a.option_strings if o.startswith("--")}
        real -= COMMON
        shown = listed.get(name, set())
        found += [f"rasp {name} {o}: not in the table" for o in sorted(real - shown)]
        found += [f"rasp {name} {o}: no such option" for o in sorted(shown - real)]
    return found


def test_the_options_table_is_the_command_line() -> None:
    assert option_mismatches(INSPECT.read_text(encoding="utf-8")) == []


def test_a_stale_options_table_is_found() -> None:
    text = INSPECT.read_text(encoding="utf-8")
    assert "`--no-rebuild`, " in text and "`--source`" in text
    dropped = text.replace("`--no-rebuild`, ", "", 1)
    assert option_mismatches(dropped) == ["rasp verify --no-rebuild: not in the table"]
    invented = text.replace("`--source`", "`--source`, `--sauce`", 1)
    assert option_mismatches(invented) == ["rasp show --sauce: no such option"]

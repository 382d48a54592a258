"""Claims in README.md and docs/*.md that no example runs: size tables, the project's Python
names, and the options of the `rasp` command lines quoted in prose.

tests/test_docs.py runs the fenced examples; these claims sit in tables and inline code, where
they went stale unseen (README's N = 40 table kept hist's and most_freq's sizes from before they
shrank; docs/inspect.md named `rasp.tools.inspect.read_model_file` after it moved to
`rasp.tools.model_file`). Each check is a function of the text, so that a broken doc is shown to
fail it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SCALE = ROOT / "bench" / "results" / "scale.json"
_CODE = re.compile(r"`([^`\n]+)`")
_NAME = re.compile(r"\b((?:compiler|rasp|transformer)(?:\.[A-Za-z_]\w*)+)")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][\w-]*)")


def _measured(n: int) -> dict[str, dict[str, int]]:
    """bench/results/scale.json's rows at N = n: program -> layers, attention layers, sizes."""
    rows = json.loads(SCALE.read_text())["sizes"]
    return {
        r["program"]: {
            "layers": r["layers"],
            "attention": sum(1 for h in r["heads"] if h),
            "params": r["params"],
            "nonzero": r["nonzero"],
        }
        for r in rows
        if r["N"] == n and "params" in r
    }


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def stale_size_rows(text: str, measured: dict[str, dict[str, int]]) -> list[str]:
    """The rows of the N = 40 size tables (README's `| reverse | 2 | 3,265 | 593 | ...` and
    docs/compiler.md's `| reverse | 2 / 2 | 3,265 | 593 | ...`) that differ from the bench's."""
    stale = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] not in measured:
            continue
        layers, params, nonzero = cells[1:4]
        if not re.fullmatch(r"\d+( / \d+)?", layers) or not re.fullmatch(r"[\d,]+", params):
            continue
        row = measured[cells[0]]
        shown = [int(x) for x in layers.split(" / ")] + [_number(params), _number(nonzero)]
        real = [row["layers"]] + ([row["attention"]] if "/" in layers else [])
        if shown != [*real, row["params"], row["nonzero"]]:
            stale.append(f"{line.strip()}  (bench: {row})")
    return stale


def _size_tables(path: Path) -> str:
    """The text of the N = 40 tables: README's "How small and how exact" opening table and
    docs/compiler.md's "Measured on `programs/` at N = 40" table."""
    text = path.read_text(encoding="utf-8")
    start = {
        "README.md": "At N = 40, vocabulary",
        "compiler.md": "Measured on `programs/` at N = 40",
    }
    at = text.index(start[path.name])
    return text[at : text.index("\n\n", text.index("\n|", at))]


@pytest.mark.parametrize("path", [ROOT / "README.md", ROOT / "docs" / "compiler.md"], ids=str)
def test_the_n40_size_tables_are_the_bench_results(path: Path) -> None:
    table = _size_tables(path)
    assert table.count("\n|") >= 7  # (header, rule and 5 programs at least: the table was found)
    assert stale_size_rows(table, _measured(40)) == []


def test_a_stale_size_row_is_found() -> None:
    measured = {"hist": {"layers": 1, "attention": 1, "params": 1968, "nonzero": 496}}
    assert stale_size_rows("| hist | 1 | 1,968 | 496 | 20.5K |", measured) == []
    assert stale_size_rows("| hist | 1 / 1 | 1,968 | 496 | |", measured) == []
    assert len(stale_size_rows("| hist | 1 | 2,002 | 508 | 20.5K |", measured)) == 1
    assert len(stale_size_rows("| hist | 1 / 2 | 1,968 | 496 | |", measured)) == 1


def _bench_scale() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "bench_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_results_at_n40_are_what_the_compiler_builds_now() -> None:
    """The tables quote the bench's file; the file must still be the compiler's (about 2 s)."""
    bench = _bench_scale()
    measured = _measured(40)
    assert sorted(measured) == sorted(bench.VOCABS)
    for program, row in measured.items():
        built = bench.compile_one(program, 40, None)
        got = {
            "layers": built["layers"],
            "attention": sum(1 for h in built["heads"] if h),
            "params": built["params"],
            "nonzero": built["nonzero"],
        }
        assert got == row, f"{program} at N = 40: bench/results/scale.json says {row}"


# ------------------------------------------------------------------------------------------------
# Names and options


def missing_names(text: str) -> list[str]:
    """`compiler.x.y`, `rasp.tools.x.f`, `transformer.load` in inline code that do not exist.
    A name whose first part is not one of this project's modules under the package
    (`rasp.Map`, `compiler.compiling`: tracr's, quoted for comparison) is not ours to check,
    except under `transformer`, whose names are all the runtime's."""
    missing = []
    for span in _CODE.findall(text):
        for name in _NAME.findall(span):
            parts = name.split(".")
            for cut in range(len(parts), 0, -1):
                try:
                    found: object = importlib.import_module(".".join(parts[:cut]))
                    break
                except ImportError:
                    continue
            if cut == 1 and parts[0] != "transformer":
                continue
            for part in parts[cut:]:
                if not hasattr(found, part):
                    missing.append(name)
                    break
                found = getattr(found, part)
    return missing


def test_every_project_name_the_docs_mention_exists() -> None:
    for path in DOCS:
        assert missing_names(path.read_text(encoding="utf-8")) == [], path.name


def test_a_missing_name_is_found() -> None:
    assert missing_names("`rasp.tools.model_file.read_model_file`, `rasp.Map`") == []
    assert missing_names("`rasp.tools.inspect.read_model_file`") == [
        "rasp.tools.inspect.read_model_file"
    ]
    assert missing_names("`transformer.lod(path)`") == ["transformer.lod"]


def unknown_options(text: str) -> list[str]:
    """The `--options` of `rasp COMMAND ...` lines (inline code and `$ rasp` lines) that COMMAND
    does not have."""
    from rasp.tools.cli_parser import arguments, build_parser

    commands = build_parser().subcommand_parsers  # type: ignore[attr-defined]
    lines = _CODE.findall(text) + [line[2:] for line in text.splitlines() if line.startswith("$ ")]
    unknown = []
    for line in lines:
        words = line.split()
        if len(words) < 2 or words[0] != "rasp" or words[1] not in commands:
            continue
        known = {o for a in arguments(commands[words[1]]) for o in a.option_strings}
        for option in _OPTION.findall(" ".join(words[2:])):
            if option not in known:
                unknown.append(f"rasp {words[1]} {option}")
    return unknown


# Options quoted to show their error (docs/inspect.md: `rasp run --vocab abc` is refused).
_REFUSED_ON_PURPOSE = {"rasp run --vocab"}


def test_every_option_of_a_quoted_rasp_command_exists() -> None:
    for path in DOCS:
        found = unknown_options(path.read_text(encoding="utf-8"))
        assert [o for o in found if o not in _REFUSED_ON_PURPOSE] == [], path.name


def test_an_unknown_option_is_found() -> None:
    assert unknown_options("`rasp compile p.rasp --max-len 5 --no-head-masks`") == []
    assert unknown_options("$ rasp show M.safetensors [--json | --source]") == []
    assert unknown_options("`rasp compile p.rasp --maxlen 5`") == ["rasp compile --maxlen"]
    assert unknown_options("$ rasp run --model m.safetensors --vocab abc") == ["rasp run --vocab"]


# ------------------------------------------------------------------------------------------------
# Constants

_CONSTANT = re.compile(r"`([A-Z][A-Z0-9_]{3,}) = (?:\w+ = )?([^`]+)`")


def wrong_constants(text: str) -> list[str]:
    """`SOFTMAX_GAP = 120`-style claims whose module-level constant (in compiler/, transformer/ or
    rasp/) is missing or has another value."""
    wrong = []
    for name, shown in _CONSTANT.findall(text):
        found = [
            line.split("=", 1)[1].split("#")[0].strip()
            for package in ("compiler", "transformer", "rasp")
            for source in (ROOT / package).rglob("*.py")
            for line in source.read_text(encoding="utf-8").splitlines()
            if re.match(rf"{name}(: [\w.\[\], ]+)? = ", line)
        ]
        if not any(_same_number(value, shown) for value in found):
            wrong.append(f"{name} = {shown} (the code: {found or 'no such constant'})")
    return wrong


def _same_number(code: str, shown: str) -> bool:
    try:
        return float(code) == float(shown.replace(",", ""))
    except ValueError:
        return code == shown


def test_every_constant_the_docs_quote_has_its_value() -> None:
    for path in DOCS:
        assert wrong_constants(path.read_text(encoding="utf-8")) == [], path.name


def test_a_wrong_constant_is_found() -> None:
    assert wrong_constants("`SCORE_UNIT = S = 256`, `SOFTMAX_GAP = 120`") == []
    assert len(wrong_constants("`SOFTMAX_GAP = 100`")) == 1
    assert len(wrong_constants("`NO_SUCH_CONSTANT = 1`")) == 1


def stale_bench_rows(text: str) -> list[str]:
    """Rows of bench/README.md's size table (`| reverse | 10 | 2 | 1/1 | 13 | 1,255 | 173 | ...`)
    that differ from bench/results/scale.json (a program and N it lacks included)."""
    rows = json.loads(SCALE.read_text())["sizes"]
    measured = {(r["program"], r["N"]): r for r in rows if "params" in r}
    stale = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 9 or not cells[1].isdigit() or not re.fullmatch(r"\d+(/\d+)*", cells[3]):
            continue
        row = measured.get((cells[0], int(cells[1])))
        shown = [cells[2], cells[3], cells[4], cells[5], cells[6]]
        real = row and [
            str(row["layers"]),
            "/".join(map(str, row["heads"])),
            str(row["d_model"]),
            f"{row['params']:,}",
            f"{row['nonzero']:,}",
        ]
        if shown != real:
            stale.append(f"{line.strip()}  (bench: {real})")
    return stale


def test_the_bench_readmes_size_table_is_the_bench_results() -> None:
    text = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    at = text.index(
        "| program | N | layers | heads | d_model | params | non-zero | dense/non-zero |"
    )
    table = text[at : text.index("\n\n", at)]
    assert len([line for line in table.splitlines() if line.startswith("| reverse | ")]) > 5
    assert stale_bench_rows(table) == []


def test_a_stale_bench_row_is_found() -> None:
    good = "| reverse | 10 | 2 | 1/1 | 13 | 1,255 | 173 | 7.3 | 0.05 s / 0.05 s |"
    assert stale_bench_rows(good) == []
    assert len(stale_bench_rows(good.replace("1,255", "1,363"))) == 1
    assert len(stale_bench_rows(good.replace("| 10 |", "| 3 |"))) == 1

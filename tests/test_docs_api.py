"""docs/api.md's argument tables are the functions' signatures, both ways, and every function it
documents has an example under its heading.

Each `### `dotted.name`` section of docs/api.md has a table `| argument | type | default |
meaning |`: its rows must be the function's parameters (in order, `self` aside), "(keyword)" must
mark exactly the keyword-only ones, and the default must be the real one (`required` for none).
The examples themselves run in tests/test_docs.py, as every page's do. Each check is a function of
the text, so that a stale table is shown to fail it (as tests/test_docs_options.py does for the
command line's options).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doc_examples import RUN_LANGUAGES, blocks

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
_HEADING = re.compile(r"^#{2,3} ")
_SECTION = re.compile(r"^### `([\w.]+)`\s*$")
_PACKAGES = ("rasp", "compiler", "transformer")

# What a user calls: every public method of these classes has a section of its own.
CLASSES = ("transformer.CompiledTransformer",)
FUNCTIONS = (
    "rasp.interpreter.load_file",
    "compiler.compile_sop",
    "compiler.CompiledModel.save",
    "compiler.recheck",
    "rasp.tools.tracr_compiling.compile_rasp_to_model",
    "transformer.load",
    "transformer.from_tensors",
    "transformer.read_metadata",
    "rasp.tools.verify.plan_inputs",
    "rasp.tools.verify.verify",
    "rasp.tools.verify_orders.check_model",
    "rasp.tools.export.export_transformer_lens",
    "transformer.interop.to_transformer_lens",
    "transformer.interop.mask_hooks",
    "transformer.interop.decode_logits",
)


@dataclass(frozen=True)
class Row:
    name: str
    keyword: bool
    default: str  # the cell's text without backticks; "required" for none


@dataclass(frozen=True)
class Section:
    name: str
    rows: tuple[Row, ...]
    first_line: int  # 1-based, of the heading
    last_line: int  # the line before the next heading


def sections(text: str) -> list[Section]:
    """The `### `name`` sections, each with its argument table's rows."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADING.match(line)] + [len(lines)]
    found = []
    for start, end in zip(starts, starts[1:], strict=False):
        heading = _SECTION.match(lines[start])
        if heading is None:
            continue
        rows: list[Row] = []
        in_table = False
        for line in lines[start + 1 : end]:
            if line.startswith("| argument |"):
                in_table = True
            elif in_table and line.startswith("|---"):
                continue
            elif in_table and line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                name = re.match(r"`(\w+)`", cells[0])
                assert name is not None, line
                rows.append(Row(name.group(1), "(keyword)" in cells[0], cells[2].strip("`")))
            elif in_table:
                break
        found.append(Section(heading.group(1), tuple(rows), start + 1, end))
    return found


def resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            continue
    for part in parts[cut:]:
        found = getattr(found, part)
    return found


def _default_matches(cell: str, value: Any) -> bool:
    if cell.split(".")[0] in _PACKAGES:  # a marker, `transformer.ties.AUTO`: that very object
        return resolve(cell) is value
    try:
        given = ast.literal_eval(cell)
    except (ValueError, SyntaxError):
        return False
    return type(given) is type(value) and given == value


def table_mismatches(section: Section) -> list[str]:
    """How the section's table differs from the function's signature."""
    try:
        function = resolve(section.name)
    except AttributeError:
        return [f"{section.name}: no such function"]
    params = [p for p in inspect.signature(function).parameters.values() if p.name != "self"]
    real = [p.name for p in params]
    shown = [r.name for r in section.rows]
    found = [f"{section.name}({n}): not in the table" for n in real if n not in shown]
    found += [f"{section.name}({n}): no such argument" for n in shown if n not in real]
    if not found and real != shown:
        found.append(f"{section.name}: the table's order is {shown}, the signature's {real}")
    by_name = {p.name: p for p in params}
    for row in section.rows:
        param = by_name.get(row.name)
        if param is None:
            continue
        keyword = param.kind is inspect.Parameter.KEYWORD_ONLY
        if keyword != row.keyword:
            said = "keyword-only" if keyword else "not keyword-only"
            found.append(f"{section.name}({row.name}): {said}")
        if param.default is inspect.Parameter.empty:
            if row.default != "required":
                found.append(f"{section.name}({row.name}): required, not {row.default}")
        elif not _default_matches(row.default, param.default):
            found.append(
                f"{section.name}({row.name}): default {param.default!r}, not {row.default}"
            )
    return found


def required_names() -> list[str]:
    names = list(FUNCTIONS)
    for dotted in CLASSES:
        cls = resolve(dotted)
        names += [
            f"{dotted}.{name}"
            for name, member in vars(cls).items()
            if not name.startswith("_") and inspect.isfunction(member)
        ]
    return names


def api_mismatches(text: str) -> list[str]:
    """Every difference between docs/api.md's tables and the code, and each function a user
    calls that has no section."""
    found_sections = sections(text)
    found = []
    for section in found_sections:
        found += table_mismatches(section)
        if not section.rows:
            found.append(f"{section.name}: no argument table")
    documented = {s.name for s in found_sections}
    found += [f"{name}: no section" for name in required_names() if name not in documented]
    return found


def test_the_api_tables_are_the_signatures() -> None:
    assert api_mismatches(API.read_text(encoding="utf-8")) == []


def test_every_documented_function_has_an_example_under_its_heading() -> None:
    runnable = [b for b in blocks(API) if b.language in RUN_LANGUAGES and b.runs]
    for section in sections(API.read_text(encoding="utf-8")):
        call = re.compile(rf"\b{section.name.rsplit('.', 1)[-1]}\(")
        assert any(
            section.first_line < b.line < section.last_line and call.search(b.text)
            for b in runnable
        ), f"{section.name}: no runnable example calls it under its heading"


def test_a_stale_api_table_is_found() -> None:
    text = API.read_text(encoding="utf-8")
    fill = "| `fill` (keyword) |"
    assert text.count(fill) == 1
    dropped = "\n".join(line for line in text.splitlines() if not line.startswith(fill))
    assert api_mismatches(dropped) == [
        "transformer.CompiledTransformer.run_array(fill): not in the table"
    ]
    invented = text.replace(fill, "| `pad` | `str` | `None` | invented |\n" + fill, 1)
    assert api_mismatches(invented) == [
        "transformer.CompiledTransformer.run_array(pad): no such argument"
    ]
    positional = text.replace(fill, "| `fill` |", 1)
    assert api_mismatches(positional) == [
        "transformer.CompiledTransformer.run_array(fill): keyword-only"
    ]
    batch = "| `batch_size` | `int` | `256` | rows per batch |"
    assert batch in text
    wrong = text.replace(batch, batch.replace("`256`", "`128`"), 1)
    assert api_mismatches(wrong) == [
        "transformer.CompiledTransformer.run(batch_size): default 256, not 128"
    ]
    marker = "`transformer.ties.RAISE` | as `decode` takes it |"
    assert marker in text
    other = text.replace(marker, marker.replace("RAISE", "ARGMAX"), 1)
    assert api_mismatches(other) == [
        "transformer.CompiledTransformer.run_hooked(undecided): default RAISE, "
        "not transformer.ties.ARGMAX"
    ]
    heading = "### `transformer.CompiledTransformer.to_values`"
    assert api_mismatches(text.replace(heading, "### to_values", 1)) == [
        "transformer.CompiledTransformer.to_values: no section"
    ]

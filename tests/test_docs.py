"""The README and docs/ tell the truth: their examples run and print what they show (issue 11).

`tests/doc_examples.py` says how blocks are read. Every ```console, ```pycon and ```python block of
README.md and docs/*.md runs here unless a `<!-- not-tested: reason -->` comment stands above it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_examples import ROOT, Block, DocRun, blocks, matches, rewrite

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_examples_print_what_they_show(
    path: Path, tmp_path: Path, update_golden: bool
) -> None:
    run = DocRun(tmp_path, update=update_golden)
    for block in blocks(path):
        run.run(block)
    if update_golden:
        rewrite(path, run.rewritten)
    assert not run.failures, "\n\n".join(f.report() for f in run.failures)


def test_every_runnable_block_runs_or_says_why_not() -> None:
    for path in DOCS:
        for block in blocks(path):
            if block.language in ("console", "pycon", "python") and not block.runs:
                reason = block.marks.get("not-tested", block.marks.get("file", ""))
                assert reason.strip(), f"{block.where}: a not-tested block needs a reason"


def test_the_readme_opens_with_the_two_commands() -> None:
    """The first command installs, compiles and runs; the second is the test command CI runs. Both
    rasp commands of the first appear in a checked console block, with their output."""
    first, second = blocks(ROOT / "README.md")[:2]
    assert (first.language, second.language) == ("bash", "bash")
    assert "pip install" in first.text and second.text.strip() == "python -m pytest"
    commands = [c.strip() for c in first.text.strip().split("&&") if c.strip().startswith("rasp ")]
    assert [c.split()[1] for c in commands] == ["compile", "run"]
    checked = "".join(
        b.text for b in blocks(ROOT / "README.md") if b.language == "console" and b.runs
    )
    for command in commands:
        assert f"$ {command}\n" in checked, command
    assert "python -m pytest\n" in (ROOT / ".ci" / "run").read_text()


def test_the_library_table_shows_what_the_programs_print() -> None:
    """README's table of programs/: each example input gives the output shown (display form)."""
    from rasp.display import values_text
    from rasp.interpreter import load_file
    from rasp.sops import evaluate

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| `([\w.]+\.rasp)`[^|]*\| ([^|]+) \| `([^`]*)` → `([^`]*)` \|$", text, re.MULTILINE
    )
    assert len(rows) >= 9
    assert all(row.count(".rasp`") == 1 for row in text.splitlines() if row.startswith("| `"))
    for file, outputs, given, shown in rows:
        interp = load_file(ROOT / "programs" / file)
        name = re.findall(r"`(\w+)`", outputs)[0]
        result = evaluate(interp.get(name), list(given))
        assert values_text(result.values) == shown, (file, given)


def test_the_format_pages_metadata_example_is_the_readmes_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/format.md's ```json block is reverse.rasp at --vocab abc --max-len 10 as compiled now,
    but for what it leaves out (`...`). It once showed format version 3, a d_model of 40 and a mask
    that model never had."""
    import json

    from compiler import compile_sop
    from rasp.interpreter import load_file
    from rasp.sources import read_source

    (block,) = [b for b in blocks(ROOT / "docs" / "format.md") if b.language == "json"]
    shown = json.loads(block.text.replace("[...]", "[]"))
    monkeypatch.chdir(ROOT)
    path = "programs/reverse.rasp"
    sop = load_file(path).get("reverse")
    meta = compile_sop(sop, list("abc"), 10, name="reverse", source=read_source(path)).metadata
    assert list(shown) == list(meta)
    for key in ("format", "format_version", "compiler_version", "config", "max_len", "vocab"):
        assert shown[key] == meta[key], key
    for key in ("output", "residual", "residual_values", "layers"):
        assert shown[key] == meta[key], key
    assert shown["program"]["file"] == meta["program"]["file"]
    assert list(shown["program"]) == list(meta["program"])
    assert shown["program"]["options"] == meta["program"]["options"]
    assert list(shown["reach"]) == list(meta["reach"])
    assert shown["reach"]["output"] == meta["reach"]["output"]
    certificate = meta["certificate"]
    assert sorted(shown["certificate"]) == sorted(certificate)
    assert shown["certificate"]["ok"] is certificate["ok"] is True
    assert shown["certificate"]["errors"] == certificate["errors"]
    (check,) = shown["certificate"]["checks"]
    real = next(c for c in certificate["checks"] if c["sublayer"] == check["sublayer"])
    for field, value in check.items():
        if isinstance(value, float):
            assert value == pytest.approx(real[field], rel=5e-3), field
        else:
            assert value == real[field], field


# ------------------------------------------------------------------------------------------------
# The harness itself


def test_ellipsis_lines_match_any_number_of_lines() -> None:
    assert matches("a\n...\nd\n", "a\nb\nc\nd\n")
    assert matches("a\n...\nd\n", "a\nd\n")
    assert not matches("a\n...\nd\n", "a\nb\n")
    assert matches("x  \n", "x\n") and not matches("x\n", "y\n")


def test_blocks_carry_the_comments_above_them(tmp_path: Path) -> None:
    path = ROOT / "README.md"
    fake = tmp_path / "doc.md"
    fake.write_text(
        "<!-- not-tested: needs a GPU -->\n```console\n$ rasp run x --input a\n```\n\n"
        "text\n\n<!-- file: p.rasp -->\n```rasp\nx = tokens;\n```\ntext\n```console\n$ rasp\n```\n"
    )
    found = [Block(path, b.line, b.language, b.text, b.marks) for b in blocks(fake)]
    assert [(b.language, b.marks) for b in found] == [
        ("console", {"not-tested": "needs a GPU"}),
        ("rasp", {"file": "p.rasp"}),
        ("console", {}),
    ]
    assert [b.runs for b in found] == [False, False, True]


def test_a_wrong_output_or_exit_status_is_reported(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- file: p.rasp -->\n```rasp\nout2 = tokens;\n```\n"
        "```console\n$ rasp run p.rasp --input ab\n[a, b] (strings)\n"
        "$ rasp run p.rasp --input ab\n[b, a] (strings)\n"
        "$ rasp run p.rasp --input ''\n...\nrasp run: error: argument --input '': is empty; programs "
        "and models run on inputs of 1 token or more\n```\n"
    )
    (tmp_path / "scratch").mkdir()
    run = DocRun(tmp_path / "scratch")
    for block in blocks(doc):
        run.run(block)
    assert [f.what for f in run.failures] == ["$ rasp run p.rasp --input ab"]
    assert "[b, a] (strings)" in run.failures[0].report()

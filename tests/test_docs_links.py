"""Every link and section reference in README.md and docs/*.md leads somewhere.

The pages point at each other two ways: Markdown links (`[text](docs/reverse.png)`,
`[text](#tracr-campaigns)`), whose anchors are GitHub's slugs of the target's headings, and prose
(`docs/inspect.md, "Conventions of every command"`, `"`rasp verify` in full", below`), which names
a heading by its text. A heading renamed or moved away (docs/inspect.md was reorganised for users)
would leave both pointing at nothing, unseen: each check is a function of the text, so that a broken
reference is shown to fail it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")  # text may wrap
# `docs/runtime.md, "Speed"`, `docs/inspect.md's "The REPL's compiled view"`, wrapped anywhere
_PAGE_SECTION = re.compile(r"((?:docs/)?[\w-]+\.md)(?:'s)?,?\s+\"([^\"]+)\"")
# `"Evaluation orders" above`, `"`rasp verify` in full", below`: a section of the same page
_HERE_SECTION = re.compile(r"\"([^\"\n]+(?:\n[^\"\n]+)?)\",?\s+(?:above|below)\b")
_PAGE = re.compile(r"(?<![\w/.-])(docs/[\w-]+\.md)\b")


def _prose(text: str) -> str:
    """The text outside fenced blocks (an example's output is no reference)."""
    kept: list[str] = []
    fence = ""
    for line in text.splitlines():
        opened = _FENCE.match(line.strip())
        if fence:
            if opened and line.strip().startswith(fence):
                fence = ""
        elif opened:
            fence = opened.group(1)
        else:
            kept.append(line)
    return "\n".join(kept)


def headings(text: str) -> list[str]:
    """The text of each heading, as written (backticks kept)."""
    return [m.group(2) for line in _prose(text).splitlines() if (m := _HEADING.match(line))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page's headings get (a repeated slug is numbered, `-1`, `-2`, as GitHub
    numbers it)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in headings(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def titles(text: str) -> list[str]:
    """The headings, and the bold titles paragraphs and list items start with (`**Step MLPs in
    the integer band.** A step ...`, `- **Two means added** (...)`): the pages name both."""
    bold = re.compile(r"^\s*(?:[-*]\s+)?\*\*([^*\n]+?)\.?\*\*", re.MULTILINE)
    return headings(text) + bold.findall(_prose(text))


def _names_a_heading(name: str, text: str) -> bool:
    """A quoted section name is a heading's or bold title's text, or its start before a
    parenthesis or a colon (`"The certificate"` for `## The certificate (`compiler/certify.py`)`)."""
    name = " ".join(name.split())
    for heading in titles(text):
        heading = " ".join(heading.split())
        if heading == name or heading.startswith((f"{name} (", f"{name}:")):
            return True
    return False


def broken_references(path: Path, text: str, read: dict[Path, str]) -> list[str]:
    """The links and section references of `text` (the page at `path`) that lead nowhere. `read`
    gives the other pages' texts by path."""

    def page(target: Path) -> str | None:
        target = target.resolve()
        if target in read:
            return read[target]
        return target.read_text(encoding="utf-8") if target.is_file() else None

    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    broken: list[str] = []
    prose = _prose(text)
    for match in _LINK.finditer(prose):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z][a-z+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        where = path.parent / file
        if file and not where.exists():
            broken.append(f"{shown}: link ({target}): no file {file}")
        elif anchor and (not file or where.suffix == ".md"):
            if anchor not in anchors(page(where) or "" if file else text):
                broken.append(f"{shown}: link ({target}): no heading has the anchor #{anchor}")
    for match in _PAGE_SECTION.finditer(prose):
        file, name = match.group(1), match.group(2)
        target = ROOT / file if "/" in file else path.parent / file
        if file == "README.md":
            target = ROOT / "README.md"
        other = page(target)
        if other is None:
            broken.append(f"{shown}: {file}: no such page")
        elif not _names_a_heading(name, other):
            broken.append(f'{shown}: {file}, "{" ".join(name.split())}": no such heading there')
    for match in _HERE_SECTION.finditer(prose):
        name = match.group(1)
        if not _names_a_heading(name, text):
            broken.append(f'{shown}: "{" ".join(name.split())}" (this page): no such heading')
    for match in _PAGE.finditer(prose):
        if page(ROOT / match.group(1)) is None:
            broken.append(f"{shown}: {match.group(1)}: no such page")
    return broken


def _pages() -> dict[Path, str]:
    return {p.resolve(): p.read_text(encoding="utf-8") for p in DOCS}


def test_every_link_and_section_reference_resolves() -> None:
    read = _pages()
    broken = [b for p in DOCS for b in broken_references(p, read[p.resolve()], read)]
    assert broken == []


def test_the_references_are_found() -> None:
    """The checks see the references the pages make (so an empty result above means something)."""
    read = _pages()
    readme = read[(ROOT / "README.md").resolve()]
    assert "docs/reverse.png" in [m.group(2) for m in _LINK.finditer(readme)]
    named = [(m.group(1), " ".join(m.group(2).split())) for m in _PAGE_SECTION.finditer(readme)]
    assert ("docs/inspect.md", "Conventions of every command") in named
    assert ("docs/inspect.md", "The REPL's compiled view") in named  # wrapped over two lines
    inspect = read[(ROOT / "docs" / "inspect.md").resolve()]
    links = [m.group(1) for m in _LINK.finditer(inspect)]
    assert "#rasp-verify" in links and "#conventions-of-every-command" in links  # text wrapped


def test_a_broken_anchor_or_section_is_found(tmp_path: Path) -> None:
    target = tmp_path / "target.md"
    target.write_text("# Top\n\n## The certificate (`x.py`)\n\n## A `def`, by name\n\ntext\n")
    read = {target.resolve(): target.read_text()}
    page = tmp_path / "page.md"

    def check(text: str) -> list[str]:
        return broken_references(page, text, read)

    assert check("[a](target.md#the-certificate-xpy) [b](target.md#a-def-by-name)") == []
    assert check('target.md, "The certificate" and target.md\'s "A `def`, by\nname"') == []
    assert check("[a](target.md#the-certificates)") == [
        "page.md: link (target.md#the-certificates): no heading has the anchor #the-certificates"
    ]
    assert check("[a](missing.md)") == ["page.md: link (missing.md): no file missing.md"]
    assert check('target.md, "The certificates"') == [
        'page.md: target.md, "The certificates": no such heading there'
    ]
    assert check('# Here\n\nsee "Not here", below') == [
        'page.md: "Not here" (this page): no such heading'
    ]
    assert check('# Here\n\nsee "Here" above, and [self](#here)') == []
    assert check('**Bold title.** text\n\nas "Bold title" above says') == []
    assert check("**Bold title.** text\n\n[a](#bold-title)") == [
        "page.md: link (#bold-title): no heading has the anchor #bold-title"
    ]
    assert check("```\n[a](nowhere.md)\n```\n") == []  # an example's text is no link


def test_a_repeated_heading_gets_a_numbered_anchor() -> None:
    assert anchors("# A\n\n## Usage\n\n## Usage\n") == {"a", "usage", "usage-1"}
    assert slug("`rasp export`: TransformerLens") == "rasp-export-transformerlens"

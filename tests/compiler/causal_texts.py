"""A RASP text made one a causal model can compute, for the fuzz campaign's `--causal` texts:
every aggregate's and selector width's selector conjoined with `select(indices, indices, <=)`,
`length` read as `(indices + 1)`, `full_s` as that select, and the prelude's functions that attend
to later positions (`has_focus`, `count`, `contains`, `average`, `sort`, `mark_last_instance`,
`select_from_last`, `load_from_location`) called in look-back versions defined before the text,
and an input s-op indexed by a number (`indices[-2]`, `tokens_int[3]`: a copy from that position)
a look-back copy.
The causal flavour draws only random_programs.py's graphs; this gives causal compiles the text
flavours' programs too (numeric: prefix means of means, compared and mapped, at large N).
With `library` (the programs/ folder), a `load "name";` is the file's text, rewritten too: the
selectors of a loaded file (hist's `same_token`) were left reading later positions, and their
compiles refused. Strings are as RASP writes them: `"..."` with no escapes (`"\\"` is a
backslash).
"""

from __future__ import annotations

import re
from pathlib import Path

BACK = "select(indices, indices, <=)"
# look-back versions of the prelude's functions that attend to later positions, put before the
# text (the prelude's own bodies are not rewritten); sort_back's position i copies the position
# of i's rank among the keys so far (the prelude's sort sends each position to its rank, which
# a causal model can read only where the rank is the position itself)
HEADER = f"""def load_from_location_back(seq, location) {{
    return aggregate(select(indices, location, ==) and {BACK}, seq);
}}
def has_focus_back(sel) {{
    return aggregate(sel and {BACK}, 1, 0) > 0;
}}
def count_back(seq, atom) {{
    is_sop = indicator(seq == atom);
    return selector_width(select(seq == atom, True, ==) and {BACK});
}}
def contains_back(seq, atom) {{
    return aggregate({BACK}, indicator(seq == atom)) > 0;
}}
def average_back(a) {{
    return aggregate({BACK}, a);
}}
def sort_back(seq, key) {{
    earlier = (select(key, key, <) or (select(key, key, ==) and select(indices, indices, <)))
        and {BACK};
    return aggregate(select(indices, selector_width(earlier), ==) and {BACK}, seq);
}}
def mark_last_instance_back(seq, val) {{
    later = select(seq, val, ==) and select(indices, indices, >) and {BACK};
    return seq == val and not has_focus_back(later);
}}
def select_from_last_back(seq, val) {{
    return select(mark_last_instance_back(seq, val), True, ==);
}}
"""
# a string literal (skipped whole: a token may read "length"), a comment, or a name
_LEXEME = re.compile(r'"[^"\r\n]*"|#[^\r\n]*|[A-Za-z_][A-Za-z_0-9]*')
_BACK_CALLS = (
    "load_from_location",
    "has_focus",
    "count",
    "contains",
    "average",
    "sort",
    "mark_last_instance",
    "select_from_last",
)
_RENAMED = {"length": "(indices + 1)", "full_s": f"({BACK})"}
# calls whose first argument is the selector a head attends by
_ATTENDING = ("aggregate", "selector_width")
# an input s-op indexed by a whole number, read right after its name
_INPUTS = ("indices", "tokens", "tokens_int", "tokens_str", "tokens_float", "tokens_bool")
_AT = re.compile(r"\[\s*(-?)\s*([0-9]+)\s*\]")
_LOAD = re.compile(r'^[ \t]*load[ \t]+"([^"\r\n]*)"[ \t]*;', re.MULTILINE)


def causal_text(text: str, library: Path | None = None) -> str:
    """`text` with every selector it writes looking back and no `length` (see the module);
    with `library`, its `load`s of that folder's files inlined and rewritten too."""
    return HEADER + _rewritten(_inlined(text, library) if library else text)


def _inlined(text: str, library: Path) -> str:
    """`text` with each `load "name";` of a file in `library` replaced by the file's text."""

    def body(match: re.Match[str]) -> str:
        path = library / f"{match.group(1)}.rasp"
        return _inlined(path.read_text(), library) if path.is_file() else match.group()

    return _LOAD.sub(body, text)


def _rewritten(text: str) -> str:
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), spans of `text`
    for match in _LEXEME.finditer(text):
        word = match.group()
        if word in _RENAMED and not _is_attribute(text, match.start()):
            edits.append((match.start(), match.end(), _RENAMED[word]))
        elif word in _INPUTS and (at := _AT.match(text, match.end())):
            where = f"(indices + 1) - {at.group(2)}" if at.group(1) else at.group(2)
            edits.append((match.start(), at.end(), f"load_from_location_back({word}, {where})"))
        elif word in _BACK_CALLS and _calls(text, match):
            edits.append((match.start(), match.end(), f"{word}_back"))
        elif word in _ATTENDING and text[match.end() : match.end() + 1] == "(":
            end = _first_argument_end(text, match.end() + 1)
            if end is not None:
                edits.append((match.end() + 1, match.end() + 1, "("))
                edits.append((end, end, f") and {BACK}"))
    out, at = [], 0
    # (an insertion and a replacement never share a start: a selector starts after a '(')
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        out += [text[at:start], new]
        at = end
    out.append(text[at:])
    return "".join(out)


def _is_attribute(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] == "."


def _calls(text: str, match: re.Match[str]) -> bool:
    """Whether the name `match` found is called there (not a parameter or a `def` of it)."""
    before = text[max(match.start() - 12, 0) : match.start()].rstrip()
    return text[match.end() : match.end() + 1] == "(" and not before.endswith("def")


def _first_argument_end(text: str, start: int) -> int | None:
    """Where the call argument starting at `start` ends (its ',' or ')' at depth 0), skipping
    strings and comments; None where the text ends first."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in '"#':
            skipped = _LEXEME.match(text, i)
            i = skipped.end() if skipped else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i
            depth -= 1
        elif c == "," and depth == 0:
            return i
        i += 1
    return None

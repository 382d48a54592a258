"""A RASP text made one a causal model can compute, for the fuzz campaign's `--causal` texts:
every aggregate's and selector width's selector conjoined with `select(indices, indices, <=)`,
`length` read as `(indices + 1)` and `load_from_location` a look-back copy. The causal flavour draws only random_programs.py's graphs; this gives causal compiles the
text flavours' programs too (numeric: prefix means of means, compared and mapped, at large N).
Selectors built inside library functions (the prelude's, programs/ files') are not rewritten:
a compile that reads one is refused, which the campaign counts as a kept promise.
"""

from __future__ import annotations

import re

BACK = "select(indices, indices, <=)"
# a look-back load_from_location, put before the text (the prelude's selects every position)
HEADER = (
    "def load_from_location_back(seq, location) {\n"
    f"    return aggregate(select(indices, location, ==) and {BACK}, seq);\n"
    "}\n"
)
# a string literal (skipped whole: a token may read "length"), a comment, or a name
_LEXEME = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*|[A-Za-z_][A-Za-z_0-9]*""")
_RENAMED = {
    "length": "(indices + 1)",
    "load_from_location": "load_from_location_back",
}
# calls whose first argument is the selector a head attends by
_ATTENDING = ("aggregate", "selector_width")


def causal_text(text: str) -> str:
    """`text` with every selector it writes looking back and no `length` (see the module)."""
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), spans of `text`
    for match in _LEXEME.finditer(text):
        word = match.group()
        if word in _RENAMED and not _is_attribute(text, match.start()):
            edits.append((match.start(), match.end(), _RENAMED[word]))
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
    return HEADER + "".join(out)


def _is_attribute(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] == "."


def _first_argument_end(text: str, start: int) -> int | None:
    """Where the call argument starting at `start` ends (its ',' or ')' at depth 0), skipping
    strings and comments; None where the text ends first."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "\"'#":
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

"""The text of a categorical value in a residual label (`name:text`), and how readers match it.

A value's text is `str(value)` (`tokens:a`, `y:1`, `x:True`) unless two values of one s-op would
then share a text, as `1` and `"1"`, `True` and `"True"`, `None` and `"None"` do, or a string's
text starts with a double quote. Then every string value of that s-op is written as JSON
(`tokens:"1"`, beside `tokens:1`), and the rest stay `str(value)`, which never starts with a
quote: one rule for the compiler that writes the labels and every tool that reads them
(docs/format.md). Programs whose texts are already unique keep their labels.

A reader tells the two forms apart by the texts alone: an s-op's values are quoted when some
text is a JSON string (starts with `"`); a file written before the rule may hold a string
token such as `"a` (a quote, not JSON) as it is, and is read as written.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any


def value_texts(values: Sequence[Any]) -> tuple[str, ...]:
    """The label texts of one s-op's distinct values (in their order), unique."""
    plain = [str(v) for v in values]
    strings = [isinstance(v, str) for v in values]
    if _unique(plain) and not any(s and t.startswith('"') for s, t in zip(strings, plain)):
        return tuple(plain)
    texts = [_json(v) if s else t for v, s, t in zip(values, strings, plain)]
    if _unique(texts):
        return tuple(texts)
    # Values that are not strings yet share a text (a numpy scalar beside its Python number):
    # their type names them, and a count as the last resort. Never in a RASP program.
    counts = Counter(texts)
    texts = [t if counts[t] == 1 else f"{t} ({type(v).__name__})" for v, t in zip(values, texts)]
    seen: Counter[str] = Counter()
    out = []
    for text in texts:
        seen[text] += 1
        out.append(text if seen[text] == 1 else f"{text} #{seen[text]}")
    return tuple(out)


def quoted(texts: Sequence[str]) -> bool:
    """Whether one s-op's label texts write its strings as JSON (some text is a JSON string)."""
    return any(_json_string(t) is not None for t in texts)


def text_is(text: str, value: Any, is_quoted: bool) -> bool | None:
    """Whether `text` is the label text of `value` in an s-op whose texts are `is_quoted`: True
    or False where the text's form decides it, None where only `str(value)` can (the caller
    compares it, a number also by value: `1.0` written as `1`)."""
    if not is_quoted:
        return None
    if isinstance(value, str):
        return text == _json(value)
    if _json_string(text) is not None:
        return False  # a quoted string's column, not a number's
    return None


def shown_text(text: str, is_quoted: bool) -> str | None:
    """The value a quoted text stands for, where it is a JSON string (for display: `rasp show`
    prints it as it prints a token); None otherwise."""
    return _json_string(text) if is_quoted else None


def text_of(value: Any, is_quoted: bool) -> str:
    """`value` written as a label text of an s-op whose texts are `is_quoted` (for showing the
    interpreter's value beside the model's decoded label: `"1"`, not `1`, for the string)."""
    return _json(value) if is_quoted and isinstance(value, str) else str(value)


def _json(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_string(text: str) -> str | None:
    if not text.startswith('"'):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _unique(texts: Sequence[str]) -> bool:
    return len(set(texts)) == len(texts)

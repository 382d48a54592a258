"""Words that generated messages share."""

from __future__ import annotations

import decimal
from collections.abc import Iterable

# Words that start with a vowel letter but a consonant sound ("a unit"), or the reverse ("an s-op").
_SOUNDS_LIKE_A = ("uni", "use", "usu", "one")
_SOUNDS_LIKE_AN = ("s-op", "mlp", "ndarray")


def with_article(phrase: str) -> str:
    """`phrase` after "a" or "an", as it is read aloud: "an int", "a list", "an 8 MB header",
    "a 199 MB header", "an s-op"."""
    return f"{'an' if _starts_with_vowel_sound(phrase) else 'a'} {phrase}"


def _starts_with_vowel_sound(phrase: str) -> bool:
    word = phrase.lower()
    if word[:1].isdigit():
        # 8, 80, 8,000 (eight...), 11 and 18 (eleven, eighteen) and their thousands
        leading = word.split(".")[0].split(",")[0].split()[0]
        return leading.startswith("8") or leading in ("11", "18")
    if word.startswith(_SOUNDS_LIKE_AN):
        return True
    return word[:1] in ("a", "e", "i", "o", "u") and not word.startswith(_SOUNDS_LIKE_A)


def count_text(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless n is 1: "1 output column", "3 output columns", "1,024 units"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def atom_text(value: object) -> str:
    """An atom as the REPL and errors write it: a string in double quotes (`"zz"`), an int in
    full (`int_text`), anything else as `str` gives it."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, int):
        return int_text(value)
    return str(value)


FLOAT_LIMIT = "the largest is about 1.8e308"


def operand_text(value: object) -> str:
    """A number as an overflow message shows it: a whole number of hundreds of digits by size."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"a {len(int_text(abs(value)))}-digit number"
    return repr(value)


def int_text(value: int) -> str:
    """`str(value)`, also for an int past Python's limit on int-to-text conversion (4,300 digits
    by default, `sys.set_int_max_str_digits`), where `str` raises ValueError: a program's ints may
    be longer (`2 ^ 20000` has 6,021 digits; `^` allows 100,000 bits). `Decimal` converts exactly,
    without that limit."""
    try:
        return str(value)
    except ValueError:
        return str(decimal.Decimal(value))


def close_name(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate a typo of `name` most likely meant, for "did you mean ...?": one at the
    fewest edits (a transposition is one), at most one edit per four letters of `name` (one for
    any shorter name), and fewer than its length. difflib's ratio suggested 'sort' for `noret`
    and 'tokens' for `broken`. Ties go to the first candidate in sorted order."""
    allowed = max(1, len(name) // 4)
    best: tuple[int, str] | None = None
    for candidate in candidates:
        if candidate == name or abs(len(candidate) - len(name)) > allowed:
            continue
        distance = _edits(name, candidate, allowed)
        if distance <= allowed and distance < len(name):
            if best is None or (distance, candidate) < best:
                best = (distance, candidate)
    return None if best is None else best[1]


def _edits(a: str, b: str, limit: int) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours turning `a` into `b` (the
    optimal string alignment distance); more than `limit` may be cut short at `limit + 1`."""
    before: list[int] | None = None
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return previous[-1]


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")


def input_words(k: int, count: int) -> str:
    """Input k (from 0) of a map of `count` inputs that has no name for it: `its input`, `its
    first input`, ... (`input 1` read as a name of the program's, which it is not)."""
    if count == 1:
        return "its input"
    return f"its {_ORDINALS[k]} input" if k < len(_ORDINALS) else f"its input {k + 1}"

"""Words that generated messages share."""

from __future__ import annotations

import decimal

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


def int_text(value: int) -> str:
    """`str(value)`, also for an int past Python's limit on int-to-text conversion (4,300 digits
    by default, `sys.set_int_max_str_digits`), where `str` raises ValueError: a program's ints may
    be longer (`2 ^ 20000` has 6,021 digits; `^` allows 100,000 bits). `Decimal` converts exactly,
    without that limit."""
    try:
        return str(value)
    except ValueError:
        return str(decimal.Decimal(value))

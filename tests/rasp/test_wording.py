"""The article before a word in generated messages ("an int", "a list", "an 8 MB header")."""

from __future__ import annotations

import pytest

from rasp.wording import close_name, count_text, with_article


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("int", "an int"),
        ("list", "a list"),
        ("evaluated s-op", "an evaluated s-op"),
        ("s-op", "an s-op"),
        ("argmax", "an argmax"),
        ("relu", "a relu"),
        ("unit", "a unit"),
        ("ndarray", "an ndarray"),
        ("8 MB", "an 8 MB"),
        ("11 MB", "an 11 MB"),
        ("18.5 MB", "an 18.5 MB"),
        ("110 MB", "a 110 MB"),
        ("199 MB", "a 199 MB"),
        ("1,800 MB", "a 1,800 MB"),
    ],
)
def test_with_article(phrase: str, expected: str) -> None:
    assert with_article(phrase) == expected


_NAMES = ["count", "full_s", "indices", "length", "max", "min", "reverse", "sort", "tokens", "x"]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("indeces", "indices"),
        ("lenght", "length"),  # a swap is one edit
        ("tkoens", "tokens"),
        ("Indices", "indices"),
        ("revrse", "reverse"),
        ("xx", "x"),
        ("mx", "max"),
        # difflib's ratio suggested 'sort' and 'tokens' for these: too far to be typos
        ("noret", None),
        ("broken", None),
        ("y", None),  # a one-letter name is no typo of another
        ("reverse_all", None),
    ],
)
def test_close_name_suggests_only_a_likely_typo(typed: str, meant: str | None) -> None:
    assert close_name(typed, _NAMES) == meant


def test_count_text_is_singular_for_one_only() -> None:
    assert count_text(1, "output column") == "1 output column"
    assert count_text(0, "unit") == "0 units"
    assert count_text(1_024, "unit") == "1,024 units"

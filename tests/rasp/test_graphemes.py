"""Cuts by graphemes and columns, and emoji sequences shown as themselves (`rasp.text_width`):
`clip`, `cut_label` (an unnamed node's label), rebuild's differing values, and `printable`, which
escaped the zero-width joiner of `👨‍👩‍👧` (`rasp show` printed `"👨\\u200d👩\\u200d👧"`)."""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.nodes import LABEL_MAX, cut_label
from rasp.text_width import (
    clip,
    display_width,
    graphemes,
    printable,
    printable_with,
    string_repr,
)

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧: five characters, one picture
RAINBOW = "\U0001f3f3\ufe0f\u200d\U0001f308"  # 🏳️‍🌈
ASTRONAUT = "\U0001f9d1\U0001f3fd\u200d\U0001f680"  # 🧑🏽‍🚀 (a skin tone before the joiner)
FLAG = "\U0001f1eb\U0001f1f7"  # 🇫🇷: two regional indicators
HEART = "\u2764\ufe0f"  # ❤️: a one-column symbol made a two-column emoji


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("ab", ["a", "b"]),
        (f"a{FAMILY}b", ["a", FAMILY, "b"]),
        (RAINBOW + ASTRONAUT, [RAINBOW, ASTRONAUT]),
        (FLAG + FLAG + "\U0001f1eb", [FLAG, FLAG, "\U0001f1eb"]),
        ("e\u0301" + HEART + "日", ["e\u0301", HEART, "日"]),
        ("1\ufe0f\u20e3", ["1\ufe0f\u20e3"]),  # a keycap
        ("\u1100\u1161\u11a8x", ["\u1100\u1161\u11a8", "x"]),  # a syllable in jamo
        ("a\u202eb", ["a", "\u202e", "b"]),  # (a bidi mark is no part of a letter)
    ],
)
def test_graphemes_are_what_a_terminal_draws_as_one(text: str, pieces: list[str]) -> None:
    assert graphemes(text) == pieces


@pytest.mark.parametrize(
    ("text", "width", "clipped"),
    [
        (f"a{FAMILY}{FAMILY}b", 4, f"a{FAMILY}…"),
        (f"a{FAMILY}{FAMILY}b", 3, "a…"),  # (not `a👨` with its joiner dangling)
        (f"a{HEART}b", 3, "a…"),  # (not `a❤…`, the heart without its U+FE0F)
        (f"a{FLAG}b", 3, "a…"),  # (not a lone regional indicator)
        (f"{FLAG}{FLAG}b", 3, f"{FLAG}…"),
        (f"ab{FAMILY}", 4, f"ab{FAMILY}"),  # fits: as it is
    ],
)
def test_clip_cuts_between_graphemes(text: str, width: int, clipped: str) -> None:
    assert clip(text, width) == clipped


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    pieces=st.lists(st.sampled_from(["a", "日", FAMILY, RAINBOW, FLAG, HEART, "e\u0301"])),
    width=st.integers(1, 20),
)
def test_clip_fits_and_keeps_whole_graphemes(pieces: list[str], width: int) -> None:
    text = "".join(pieces)
    clipped = clip(text, width)
    assert display_width(clipped) <= width
    kept = clipped if clipped == text else clipped.removesuffix("…")
    assert graphemes(kept) == pieces[: len(graphemes(kept))]


def test_a_label_is_cut_by_columns_never_through_an_emoji() -> None:
    ascii_text = "tokens == " + "x" * 40
    assert cut_label(ascii_text) == ascii_text[: LABEL_MAX - 3] + "..."  # (as it always was)
    family = f'tokens == "{FAMILY * 20}"'
    cut = cut_label(family)
    assert cut == f'tokens == "{FAMILY * 13}...' and display_width(cut) == LABEL_MAX
    wide = cut_label("tokens == " + "日" * 30)
    assert wide == "tokens == " + "日" * 13 + "..." and display_width(wide) == LABEL_MAX - 1


def test_rebuilds_differing_value_is_cut_by_columns() -> None:
    from rasp.tools.rebuild import CLIP, _short

    shown = _short([FAMILY] * 40)
    assert shown.endswith("...") and display_width(shown) <= CLIP
    assert FAMILY in shown and "\U0001f468\u200d..." not in shown
    assert _short(["ab"] * 40) == json.dumps(["ab"] * 40)[: CLIP - 3] + "..."  # (as before)


@pytest.mark.parametrize("sequence", [FAMILY, RAINBOW, ASTRONAUT, f"{FAMILY}{FAMILY}"])
def test_printable_shows_an_emoji_sequence_as_itself(sequence: str) -> None:
    assert printable(sequence) == sequence
    assert printable(f"a\x1b{sequence}\u202e") == f"a\\x1b{sequence}\\u202e"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\u200db", "a\\u200db"),  # between letters it would show `ab`
        ("\u65e5\u200d\u65e5", "\u65e5\\u200d\u65e5"),
        (f"\u200d{FAMILY}", f"\\u200d{FAMILY}"),  # a joiner joining nothing
        (f"{FAMILY}\u200d", f"{FAMILY}\\u200d"),
        (f"{FAMILY}\u200da", f"{FAMILY}\\u200da"),
    ],
)
def test_printable_escapes_a_joiner_outside_an_emoji_sequence(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_printable_with_takes_the_escape() -> None:
    assert printable_with(f"\x1b{FAMILY}", lambda c: f"<{ord(c):x}>") == f"<1b>{FAMILY}"


@pytest.mark.parametrize(
    "text", [FAMILY, f"{FAMILY}'", f"{FAMILY}'\"", f"{FAMILY}\\\n\x1b", "a\u200db", "it's", "plain"]
)
def test_string_repr_is_repr_but_for_an_emoji_sequences_joiner(text: str) -> None:
    shown = string_repr(text)
    assert ast.literal_eval(shown) == text  # (still Python's literal of it)
    joined = FAMILY in text  # (a joiner between letters stays `\\u200d`)
    assert shown == (repr(text).replace("\\u200d", "\u200d") if joined else repr(text))

"""How many terminal columns text takes, for every aligned table and caret the tools print.

`len` counts characters, but a terminal gives a CJK character or a fullwidth form two columns and
a combining accent none, so `str.ljust` and `f"{s:<10}"` misaligned the `:residual` table, the
selector grids and `rasp show`'s tables as soon as a token was `日` (one character, two columns).
Every such table pads with `ljust` / `rjust` here instead.

The widths follow Unicode's East Asian Width property and general categories through the
standard library (the core may add no dependency: docs/architecture.md), with the sequences the
wcwidth package (prompt_toolkit's measure) counts as one picture: an emoji joined to the one
before it by U+200D (`👨‍👩‍👧`, two columns), a text-style symbol made an emoji by U+FE0F (`❤️`,
two), a Hangul syllable spelt in conjoining jamo (two). Terminals differ on these last cases;
a CJK character is two columns on every one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache

# Characters a terminal draws on the one before them, or not at all: nonspacing and enclosing
# marks (accents, variation selectors), format characters (zero-width joiner, bidi marks) and
# control characters.
_ZERO_WIDTH_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Cc"})
_EMOJI_MODIFIERS = range(0x1F3FB, 0x1F400)  # skin tones: drawn on the emoji before them
_REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)  # two of them are a flag (`🇫🇷`)
# a Hangul syllable's vowel and final consonant jamo: drawn into the initial's two columns
_JAMO_AFTER_INITIAL = (range(0x1160, 0x1200), range(0xD7B0, 0xD800))
_SOFT_HYPHEN = "\xad"  # (a format character a terminal draws as a hyphen)
_JOINER = "\u200d"  # the zero-width joiner: the character after it is drawn into the one before
_EMOJI_STYLE = "\ufe0f"  # variation selector 16: the character before it drawn as an emoji
# The characters U+FE0F widens from one column to two: those of Unicode's
# emoji-variation-sequences.txt drawn as text by default (hex; a-b is a range)
_TEXT_STYLE_EMOJI = """
23 2A 30-39 A9 AE 203C 2049 2122 2139 2194-2199 21A9-21AA 2328 23CF 23ED-23EF 23F1-23F2
23F8-23FA 24C2 25AA-25AB 25B6 25C0 25FB-25FC 2600-2604 260E 2611 2618 261D 2620 2622-2623
2626 262A 262E-262F 2638-263A 2640 2642 265F-2660 2663 2665-2666 2668 267B 267E 2692
2694-2697 2699 269B-269C 26A0 26A7 26B0-26B1 26C8 26CF 26D1 26D3 26E9 26F0-26F1 26F4
26F7-26F9 2702 2708-2709 270C-270D 270F 2712 2714 2716 271D 2721 2733-2734 2744 2747
2763-2764 27A1 2934-2935 2B05-2B07 1F170-1F171 1F17E-1F17F 1F321 1F324-1F32C 1F336 1F37D
1F396-1F397 1F399-1F39B 1F39E-1F39F 1F3CB-1F3CE 1F3D4-1F3DF 1F3F3 1F3F5 1F3F7 1F43F 1F441
1F4FD 1F549-1F54A 1F56F-1F570 1F573-1F579 1F587 1F58A-1F58D 1F590 1F5A5 1F5A8 1F5B1-1F5B2
1F5BC 1F5C2-1F5C4 1F5D1-1F5D3 1F5DC-1F5DE 1F5E1 1F5E3 1F5E8 1F5EF 1F5F3 1F5FA 1F6CB
1F6CD-1F6CF 1F6E0-1F6E5 1F6E9 1F6F0 1F6F3
"""


TAB = 8  # the columns a terminal's tab stops are apart


@lru_cache(maxsize=4096)
def char_width(char: str) -> int:
    """0, 1 or 2: the columns one character takes on its own (`char_widths`: in its text)."""
    code = ord(char)
    if char == _SOFT_HYPHEN:
        return 1
    if (
        unicodedata.category(char) in _ZERO_WIDTH_CATEGORIES
        or code in _EMOJI_MODIFIERS
        or any(code in jamo for jamo in _JAMO_AFTER_INITIAL)
    ):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def char_widths(text: str) -> list[int]:
    """The columns each character of `text` takes where it stands: as `char_width`, but 0 after
    a zero-width joiner, and one more for a one-column symbol that U+FE0F follows (counted on
    the U+FE0F), so that an emoji sequence is one picture's two columns."""
    widths: list[int] = []
    for k, char in enumerate(text):
        if k and text[k - 1] == _JOINER:
            widths.append(0)
        elif char == _EMOJI_STYLE and k and widths[-1] == 1 and _text_style_emoji(text[k - 1]):
            widths.append(1)
        else:
            widths.append(char_width(char))
    return widths


def display_width(text: str) -> int:
    """The columns `text` takes in a terminal: `len(text)` for ASCII, 2 per CJK character."""
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(char_widths(text))


def _text_style_emoji(char: str) -> bool:
    return ord(char) in _text_style_emoji_codes()


@lru_cache(maxsize=1)
def _text_style_emoji_codes() -> frozenset[int]:
    codes: set[int] = set()
    for part in _TEXT_STYLE_EMOJI.split():
        first, _, last = part.partition("-")
        codes.update(range(int(first, 16), int(last or first, 16) + 1))
    return frozenset(codes)


def ljust(text: str, width: int) -> str:
    """`text` padded with spaces on the right to `width` columns (`str.ljust` by columns)."""
    return text + " " * (width - display_width(text))


def rjust(text: str, width: int) -> str:
    """`text` padded with spaces on the left to `width` columns (`str.rjust` by columns)."""
    return " " * (width - display_width(text)) + text


def clip(text: str, width: int, mark: str = "…") -> str:
    """`text` if it fits in `width` columns, else its longest start that fits with `mark` after
    it, cut between graphemes (`graphemes`): never through an accent, a flag or an emoji
    sequence."""
    if display_width(text) <= width:
        return text
    room, kept = width - display_width(mark), []
    for piece in graphemes(text):
        room -= display_width(piece)
        if room < 0:
            break
        kept.append(piece)
    return "".join(kept) + mark


def graphemes(text: str) -> list[str]:
    """`text` in the pieces a terminal draws as one, as `char_widths` counts them: a character
    with the accents, skin tones, U+FE0F and jamo drawn on it, and what a zero-width joiner
    joins to it (`👨‍👩‍👧`); a flag's two regional indicators (`🇫🇷`). So a cut never leaves half
    a picture (a `👨` with its joiner dangling, a lone regional indicator)."""
    pieces: list[str] = []
    for k, char in enumerate(text):
        if k and _joins_previous(text, k, pieces[-1]):
            pieces[-1] += char
        else:
            pieces.append(char)
    return pieces


def _joins_previous(text: str, k: int, piece: str) -> bool:
    """Whether `text[k]` is drawn as part of `piece`, the piece before it."""
    char, code = text[k], ord(text[k])
    if text[k - 1] == _JOINER or char in (_JOINER, _EMOJI_STYLE):
        return True
    if unicodedata.category(char) in ("Mn", "Me") or code in _EMOJI_MODIFIERS:
        return True
    if any(code in jamo for jamo in _JAMO_AFTER_INITIAL):
        return True
    # a regional indicator pairs with a lone one before it (`🇫🇷` is two: F and R)
    return code in _REGIONAL_INDICATORS and len(piece) == 1 and ord(piece) in _REGIONAL_INDICATORS


def printable(text: str) -> str:
    """`text` with each control or format character as its escape (`\\x1b`, `\\n`, `\\u202e`),
    for a terminal: a model file's strings cannot move the cursor, recolour the terminal, reorder
    text or add lines (`transformer.errors` keeps its own copy: the runtime imports no `rasp`).
    A zero-width joiner inside an emoji sequence (`👨‍👩‍👧`, `🏳️‍🌈`) stays (`joins_emoji`): it
    only draws the pictures as one, which its escapes would show as `👨\\u200d👩\\u200d👧`."""
    return printable_with(text, lambda c: c.encode("unicode_escape").decode("ascii"))


def printable_with(text: str, escape: Callable[[str], str]) -> str:
    """`printable`, with `escape(c)` for each character escaped (JSON's `\\u001b`, say)."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() or joins_emoji(text, k) else escape(c) for k, c in enumerate(text)
    )


def string_repr(text: str) -> str:
    """`repr(text)`, but for the joiner of an emoji sequence, kept as itself (`printable`): a
    list's string reads `['👨‍👩‍👧']`, not `['👨\\u200d👩\\u200d👧']`."""
    shown = repr(text)
    if text.isprintable() or _JOINER not in text:
        return shown
    quote = shown[0]  # (the quotes Python chose for the whole text)
    body = "".join(
        c if joins_emoji(text, k) else f"\\{c}" if c in (quote, "\\") else repr(c)[1:-1]
        for k, c in enumerate(text)
    )
    return quote + body + quote


def joins_emoji(text: str, k: int) -> bool:
    """Whether `text[k]` is a zero-width joiner between two pictographs (symbols; the one before
    may carry U+FE0F or a skin tone). Not one between letters: `a`, a joiner, `b` would show
    `ab`."""
    if text[k] != _JOINER or k + 1 >= len(text) or unicodedata.category(text[k + 1]) != "So":
        return False
    before = k - 1
    while before >= 0 and (text[before] == _EMOJI_STYLE or ord(text[before]) in _EMOJI_MODIFIERS):
        before -= 1
    return before >= 0 and unicodedata.category(text[before]) == "So"


def line_columns(line: str) -> int:
    """The columns `line` takes on a terminal: a tab goes to its next stop, `日` takes two."""
    column = 0
    for part_index, part in enumerate(line.split("\t")):
        if part_index:
            column = (column // TAB + 1) * TAB
        column += display_width(part)
    return column

"""The runtime's two error types: a bad model file and a bad model input.

`transformer` must not import `rasp`, so these do not derive from `rasp.errors.RaspError`; each
carries one printable line (no traceback needed) that the CLI renders as `error: <message>`.
"""

from __future__ import annotations

import unicodedata


class ModelFormatError(Exception):
    """A file that is not a valid compiled model: `str(err)` is `<path>: <what is wrong>`."""

    def __init__(self, path: str, reason: str) -> None:
        reason = printable(reason)
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def printable(text: str) -> str:
    """`text` with each control or format character as its escape (`\\x1b`, `\\n`, `\\u202e`):
    a reason quotes the file's own strings (tensor names, field values), which must not move the
    cursor, recolour the terminal, reorder the line or break it in two. A zero-width joiner
    between two pictographs (`👨‍👩‍👧`) stays: it only draws them as one picture. (The same as
    `rasp.text_width.printable`, which the runtime may not import; a test holds them equal.)"""
    if text.isprintable():
        return text
    return "".join(
        c
        if c.isprintable() or _joins_emoji(text, k)
        else c.encode("unicode_escape").decode("ascii")
        for k, c in enumerate(text)
    )


_JOINER = "\u200d"
_EMOJI_STYLE = "\ufe0f"  # variation selector 16
_EMOJI_MODIFIERS = range(0x1F3FB, 0x1F400)  # skin tones


def _joins_emoji(text: str, k: int) -> bool:
    """Whether `text[k]` is a zero-width joiner between two pictographs (the one before may carry
    U+FE0F or a skin tone): `rasp.text_width.joins_emoji`."""
    if text[k] != _JOINER or k + 1 >= len(text) or unicodedata.category(text[k + 1]) != "So":
        return False
    before = k - 1
    while before >= 0 and (text[before] == _EMOJI_STYLE or ord(text[before]) in _EMOJI_MODIFIERS):
        before -= 1
    return before >= 0 and unicodedata.category(text[before]) == "So"


class ModelInputError(ValueError):
    """An input the model cannot run (unknown token, empty, longer than `max_len`).

    `str(err)` is `reason`, then `; hint` where there is one (how to write the input instead); a
    front end with its own hint for the same mistake reads `reason` and `hint` apart, so that it
    does not give two.
    """

    def __init__(self, reason: str, hint: str = "") -> None:
        super().__init__(f"{reason}; {hint}" if hint else reason)
        self.reason = reason
        self.hint = hint


class ModelOutputError(ArithmeticError):
    """A model computed a NaN or infinite output: its weights, not the input, are broken."""


class UndecidedOutputError(ModelOutputError):
    """An output position that nothing in the logits decides (transformer/ties.py): a
    categorical one whose largest logit is shared, a numerical one off every value it can take.
    `str(err)` is `reason; hint`; `input` and `position` name the first such position, and
    `detail` says what its logits hold ("its largest logit, 0, is shared by 'a', 'b'")."""

    def __init__(self, reason: str, hint: str, input: int, position: int, detail: str = "") -> None:
        super().__init__(f"{reason}; {hint}")
        self.reason = reason
        self.hint = hint
        self.input = input
        self.position = position
        self.detail = detail

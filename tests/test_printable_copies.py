"""`transformer.errors.printable` (the runtime imports no `rasp`) and `rasp.text_width.printable`
are one rule in two copies: a model-file error showed `👨\\u200d👩\\u200d👧` where every other
tool showed the family, since the runtime's copy escaped each zero-width joiner."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp.text_width import printable as tools_printable
from transformer.errors import ModelFormatError
from transformer.errors import printable as runtime_printable

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧
RAINBOW = "\U0001f3f3\ufe0f\u200d\U0001f308"  # 🏳️‍🌈
ASTRONAUT = "\U0001f9d1\U0001f3fd\u200d\U0001f680"  # 🧑🏽‍🚀

TEXTS = [
    "plain",
    "",
    FAMILY,
    RAINBOW,
    ASTRONAUT,
    f"a\x1b{FAMILY}\u202e",
    "a\u200db",  # between letters: escaped
    "\u65e5\u200d\u65e5",
    f"\u200d{FAMILY}",
    f"{FAMILY}\u200d",
    f"{FAMILY}\u200da",
    "tab\there\nline\r\x7f\x00",
    "\ufe0f\u200d\U0001f308",  # a joiner with only a variation selector before it
    "\U0001f3fd\u200d\U0001f680",  # only a skin tone before it
]


@pytest.mark.parametrize("text", TEXTS)
def test_both_copies_agree(text: str) -> None:
    assert runtime_printable(text) == tools_printable(text)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.text(
        alphabet=st.sampled_from(
            ["a", "\u65e5", "\u200d", "\ufe0f", "\U0001f3fd", "\U0001f468", "\u2764", "\x1b", "\n"]
            + ["\u202e", "\u0301"]
        ),
        max_size=12,
    )
)
def test_both_copies_agree_on_mixtures(text: str) -> None:
    assert runtime_printable(text) == tools_printable(text)


def test_a_model_format_error_shows_an_emoji_sequence_as_itself() -> None:
    err = ModelFormatError("m.safetensors", f"unknown token {FAMILY!s} \x1b")
    assert str(err) == f"m.safetensors: unknown token {FAMILY} \\x1b"

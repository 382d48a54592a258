"""How to write an input a model refused, for every command that takes one.

A model refuses a token outside its vocabulary; often the input meant one it has: `a,b` or `a b`
for "ab" (text is split into characters, separators too), `ABC` for "abc" (tokens are
case-sensitive), `A,B` for "ab" (both), `the cat` for ["the", "cat"] (words, not characters), `12` for [1, 2]. `input_hint`
says what to write instead. The words are shared; only the way an input is typed differs, so the
caller passes `Spell`: `rasp run --input 'ab'` (`cli_input`) or the REPL's `:residual ab`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

# How a command takes the input `text`: characters (True: each one a token) or a JSON list.
Spell = Callable[[str, bool], str]

_SEPARATORS = frozenset(", ;\t")  # (typed between tokens, as if they separated them)
_KIND = {bool: "a bool", int: "an int", float: "a float", str: "a string"}


def cli_input(text: str, characters: bool) -> str:
    """`--input 'TEXT'`, as a shell takes it (characters and a JSON list alike)."""
    return f"--input '{text}'"


def input_hint(tokens: Sequence[Any], vocab: Sequence[Any], spell: Spell) -> str:
    """What to write instead of `tokens`, which the model of `vocab` refused; "" where no one
    fix fits (the runtime's own hint, if any, is then the one to give)."""
    if not tokens:
        return ""
    if not all(isinstance(t, str) for t in tokens):
        strings = {t for t in vocab if isinstance(t, str)}
        as_text = [t if isinstance(t, str) else json.dumps(t) for t in tokens]
        if not strings or not all(t in strings for t in as_text):
            return _other_type_hint(tokens, vocab)
        listed = json.dumps(as_text, ensure_ascii=False)
        return f"its tokens are strings: write the input as strings, {spell(listed, False)}"
    known = {json.dumps(t) for t in vocab if not isinstance(t, str)}
    if not known or not all(t in known for t in tokens):
        return (
            _quoted_hint(tokens, vocab, spell)
            or _words_hint(tokens, vocab, spell)
            or _glued_hint(tokens, vocab, spell)
            or _separator_hint(tokens, vocab, spell)
        )
    as_json = "[" + ",".join(tokens) + "]"
    return f"its tokens are not strings: write the input as a JSON list, {spell(as_json, False)}"


def _quoted_hint(characters: Sequence[str], vocab: Sequence[Any], spell: Spell) -> str:
    """Where the text is in quotes the shell kept (`--input '"abc"'`, a JSON string, not a list):
    the quotes are characters too, and the vocabulary has none; the input without them."""
    if len(characters) < 3 or characters[0] != characters[-1] or characters[0] not in "\"'":
        return ""
    if characters[0] in vocab:
        return ""
    inner = characters[1:-1]
    strings = {t for t in vocab if isinstance(t, str)}
    if all(c in strings for c in inner):
        return f"the quotes are characters too: {spell(''.join(inner), True)}"
    words = _words_hint(inner, vocab, spell) or _glued_hint(inner, vocab, spell)
    return f"the quotes are characters too, and {words}" if words else ""


def _words_hint(characters: Sequence[str], vocab: Sequence[Any], spell: Spell) -> str:
    """Where text split into characters names the vocabulary's tokens as words (`the cat` for
    ["the", "cat"], `3 1 2` for [1, 2, 3]): the JSON list of those words."""
    words = "".join(characters).split()
    if not words or words == list(characters):
        return ""
    written = {t if isinstance(t, str) else json.dumps(t): t for t in vocab}
    if not all(w in written for w in words):
        return ""
    if all(len(w) == 1 and isinstance(written[w], str) for w in words):  # `a b` for "abc"
        return f"text is split into characters, spaces too: {spell(''.join(words), True)}"
    listed = "[" + ",".join(json.dumps(written[w], ensure_ascii=False) for w in words) + "]"
    if not all(len(c) == 1 for c in characters):  # `["the cat"]`: a list, of one token too few
        return f"each word is a token of its own: {spell(listed, False)}"
    return f"text is split into characters: write the tokens as a JSON list, {spell(listed, False)}"


def _glued_hint(characters: Sequence[str], vocab: Sequence[Any], spell: Spell) -> str:
    """Where text split into characters spells the vocabulary's words run together (`thecat` for
    ["the", "cat"], `1020` for [10, 20]): the JSON list of those words, if they read one way only
    (`abab` over ["a", "b", "ab"] reads four ways, and no one of them is the fix)."""
    if not all(isinstance(c, str) and len(c) == 1 for c in characters):
        return ""
    written = {t if isinstance(t, str) else json.dumps(t): t for t in vocab}
    words = [w for w in written if w]
    if not any(len(w) > 1 for w in words):
        return ""  # a vocabulary of characters: the input's are the tokens (other hints)
    text = "".join(characters)
    reading = _one_reading(text, words)
    if reading is None:
        return ""
    listed = "[" + ",".join(json.dumps(written[w], ensure_ascii=False) for w in reading) + "]"
    return f"text is split into characters: write the tokens as a JSON list, {spell(listed, False)}"


def _one_reading(text: str, words: Sequence[str]) -> list[str] | None:
    """`text` cut into `words`, where exactly one way does it; None where none or several do."""
    # ways[i]: how many readings text[i:] has (counted up to 2), and the first word of one
    ways: list[tuple[int, str]] = [(0, "")] * len(text) + [(1, "")]
    for i in range(len(text) - 1, -1, -1):
        count, first = 0, ""
        for word in words:
            if text.startswith(word, i) and ways[i + len(word)][0]:
                count, first = min(2, count + ways[i + len(word)][0]), word
        ways[i] = (count, first)
    if ways[0][0] != 1:
        return None
    reading, i = [], 0
    while i < len(text):
        reading.append(ways[i][1])
        i += len(ways[i][1])
    return reading


def _separator_hint(characters: Sequence[str], vocab: Sequence[Any], spell: Spell) -> str:
    """Where the characters are the vocabulary's but for commas (`a,b`: a comma separates no
    tokens), or but for case (`ABC` for "abc"), or both (`A,B`): what to write."""
    strings = {t for t in vocab if isinstance(t, str)}
    unknown = [c for c in characters if c not in strings]
    if not unknown or not strings:
        return ""
    separators = [c for c in unknown if c in _SEPARATORS]
    cased = [c for c in unknown if c not in _SEPARATORS]
    swapped = [c.swapcase() for c in cased]
    if not all(c != s and s in strings for c, s in zip(cased, swapped, strict=True)):
        return ""
    if not cased:
        kept = "".join(c for c in characters if c in strings)  # (a space may be a token)
        return f"text is split into characters, separators too: {spell(kept, True)}"
    if not separators:
        return f'tokens are case-sensitive: the vocabulary has "{swapped[0]}", not "{cased[0]}"'
    # `A,B` for "ab": one hint for each mistake would send the user back twice
    kept = "".join(c if c in strings else c.swapcase() for c in characters if c not in separators)
    return (
        f'tokens are case-sensitive (the vocabulary has "{swapped[0]}", not "{cased[0]}") and '
        f"text is split into characters, separators too: {spell(kept, True)}"
    )


def _other_type_hint(tokens: Sequence[Any], vocab: Sequence[Any]) -> str:
    """Where the first unknown token equals a vocabulary token of another type (`1.0` for the
    vocabulary [1, 2, 3]): a JSON list keeps its types, and the model matches them."""
    known = {(type(v), v) for v in vocab}
    unknown = next((t for t in tokens if (type(t), t) not in known), None)
    if unknown is None or isinstance(unknown, str):
        return ""
    same = next((v for v in vocab if v == unknown and not isinstance(v, str)), None)
    if same is None or type(same) is type(unknown):
        return ""
    return (
        f"a JSON list keeps its types: the vocabulary has {json.dumps(same)} "
        f"({_KIND[type(same)]}), not {json.dumps(unknown)} ({_KIND[type(unknown)]})"
    )

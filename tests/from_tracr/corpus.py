"""The tracr-style programs the tests compile (programs/tracr/), with the vocabularies they are
checked over, and the inputs whose values tracr itself gave (tracr_values.json).

`record_tracr_values.py` (run where DeepMind's tracr is installed) writes tracr_values.json; the
tests read it and never import tracr.
"""

from __future__ import annotations

import itertools
import json
import random
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PROGRAM_DIR = ROOT / "programs" / "tracr"
VALUES_FILE = Path(__file__).with_name("tracr_values.json")

# 100 tokens: words of one to three letters, none repeated.
WORDS = [a + b for a in "abcdefghij" for b in ("", "x", "yz", "q", "rs", "t", "uv", "w", "kl", "m")]


@dataclass(frozen=True)
class Case:
    file: str
    name: str
    vocab: tuple[Any, ...]

    @property
    def target(self) -> str:
        return f"{PROGRAM_DIR / self.file}:{self.name}"

    @property
    def key(self) -> str:
        vocab = (
            "".join(map(str, self.vocab)) if len(self.vocab) <= 6 else f"{len(self.vocab)}tokens"
        )
        return f"{self.file}:{self.name}[{vocab}]"


def _cases(file: str, names: str, vocab: Any) -> list[Case]:
    return [Case(file, name, tuple(vocab)) for name in names.split()]


CASES: list[Case] = [
    *_cases("library.py", "length reverse hist sort_freq count_less_freq count_a", "abc"),
    *_cases("library.py", "sort_unique sort sort_freq reverse", [1, 2, 3, 4]),
    *_cases("library.py", "frac_prevs", "xab"),
    *_cases("library.py", "pair_balance shuffle_dyck", "()a"),
    *_cases("library.py", "shuffle_dyck2", "(){}"),
    *_cases("library.py", "detect_abc", "abc"),
    *_cases("library.py", "nary_concat", "ab"),
    *_cases(
        "text.py",
        "shift_right bigram palindrome first_token vowel_share same_as_first repeats_before "
        "others_before last_token upper_if_after_a",
        "abce",
    ),
    *_cases("text.py", "shift_right first_token same_as_first repeats_before", WORDS),
    *_cases("library.py", "hist", WORDS),
    *_cases(
        "numbers.py",
        "running_mean mean_all centered squared_half weighted count_greater sum_with_prev is_max "
        "parity_mates",
        [0, 1, 2, 3],
    ),
    *_cases("numbers.py", "halves running_mean squared_half", [0.5, 1.5, 2.0]),
    *_cases(
        "selectors.py",
        "window_size window_a_share a_or_b_seen not_me here_or_same never odd_from_first",
        "abc",
    ),
]


def inputs(case: Case, max_len: int = 8, samples: int = 40) -> list[list[Any]]:
    """Every input of up to 3 tokens (a few hundred at most), then seeded random ones up to max_len."""
    vocab = list(case.vocab)
    out: list[list[Any]] = []
    for n in range(1, 4):
        if len(vocab) ** n <= 256:
            out.extend(list(t) for t in itertools.product(vocab, repeat=n))
    rng = random.Random(zlib.crc32(case.key.encode()))
    out.extend([rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(samples))
    return out


def encode(value: Any) -> Any:
    """A value as JSON keeps it: bools, ints, floats, strings and None as themselves; a tuple (tracr
    n-ary maps) as {"tuple": [...]}."""
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def recorded() -> dict[str, Any]:
    return json.loads(VALUES_FILE.read_text(encoding="utf-8"))

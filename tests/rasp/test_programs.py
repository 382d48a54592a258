"""The shipped program library: documented headers, and outputs derived by hand for inputs."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from rasp.interpreter import load_file, run_file
from rasp.sops import evaluate

PROGRAMS = Path(__file__).parent.parent.parent / "programs"


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.rasp")), ids=lambda p: p.stem)
def test_header_names_the_output_and_it_is_assigned_last(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# "), "each program opens with a comment saying what it computes"
    match = re.search(r"Output: (\w+)\.", text)
    assert match, "the header names the output"
    assert "Example:" in text
    assert load_file(path).last_assigned == match.group(1)


CASES: list[tuple[str, Any, list[Any]]] = [
    ("reverse", "hello", list("olleh")),
    ("reverse", "a", ["a"]),
    ("reverse", "abcd", list("dcba")),
    ("reverse", ["the", "cat"], ["cat", "the"]),
    ("hist", "hello", [1, 1, 2, 2, 1]),
    ("hist", "aaa", [3, 3, 3]),
    ("hist", "abab", [2, 2, 2, 2]),
    ("hist_bos", "§aab", [0, 2, 2, 1]),
    ("hist_bos", "§", [0]),
    ("hist_bos", "§aaaa", [0, 4, 4, 4, 4]),
    ("double_hist", "aabbc", [2, 2, 2, 2, 1]),
    ("double_hist", "aaabbc", [1, 1, 1, 1, 1, 1]),
    ("double_hist", "abc", [3, 3, 3]),
    ("double_hist", "aab", [1, 1, 1]),
    ("sort", "hello", list("ehllo")),
    ("sort", "dcba", list("abcd")),
    ("sort", "bab", list("abb")),
    ("most_freq", "abbccc", ["c", "b", "a", "§", "§", "§"]),
    ("most_freq", "abc", ["a", "b", "c"]),
    ("most_freq", "aab", ["a", "b", "§"]),
    ("most_freq", "baa", ["a", "b", "§"]),
    ("dyck1", "())(", list("PTFF")),
    ("dyck1", "(()", list("PPP")),
    ("dyck1", "()()", list("PTPT")),
    ("dyck1", ")(", list("FF")),
    ("dyck1", "((()))", list("PPPPPT")),
    ("dyck2", "({)}", list("PPFF")),
    ("dyck2", "({})", list("PPPT")),
    ("dyck2", "(}", list("PF")),
    ("dyck2", "{}()", list("PTPT")),
    ("dyck2", ")", list("F")),
    ("length", "hello", [5] * 5),
    ("length", "a", [1]),
    ("length", "abcdefghijklm", [13] * 13),
    ("frac_prevs", "xax", [1, 0.5, pytest.approx(2 / 3)]),
    ("frac_prevs", "aaa", [0, 0, 0]),
    ("frac_prevs", "xxxx", [1, 1, 1, 1]),
]


@pytest.mark.parametrize(("program", "tokens", "expected"), CASES)
def test_program_output(program: str, tokens: Any, expected: list[Any]) -> None:
    assert list(run_file(PROGRAMS / f"{program}.rasp", tokens).values) == expected


def test_dyck2_against_a_direct_check() -> None:
    """Every string over "(){}" up to length 5 against a stack-based reference."""

    def reference(text: str) -> list[str]:
        out, stack, broken = [], [], False
        for char in text:
            if char in "({":
                stack.append(char)
            elif not broken:
                broken = not stack or {"(": ")", "{": "}"}[stack.pop()] != char
            out.append("F" if broken else ("T" if not stack else "P"))
        return out

    dyck2 = load_file(PROGRAMS / "dyck2.rasp").get("dyck2")
    for n in range(1, 6):
        for chars in itertools.product("(){}", repeat=n):
            text = "".join(chars)
            assert list(evaluate(dyck2, text).values) == reference(text), text

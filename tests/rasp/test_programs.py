"""The shipped program library: documented headers, and outputs derived by hand for inputs."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from rasp.errors import RaspNameError
from rasp.interpreter import Interpreter, load_file, run_file
from rasp.parser import parse
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


# "Layers: 2 as the paper counts them (...); compiles to 3 layers with `--vocab abc --max-len 16`."
_LAYERS = re.compile(
    r"# Layers: \d+ as the paper counts them\b.*?compiles to (\d+) layers? with\s+(?:# )?"
    r"`--vocab (\S+) --max-len (\d+)`",
    re.DOTALL,
)


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.rasp")), ids=lambda p: p.stem)
def test_a_header_layer_count_says_whose_and_the_compiled_one_is_true(path: Path) -> None:
    # The headers gave the paper's layer count as "Layers: 2"; this compiler builds more for some
    # (sort: 3, most_freq: 6). A header with a count says whose, and the compiled count is checked.
    text = path.read_text(encoding="utf-8")
    if "Layers:" not in text:
        return
    match = _LAYERS.search(text)
    assert match, "a layer count says it is the paper's and what this compiler builds"
    pytest.importorskip("compiler")
    from compiler import compile_sop

    layers, vocab, max_len = int(match.group(1)), list(match.group(2)), int(match.group(3))
    interp = load_file(path)
    assert interp.last_assigned is not None
    model = compile_sop(interp.get(interp.last_assigned), vocab, max_len)
    assert model.metadata["config"]["n_layers"] == layers


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
    ("induction", "abcab", ["_", "_", "_", "b", "c"]),
    ("induction", "abcabdab", list("___bc_bd")),
    ("induction", "aab", ["_", "a", "_"]),  # the a after the first a is the second a
    ("induction", "abab", list("__ba")),
    # a "_" token: the filler before position 0 matches nothing
    ("induction", "_a_b", list("__a_")),
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


# What the original interpreter printed for the paper's programs (tests/tgt/paper_examples.txt).
ORIGINAL_OUTPUTS = [
    (
        "hist_bos",
        "§hiya how are you doing there ey",
        "0 3 2 3 2 6 3 3 1 6 2 2 4 6 3 3 1 6 1 3 2 1 1 6 1 3 4 2 4 6 4 3",
    ),
    ("hist", "hiya howdy doodly doo", "2 1 3 1 3 2 5 1 4 3 3 4 5 5 4 1 3 3 4 5 5"),
    (
        "dyck1",
        "()(()())(((())(()(()))))((())((()()))(()))))(())((",
        "PTPPPPPTPPPPPPPPPPPPPPPTPPPPPPPPPPPPPPPPPTFFFFFFFF",
    ),
    (
        "dyck2",
        "{{({(){}()})}({}){}{}}{(({}(){}))}{}(){}({}(){()(){}}){)()}",
        "PPPPPPPPPPPPPPPPPPPPPTPPPPPPPPPPPTPTPTPTPPPPPPPPPPPPPTPFFFF",
    ),
]


@pytest.mark.parametrize(("program", "tokens", "printed"), ORIGINAL_OUTPUTS)
def test_same_values_as_the_original_interpreter(program: str, tokens: str, printed: str) -> None:
    expected = [int(v) for v in printed.split()] if " " in printed else list(printed)
    assert list(run_file(PROGRAMS / f"{program}.rasp", tokens).values) == expected


def test_long_addition_as_in_the_original() -> None:
    """The original's long addition adds "123+45" to [0, 0, 0, 1, 6, 8] (our own text of it)."""
    source = """
def digits(t) {
    table = {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9};
    value = -1;
    for d in table { value = table[d] if t == d else value; }
    return value;
}
plus_at = aggregate(select(tokens, "+", ==), indices);
nums = digits(tokens);
right = nums if indices > plus_at else 0;
left = aggregate(select(indices + length - plus_at, indices, ==), nums, 0);
total = left + right;
certain = total > 9; maybe = total == 9; never = total < 9;
blocks = round(aggregate(select(indices, indices, <), indicator(never)) * indices);
later = select(indices, indices, >) and select(blocks, blocks, ==);
carries = certain or (maybe and aggregate(later, indicator(certain)) > 0);
gets = aggregate(select(indices, indices + 1, ==), carries, False);
summed = total + indicator(gets);
longsum = summed if summed < 10 else summed - 10;
"""
    interpreter = Interpreter()
    interpreter.exec_program(parse(source))
    assert list(evaluate(interpreter.get("longsum"), "123+45").values) == [0, 0, 0, 1, 6, 8]
    assert list(evaluate(interpreter.get("longsum"), "999+1").values) == [0, 1, 0, 0, 0]


def test_paper_examples_load_as_in_the_original() -> None:
    """`load "paper_examples";` then the original's own test session (tests/in/paper_examples.txt);
    the expected values are the ones the original printed (tests/tgt/paper_examples.txt)."""
    interpreter = Interpreter()
    interpreter.exec_program(parse('load "paper_examples";'))
    with pytest.raises(RaspNameError):
        interpreter.get("_bos_width")  # private names stay in the file
    session = [
        ("hist_bos", "§hiya how are you doing there ey", ORIGINAL_OUTPUTS[0][2]),
        ("hist_nobos", "hiya howdy doodly doo", ORIGINAL_OUTPUTS[1][2]),
        ("sort_bos", "§dfgfhfghDVSHRDFHdfsfsfegDGDFHDFG", "§DDDDDFFFGGHHHRSVddeffffffggghhss"),
        (
            "hist2_bos",
            "§dkdnvdlvnksmncksnsknvkjns",
            "0 2 1 2 1 2 2 4 2 1 1 1 4 1 4 1 1 1 1 1 1 2 1 4 1 1",
        ),
        ("sort_by_most_freq", "§dnv,dmnvs,alaadslksmvxlmvlskd", "§dvslman,kx" + "§" * 19),
        ("dyck1_ptf", ORIGINAL_OUTPUTS[2][1], ORIGINAL_OUTPUTS[2][2]),
        ("dyck2_ptf", ORIGINAL_OUTPUTS[3][1], ORIGINAL_OUTPUTS[3][2]),
        (
            "dyck3_ptf",
            "()[](){{}(){}[]}[[]]([]){}()(])[[]]{{}}()[]",
            "PTPTPTPPPPPPPPPTPPPTPPPTPTPTPFFFFFFFFFFFFFF",
        ),
        ("reverse", "abc", "cba"),
    ]
    for name, tokens, printed in session:
        expected = [int(v) for v in printed.split()] if " " in printed else list(printed)
        assert list(evaluate(interpreter.get(name), tokens).values) == expected, name

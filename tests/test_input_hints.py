"""`rasp.tools.input_hints`: one set of words for an input a model refused, spelled as the CLI
(`--input 'ab'`) or the REPL (`:residual ab`) takes an input."""

from __future__ import annotations

from typing import Any

import pytest

from rasp.tools.input_hints import cli_input, input_hint
from rasp.tools.repl_model_input import repl_spelling

ABC = ["a", "b", "c"]


@pytest.mark.parametrize(
    ("tokens", "vocab", "cli", "repl"),
    [
        (list("a,b"), ABC, "separators too: --input 'ab'", "separators too: :residual ab"),
        (list("a b"), ABC, "spaces too: --input 'ab'", "spaces too: :residual ab"),
        # case and separators at once: one hint that fixes both (it once gave none)
        (list("A,B"), ABC, "separators too: --input 'ab'", "separators too: :residual ab"),
        (list("A b"), ABC, "separators too: --input 'ab'", "separators too: :residual ab"),
        (list("1 2"), [1, 2, 3], "JSON list, --input '[1,2]'", "JSON list, :residual [1, 2]"),
        (["1", "2"], [1, 2, 3], "--input '[1,2]'", ":residual [1, 2]"),
        ([0, 1], ["0", "1"], """--input '["0", "1"]'""", """:residual ["0", "1"]"""),
        (
            ["the cat"],
            ["the", "cat"],
            """each word is a token of its own: --input '["the","cat"]'""",
            """each word is a token of its own: :residual ["the", "cat"]""",
        ),
    ],
)
def test_the_same_hint_is_spelled_for_each_command(
    tokens: list[Any], vocab: list[Any], cli: str, repl: str
) -> None:
    assert input_hint(tokens, vocab, cli_input).endswith(cli)
    assert input_hint(tokens, vocab, repl_spelling(":residual")).endswith(repl)


def test_case_and_types_are_named_alike_everywhere() -> None:
    for spell in (cli_input, repl_spelling(":draw")):
        hint = input_hint(list("ABC"), ABC, spell)
        assert hint == 'tokens are case-sensitive: the vocabulary has "a", not "A"'
        assert input_hint(list("A,B"), ABC, spell).startswith(
            'tokens are case-sensitive (the vocabulary has "a", not "A") and text is split'
        )
        assert input_hint(list("A,Z"), ABC, spell) == ""  # Z is no token in any case
        hint = input_hint([1.0], [1, 2], spell)
        assert (
            hint == "a JSON list keeps its types: the vocabulary has 1 (an int), not 1.0 (a float)"
        )


@pytest.mark.parametrize(
    ("tokens", "vocab", "written"),
    [
        # characters that would not read back bare: a RASP string, or a JSON list
        (list(" ,a"), [" ", "a"], ':residual " a"'),
        (list("[,a"), ["[", "a"], ':residual "[a"'),
        (list('",a'), ['"', "a"], ':residual ["\\"", "a"]'),
    ],
)
def test_the_repl_writes_characters_it_reads_back(
    tokens: list[Any], vocab: list[Any], written: str
) -> None:
    assert input_hint(tokens, vocab, repl_spelling(":residual")).endswith(written)

"""Text given to a model whose tokens are words or numbers is split into characters; where the
text's words are the vocabulary's tokens (`--input 'the cat'`, `--input '3 1 2'`), the error
shows the JSON list to write, as it does for `--input 312`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from rasp.tools.cli import main

    out = tmp_path_factory.mktemp("words")
    made = {}
    for name, program, vocab in (
        ("words", "hist", '["the","cat"]'),
        ("numbers", "sort", "[1,2,3]"),
        ("letters", "reverse", "abc"),
    ):
        made[name] = out / f"{name}.safetensors"
        argv = ["compile", str(ROOT / "programs" / f"{program}.rasp"), "--vocab", vocab]
        assert main([*argv, "--max-len", "4", "-o", str(made[name]), "-q"]) == 0
    return made


@pytest.mark.parametrize(
    ("model", "given", "hint"),
    [
        ("words", "the cat", 'write the tokens as a JSON list, --input \'["the","cat"]\''),
        ("words", "cat", "write the tokens as a JSON list, --input '[\"cat\"]'"),
        ("numbers", "3 1 2", "write the tokens as a JSON list, --input '[3,1,2]'"),
        ("letters", "a b", "text is split into characters, spaces too: --input 'ab'"),
        # a class's slips: these said only that the token is not in the vocabulary
        ("letters", "a,b", "text is split into characters, separators too: --input 'ab'"),
        ("letters", "a, b,c", "text is split into characters, separators too: --input 'abc'"),
        ("letters", "aBC", 'tokens are case-sensitive: the vocabulary has "b", not "B"'),
    ],
)
def test_words_of_the_vocabulary_show_the_json_list(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], model: str, given: str, hint: str
) -> None:
    code, _, err = run(capsys, "run", "--model", str(models[model]), "--input", given)
    assert code == 2
    assert err.rstrip().endswith(hint)


def test_no_hint_where_the_words_are_not_tokens(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path]
) -> None:
    code, _, err = run(capsys, "run", "--model", str(models["words"]), "--input", "the dog")
    assert code == 2
    assert err.rstrip().endswith("words.safetensors)")


@pytest.mark.parametrize("given", ["aBd", "a,d", "abd"])
def test_no_separator_or_case_hint_for_another_token(
    capsys: pytest.CaptureFixture[str], models: dict[str, Path], given: str
) -> None:
    code, _, err = run(capsys, "run", "--model", str(models["letters"]), "--input", given)
    assert code == 2
    assert err.rstrip().endswith("letters.safetensors)")

"""Residual labels are written by rasp/residual_labels.py and read by transformer/patching.py,
which may not import rasp (layering): the two copies of the quoting rule must agree on every
label, tricky strings included."""

from __future__ import annotations

from typing import Any

import pytest

from rasp import residual_labels as written
from transformer import ModelInputError
from transformer import patching as read

TRICKY = [
    '"',
    '""',
    '"a',
    'a"',
    '"a"',
    "\\",
    '\\"',
    "'",
    ",",
    "a,b",
    ", ",
    ":",
    "a:b",
    "",
    " ",
    "\n",
    "\t",
    "\x00",
    "\x1b[31m",
    "é",
    "日本",
    "😀",
    "\u202e",
    "1",
    "1.0",
    "True",
    "None",
    "[1]",
    "null",
    "-0.0",
]
# value sets as programs have them: strings alone, and strings beside the values whose str they share
SETS: list[list[Any]] = [
    TRICKY,
    ["a", "b", '"c'],
    ["1", 1, "2", 2.5],
    ["True", True, "x"],
    [1, 2.0, "2.0", "a,b", ","],
    ['"1"', "1", 1],
    ["é", "e\u0301", "\\u00e9"],
]


@pytest.mark.parametrize("text", [*TRICKY, *(f'"{t}"' for t in TRICKY), '"\\u00e9"', '"\\"'])
def test_both_layers_read_a_label_text_alike(text: str) -> None:
    assert read._json_string(text) == written._json_string(text)
    for is_quoted in (False, True):
        assert read.label_text(text, is_quoted) == written.text_of(text, is_quoted)


@pytest.mark.parametrize("values", SETS, ids=range(len(SETS)))
def test_a_patch_finds_each_value_in_the_labels_the_compiler_writes(values: list[Any]) -> None:
    texts = written.value_texts(values)
    assert read.quoted(list(texts)) == written.quoted(texts)
    group: list[tuple[int, str | None]] = [(10 + i, text) for i, text in enumerate(texts)]
    for index, value in enumerate(values):
        assert read.label_text(value, read.quoted(list(texts))) == written.text_of(
            value, written.quoted(texts)
        )
        dims, numbers = read._one_hot("s", group, value)
        assert dims == tuple(10 + i for i in range(len(values)))
        assert numbers == tuple(1.0 if i == index else 0.0 for i in range(len(values))), value


def test_values_with_commas_or_blanks_are_listed_apart() -> None:
    texts = written.value_texts(["a,b", ",", " ", "c"])
    group: list[tuple[int, str | None]] = list(enumerate(texts))
    with pytest.raises(ModelInputError) as err:
        read._one_hot("s", group, "z")
    assert (
        str(err.value) == 's has no value \'z\' in the model; its values are ["a,b", ",", " ", "c"]'
    )


def test_a_compiled_model_patches_each_tricky_token() -> None:
    pytest.importorskip("torch")
    import transformer
    from compiler import compile_sop
    from rasp.interpreter import load_file

    vocab = ['"', '"a', ",", ":", "\\", "é", "1", 1]
    program = load_file("programs/reverse.rasp").get("reverse")
    compiled = compile_sop(program, vocab, 3)
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    for token in vocab:  # patching the first token is running the input that starts with it
        hook = model.sop_hook("tokens", token, position=0)
        assert model.run_hooked([[1, ",", ":"]], [hook]) == model.run([[token, ",", ":"]])

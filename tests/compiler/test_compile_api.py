"""`compile_sop` called from Python, as in a notebook: its arguments in the types a researcher
has at hand (numpy arrays), wrong ones refused with a `CompileError` that says what is wrong,
and a `CompiledModel` that shows itself in a line."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import compiler
import transformer
from compiler import compile_sop
from rasp.errors import CompileError, Source
from rasp.interpreter import load_file

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reverse() -> object:
    return load_file(REPO / "programs" / "reverse.rasp").get("reverse")


def test_a_numpy_vocabulary_is_its_list(reverse: object) -> None:
    """`np.array(["a", "b", "c"])` was refused as "the vocabulary is empty", and numpy scalar
    tokens as "vocabulary tokens must be atoms, got np.int64(1)" (the runtime takes numpy
    scalars as their Python kind)."""
    expected = compile_sop(reverse, list("abc"), 4).metadata["vocab"]
    for vocab in (np.array(list("abc")), [np.str_(t) for t in "abc"]):
        compiled = compile_sop(reverse, vocab, 4)  # type: ignore[arg-type]
        assert compiled.metadata["vocab"] == expected
        assert [type(t) for t in compiled.metadata["vocab"]["tokens"]] == [str] * 3
    numbers = compile_sop(reverse, np.arange(1, 4), 4)  # type: ignore[arg-type]
    assert numbers.metadata["vocab"]["tokens"] == [1, 2, 3]
    model = transformer.from_tensors(numbers.weights, numbers.metadata)
    assert model.run([[1, 2, 3]]) == [["3", "2", "1"]]


@pytest.mark.parametrize(
    ("vocab", "kind"),
    [({"a": 1}, "dict"), ((t for t in "ab"), "generator"), (b"ab", "bytes"), (None, "NoneType")],
    ids=["dict", "generator", "bytes", "none"],
)
def test_a_vocabulary_that_is_no_list_of_tokens_says_so(
    reverse: object, vocab: object, kind: str
) -> None:
    """Each was refused as "the vocabulary is empty"."""
    with pytest.raises(CompileError) as info:
        compile_sop(reverse, vocab, 4)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"the vocabulary must be a list, tuple, set or str of tokens, got {kind}"
    )


@pytest.mark.parametrize("limit", ["100", 0, -1, True, float("nan")])
def test_a_parameter_limit_that_is_no_count_is_refused(reverse: object, limit: object) -> None:
    """max_params="100" raised `TypeError: '>' not supported between instances of 'int' and 'str'`; 0 and
    -1 refused every model as over the limit."""
    with pytest.raises(CompileError) as info:
        compile_sop(reverse, list("abc"), 4, max_params=limit)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"max_params must be a number of parameters >= 1, or None for no limit, got {limit!r}"
    )
    assert compile_sop(reverse, list("abc"), 4, max_params=1e9).param_count() > 0


def test_a_source_that_is_no_source_is_refused(reverse: object) -> None:
    """A program's text given as a str raised `AttributeError: 'str' object has no attribute
    'name'` from the assembly, after the whole compile."""
    with pytest.raises(CompileError) as info:
        compile_sop(reverse, list("abc"), 4, source="flip = ...")  # type: ignore[arg-type]
    assert str(info.value) == (
        "source must be a rasp.errors.Source (the program's name and text) or None, got str"
    )
    text = (REPO / "programs" / "reverse.rasp").read_text()
    compiled = compile_sop(reverse, list("abc"), 4, source=Source("reverse.rasp", text))
    assert compiled.metadata["program"]["source"] == text


def test_a_compiled_model_shows_itself_in_a_line(reverse: object) -> None:
    """Its dataclass repr printed every weight array and the whole metadata (the source, the
    reach, the certificate): 62,827 characters for sort at N = 64, in a notebook cell."""
    compiled = compile_sop(reverse, list("abc"), 6, name="reverse")
    text = repr(compiled)
    assert text == (
        "CompiledModel(output='reverse', n_layers=2, heads=2, d_model=13, "
        f"parameters={compiled.param_count()}, max_len=6, vocab=['a', 'b', 'c'], certified=True)"
    )


def test_the_docstring_reads_as_one_block() -> None:
    """One line of compile_sop's docstring was indented less than the rest, so `help()` showed
    every other line indented by four more spaces."""
    lines = inspect.getdoc(compiler.compile_sop).splitlines()  # type: ignore[union-attr]
    assert not any(line.startswith(" ") for line in lines)


@pytest.mark.parametrize("flag", ["causal", "head_masks", "require_certificate"])
def test_a_switch_that_is_no_bool_is_refused(reverse: object, flag: str) -> None:
    """`causal="no"` compiled a causal model: any truthy value counted as True."""
    with pytest.raises(CompileError) as info:
        compile_sop(reverse, list("abc"), 4, **{flag: "no"})  # type: ignore[arg-type]
    assert str(info.value) == f"{flag} must be True or False, got 'no'"
    assert compile_sop(reverse, list("abc"), 3, **{flag: np.bool_(False)}).param_count() > 0


def test_saving_into_a_missing_directory_names_it(reverse: object, tmp_path: Path) -> None:
    """safetensors' own error named the temporary file it writes first (".tmpXYZ")."""
    compiled = compile_sop(reverse, list("abc"), 3)
    with pytest.raises(FileNotFoundError) as info:
        compiled.save(tmp_path / "missing" / "reverse.safetensors")
    assert info.value.filename == str(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        compiled.save(tmp_path)
    compiled.save(tmp_path / "reverse.safetensors")
    assert transformer.load(tmp_path / "reverse.safetensors").run(["abc"]) == [["c", "b", "a"]]

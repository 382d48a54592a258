"""Reading a compiled-model file for the tools (`rasp show`, `export`, `draw`, `run --model`).

`read_model_file` checks a `.safetensors` file with the torch runtime's own reader
(`transformer.read_metadata`: safetensors framing, every metadata field, tensor names, shapes and
dtypes; docs/format.md) and then that every weight is finite, so `show`, `export` and `draw` refuse
exactly the files `rasp run --model` refuses, with the same one-line `ModelFileError` (`PATH:
what is wrong`). Tensor values are read with safetensors into numpy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from rasp.errors import ErrorKind, RaspError


class ModelFileError(RaspError):
    """A model file that is missing, unreadable or not the format of `docs/format.md`."""

    kind = ErrorKind.IO

    def __init__(self, path: str | Path, problem: str, hint: str | None = None) -> None:
        super().__init__(f"{path}: {problem}", hint=hint)  # one line, whatever the problem


class ModelInputRefused(RaspError):
    """An input the model cannot take (a token outside its vocabulary, too long, empty), with the
    runtime's `reason`. The CLI reports it as an error of `--input` (exit 2, `rasp run`'s words);
    elsewhere (the REPL) it reads `cannot run WHAT on this input: REASON`."""

    kind = ErrorKind.IO

    def __init__(
        self, what: str | Path, reason: str, vocab: tuple[Any, ...] = (), hint: str = ""
    ) -> None:
        super().__init__(f"cannot run {what} on this input: {reason}", hint=hint or None)
        self.what, self.reason = str(what), reason
        self.vocab = vocab  # the model's tokens, where known (for a JSON-list hint)

    @classmethod
    def of(cls, what: str | Path, err: Exception, vocab: tuple[Any, ...] = ()) -> ModelInputRefused:
        """The runtime's `ModelInputError` `err`, its reason and its hint kept apart: a command
        that has its own hint for the mistake gives that one, not both."""
        reason, hint = getattr(err, "reason", str(err)), getattr(err, "hint", "")
        return cls(what, reason, vocab, hint)

    def as_argument_error(self, tokens: Sequence[Any], vocab: Sequence[Any] | None = None) -> str:
        """The usage error of `--input` `tokens`, in the same words for every command that takes
        one; `vocab`: the model's tokens where this error does not know them. The hint is the
        command line's own where it has one (`--input '[...]'`), else the runtime's."""
        hint = _json_input_hint(tokens, self.vocab or vocab or ())
        if not hint and self.hint:
            hint = f"; {self.hint}"
        return f"argument --input: {self.reason} ({self.what}){hint}"


def _json_input_hint(tokens: Sequence[Any], vocab: Sequence[Any]) -> str:
    """Where characters were given for a model whose tokens are numbers or booleans (`--input
    123` for the vocabulary [1, 2, 3]), how to write them as those tokens; and where numbers
    were given for one whose tokens are their strings (`--input '[1]'` for ["[", "]", "1"])."""
    if not tokens:
        return ""
    if not all(isinstance(t, str) for t in tokens):
        strings = {t for t in vocab if isinstance(t, str)}
        as_text = [t if isinstance(t, str) else json.dumps(t) for t in tokens]
        if not strings or not all(t in strings for t in as_text):
            return _other_type_hint(tokens, vocab)
        listed = json.dumps(as_text, ensure_ascii=False)
        return f"; its tokens are strings: write the input as strings, --input '{listed}'"
    known = {json.dumps(t) for t in vocab if not isinstance(t, str)}
    if not known or not all(t in known for t in tokens):
        return _words_hint(tokens, vocab) or _separator_hint(tokens, vocab)
    as_json = "[" + ",".join(tokens) + "]"
    return f"; its tokens are not strings: write the input as a JSON list, --input '{as_json}'"


def _words_hint(characters: Sequence[str], vocab: Sequence[Any]) -> str:
    """Where text split into characters names the vocabulary's tokens as words (`--input 'the
    cat'` for ["the", "cat"], `--input '3 1 2'` for [1, 2, 3]): the JSON list of those words."""
    words = "".join(characters).split()
    if not words or words == list(characters):
        return ""
    written = {t if isinstance(t, str) else json.dumps(t): t for t in vocab}
    if not all(w in written for w in words):
        return ""
    if all(len(w) == 1 and isinstance(written[w], str) for w in words):  # `a b` for "abc"
        return f"; text is split into characters, spaces too: --input '{''.join(words)}'"
    listed = "[" + ",".join(json.dumps(written[w], ensure_ascii=False) for w in words) + "]"
    return f"; text is split into characters: write the tokens as a JSON list, --input '{listed}'"


def _separator_hint(characters: Sequence[str], vocab: Sequence[Any]) -> str:
    """Where the characters are the vocabulary's but for commas (`--input 'a,b'`: a comma
    separates no tokens), or but for case (`--input ABC` for "abc"): what to write."""
    strings = {t for t in vocab if isinstance(t, str)}
    unknown = [c for c in characters if c not in strings]
    if not unknown or not strings:
        return ""
    if all(c in _SEPARATORS for c in unknown):
        kept = "".join(c for c in characters if c not in _SEPARATORS)
        return f"; text is split into characters, separators too: --input '{kept}'"
    swapped = [c.swapcase() for c in unknown]
    if all(c != s and s in strings for c, s in zip(unknown, swapped, strict=True)):
        return f'; tokens are case-sensitive: the vocabulary has "{swapped[0]}", not "{unknown[0]}"'
    return ""


_SEPARATORS = frozenset(", ;\t")  # (typed between tokens, as if they separated them)
_KIND = {bool: "a bool", int: "an int", float: "a float", str: "a string"}


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
        f"; a JSON list keeps its types: the vocabulary has {json.dumps(same)} "
        f"({_KIND[type(same)]}), not {json.dumps(unknown)} ({_KIND[type(unknown)]})"
    )


@dataclass(frozen=True)
class ModelFile:
    """A checked model file: its parsed metadata and the shape of every tensor."""

    path: Path
    meta: dict[str, Any]
    shapes: dict[str, tuple[int, ...]]
    # the tensors that differ from the file's `weights_sha256`, the runtime fields that differ
    # from its `fields_sha256` (None: it records none), from the metadata as read
    edited: tuple[str, ...] | None = None
    edited_fields: tuple[str, ...] | None = None

    @property
    def config(self) -> dict[str, Any]:
        return self.meta["config"]

    def tensors(self) -> Iterator[tuple[str, np.ndarray]]:
        """Every tensor, loaded one at a time (float32 numpy arrays)."""
        from safetensors import safe_open

        with safe_open(str(self.path), "np") as handle:
            for name in sorted(self.shapes):
                yield name, handle.get_tensor(name)


def expected_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensors a file with this config must hold, and their shapes (docs/format.md)."""
    from transformer.fileformat import tensor_shapes

    return tensor_shapes(config)


def read_model_file(path: str | Path, command: str | None = None) -> ModelFile:
    """Open and check a compiled-model file as the runtime does before running it; raises
    `ModelFileError` with one clear line if it is bad (and a hint where `path` is a RASP program:
    `command`, e.g. "show" or "run --model", is what the user ran)."""
    import transformer
    from transformer.digests import DIGESTS_KEY, differing, edited_fields, tensor_sha256

    try:
        meta = transformer.read_metadata(path)
    except transformer.ModelFormatError as err:
        program = _program_hint(path, command)
        if program is not None:  # say what the file is, not the reader's "implausible header"
            raise ModelFileError(
                err.path, "a RASP program, not a compiled model", program
            ) from None
        hint = _export_hint(path, command) or _suffix_hint(path)
        raise ModelFileError(err.path, err.reason, hint) from None
    try:
        from safetensors import safe_open

        with safe_open(str(path), "np") as handle:
            shapes = {name: tuple(handle.get_slice(name).get_shape()) for name in handle.keys()}  # noqa: SIM118
        model = ModelFile(Path(path), meta, shapes)
        found: dict[str, str] = {}
        for name, tensor in model.tensors():
            if not np.isfinite(tensor).all():
                raise ModelFileError(path, f"tensor '{name}' contains NaN or infinite values")
            found[name] = tensor_sha256(tensor)
        model = replace(
            model,
            edited=differing(meta.get(DIGESTS_KEY), found),
            edited_fields=edited_fields(meta),
        )
    except ModelFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - safetensors raises several private error types
        raise ModelFileError(path, f"not a valid safetensors file ({_first_line(exc)})") from None
    return model


# What else the user may have meant, by command, where a program was given for a model.
_INSTEAD = {
    "run --model": "or run the program itself: `rasp run {path} --input INPUT`",
    "verify --model": "or leave out --model to compile and verify the program: `rasp verify {path} "
    "--vocab VOCAB --max-len N`",
}


def _program_hint(path: str | Path, command: str | None) -> str | None:
    """For a `.rasp` program where a compiled model was expected (`rasp show reverse.rasp`): how to
    make the model. The reader's own words ("implausible header length ...") do not say."""
    program = Path(path)
    if program.suffix != ".rasp" or not program.is_file():
        return None
    who = f"`rasp {command}`" if command else "This command"
    model = program.with_suffix(".safetensors").name
    hint = (
        f"{who} takes a compiled model (.safetensors): "
        f"compile one first, `rasp compile {path} --vocab VOCAB --max-len N -o {model}`"
    )
    instead = _INSTEAD.get(command or "")
    return hint + (f", {instead.format(path=path)}" if instead else "")


def _suffix_hint(path: str | Path) -> str | None:
    """`rasp show reverse`: the model the user most likely meant."""
    given = Path(path)
    if given.exists() or given.suffix == ".safetensors":
        return None
    if given.with_name(given.name + ".safetensors").is_file():
        return f"did you mean {path}.safetensors?"
    return None


def _export_hint(path: str | Path, command: str | None) -> str | None:
    """For one of the files `rasp export` writes (`rasp run --model tl_reverse/model.safetensors`):
    the export's weights carry no rasp-forge metadata, so name the compiled model it came from (its
    rasp_forge.json records it). The reader's own words ("not a rasp-forge model") do not say."""
    given = Path(path)
    guide = given.with_name("rasp_forge.json")
    if given.name not in ("model.safetensors", "config.json", "rasp_forge.json"):
        return None
    try:
        source = json.loads(guide.read_text(encoding="utf-8")).get("source_model")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(source, str):
        return None
    who = f"`rasp {command}`" if command else "This command"
    return (
        f"{path} belongs to a TransformerLens export, which holds no rasp-forge model; {who} "
        f"takes the compiled model it was exported from, {source} (its rasp_forge.json says)"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]

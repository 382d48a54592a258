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
from typing import TYPE_CHECKING, Any

import numpy as np

from rasp.errors import ErrorKind, RaspError

if TYPE_CHECKING:
    from rasp.tools.input_hints import Spell


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
        from rasp.tools.input_hints import cli_input

        hint = self.input_hint(tokens, cli_input, vocab) or self.hint
        return f"argument --input: {self.reason} ({self.what})" + (f"; {hint}" if hint else "")

    def input_hint(
        self, tokens: Sequence[Any], spell: Spell, vocab: Sequence[Any] | None = None
    ) -> str:
        """How to write `tokens` so that the model takes them, as `spell` types an input ("":
        no one fix fits; `rasp.tools.input_hints`)."""
        from rasp.tools.input_hints import input_hint

        return input_hint(tokens, self.vocab or vocab or (), spell)


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
    folder = given.is_dir()  # (`rasp show tl_reverse`: the export's directory itself)
    guide = given / "rasp_forge.json" if folder else given.with_name("rasp_forge.json")
    if not folder and given.name not in ("model.safetensors", "config.json", "rasp_forge.json"):
        return None
    try:
        source = json.loads(guide.read_text(encoding="utf-8")).get("source_model")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(source, str):
        return None
    who = f"`rasp {command}`" if command else "This command"
    what = "is" if folder else "belongs to"
    return (
        f"{path} {what} a TransformerLens export, which holds no rasp-forge model; {who} "
        f"takes the compiled model it was exported from, {source} (its rasp_forge.json says)"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]

"""The `rasp_forge` JSON metadata of a compiled-model file, checked field by field.

Every problem becomes one `ModelFormatError` line naming the field (`config.d_model`,
`vocab.tokens`, ...), what it should be and what the file holds. Unknown top-level fields are
ignored (they can only add information); unknown `config` fields are refused, since they could
change the computation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from math import isfinite
from typing import Any

from transformer.config import HEAD_MASKS, LayerShape, ModelConfig
from transformer.decoding import OutputEncoding, OutputSpec, OutputType
from transformer.errors import ModelFormatError
from transformer.fileformat import FORMAT_NAME, FORMAT_VERSION
from transformer.vocab import Atom, Vocab, token_key


@dataclass(frozen=True)
class HeadOp:
    """The program operation one attention head computes."""

    head: int
    name: str
    op: str


@dataclass(frozen=True)
class MlpOp:
    name: str
    op: str


@dataclass(frozen=True)
class LayerOps:
    """What block `l` computes: its heads' operations, then its MLP's."""

    attn: tuple[HeadOp, ...]
    mlp: tuple[MlpOp, ...]


@dataclass(frozen=True)
class ProgramInfo:
    file: str | None
    source: str | None
    sha256: str | None


@dataclass(frozen=True)
class ModelMetadata:
    """Everything the file says besides its tensors."""

    format_version: int
    compiler_version: str
    config: ModelConfig
    vocab: Vocab
    output: OutputSpec
    residual: tuple[str, ...]  # residual[d] labels dimension d: "name:value" or "name"
    layers: tuple[LayerOps, ...]
    program: ProgramInfo | None
    raw: dict[str, Any] = field(compare=False, repr=False)  # the JSON object as read

    @property
    def max_len(self) -> int:
        return self.vocab.max_len


_INT_FIELDS = (
    "n_layers",
    "d_model",
    "n_heads",
    "d_head",
    "d_mlp",
    "n_ctx",
    "d_vocab",
    "d_vocab_out",
)
_POSITIVE_FIELDS = ("d_model", "n_ctx", "d_vocab", "d_vocab_out")
_OPTIONAL = {"layers", "positional"}  # config fields of format versions 2 and 3


class _Checker:
    """Reads typed fields out of the JSON, raising `ModelFormatError` that names the field."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, reason: str) -> ModelFormatError:
        return ModelFormatError(self.path, reason)

    def get(self, obj: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
        if key not in obj:
            raise self.fail(f"metadata is missing '{where}{key}'")
        value = obj[key]
        # bool is an int in Python, but never a valid count or id here.
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
            raise self.fail(
                f"metadata field '{where}{key}' must be {_kind_name(kind)}, got {_json(value)}"
            )
        return value

    def atoms(self, values: list[Any], where: str, *, allow_null: bool) -> tuple[Atom, ...]:
        kinds: tuple[type, ...] = (str, int, float, bool) + ((type(None),) if allow_null else ())
        for value in values:
            if not isinstance(value, kinds) or (isinstance(value, float) and not isfinite(value)):
                raise self.fail(
                    f"metadata field '{where}' holds {_json(value)}, which is not a token value"
                )
        keys = [token_key(value) for value in values]
        if len(set(keys)) != len(keys):
            raise self.fail(f"metadata field '{where}' lists a value twice")
        return tuple(values)


def parse_metadata(path: str, text: str) -> ModelMetadata:
    """Parse and check the `rasp_forge` JSON of the file at `path`."""
    check = _Checker(path)
    try:
        raw = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as err:
        raise check.fail(
            f"the 'rasp_forge' metadata is not valid JSON ({err.msg} at char {err.pos})"
        ) from None
    except (ValueError, RecursionError):  # NaN/Infinity literals, absurd nesting
        raise check.fail("the 'rasp_forge' metadata is not valid JSON") from None
    if not isinstance(raw, dict):
        raise check.fail("the 'rasp_forge' metadata is not a JSON object")
    if raw.get("format") != FORMAT_NAME:
        raise check.fail(
            f"metadata 'format' is {_json(raw.get('format'))}, expected \"{FORMAT_NAME}\""
        )
    version = check.get(raw, "format_version", "", int)
    if version > FORMAT_VERSION:
        raise check.fail(
            f"written in model format version {version}, but this rasp-forge reads versions up to "
            f"{FORMAT_VERSION}; upgrade rasp-forge or recompile the program"
        )
    if version < 1:
        raise check.fail(f"metadata 'format_version' must be at least 1, got {version}")
    config = _parse_config(check, check.get(raw, "config", "", dict))
    if config.layers and version < 2:
        raise check.fail("metadata 'config.layers' needs 'format_version' 2 or later")
    if config.has_masks and version < 3:
        raise check.fail("metadata 'config.layers[].masks' needs 'format_version' 3 or later")
    if not config.positional and version < 3:
        raise check.fail("metadata 'config.positional' false needs 'format_version' 3 or later")
    max_len = check.get(raw, "max_len", "", int)
    if max_len < 1 or config.n_ctx != max_len + 1:
        raise check.fail(
            f"'max_len' is {max_len} but 'config.n_ctx' is {config.n_ctx}; "
            "expected n_ctx = max_len + 1"
        )
    residual = check.get(raw, "residual", "", list)
    if len(residual) != config.d_model or not all(isinstance(label, str) for label in residual):
        raise check.fail(
            f"'residual' must hold d_model = {config.d_model} string labels, "
            f"got {len(residual)} entries"
        )
    layers = check.get(raw, "layers", "", list)
    return ModelMetadata(
        format_version=version,
        compiler_version=check.get(raw, "compiler_version", "", str),
        config=config,
        vocab=_parse_vocab(check, check.get(raw, "vocab", "", dict), config, max_len),
        output=_parse_output(check, check.get(raw, "output", "", dict), config, version, max_len),
        residual=tuple(residual),
        layers=_parse_layers(check, layers, config),
        program=_parse_program(check, raw.get("program")),
        raw=raw,
    )


def _parse_config(check: _Checker, obj: dict[str, Any]) -> ModelConfig:
    unknown = sorted(
        set(obj) - set(_INT_FIELDS) - {"act_fn", "normalization_type", "attention_dir"} - _OPTIONAL
    )
    if unknown:
        raise check.fail(f"metadata 'config' has unknown field(s) {', '.join(unknown)}")
    sizes = {name: check.get(obj, name, "config.", int) for name in _INT_FIELDS}
    for name, value in sizes.items():
        least = 1 if name in _POSITIVE_FIELDS else 0
        if value < least:
            raise check.fail(
                f"metadata field 'config.{name}' must be at least {least}, got {value}"
            )
    if sizes["n_heads"] > 0 and sizes["d_head"] == 0:
        raise check.fail("metadata field 'config.d_head' must be at least 1 when n_heads > 0")
    if obj.get("act_fn", "relu") != "relu":
        raise check.fail(f"'config.act_fn' is {_json(obj['act_fn'])}; compiled models use \"relu\"")
    if obj.get("normalization_type") is not None:
        raise check.fail(
            f"'config.normalization_type' is {_json(obj['normalization_type'])}; "
            "compiled models have none"
        )
    direction = obj.get("attention_dir", "bidirectional")
    if direction not in ("bidirectional", "causal"):
        raise check.fail(
            f'\'config.attention_dir\' must be "bidirectional" or "causal", got {_json(direction)}'
        )
    shapes = _parse_shapes(check, obj.get("layers"), sizes)
    positional = obj.get("positional", True)
    if not isinstance(positional, bool):
        raise check.fail(
            f"metadata field 'config.positional' must be true or false, got {_json(positional)}"
        )
    return ModelConfig(**sizes, attention_dir=direction, layers=shapes, positional=positional)


def _parse_shapes(check: _Checker, layers: Any, sizes: dict[str, int]) -> tuple[LayerShape, ...]:
    """`config.layers` (format version 2): each block's n_heads, d_head and d_mlp, within the
    config's maxima, which some layer attains."""
    if layers is None:
        return ()
    if not isinstance(layers, list) or len(layers) != sizes["n_layers"]:
        raise check.fail(
            f"metadata field 'config.layers' must list one shape per layer "
            f"({sizes['n_layers']}), got {_json(layers)}"
        )
    shapes = []
    for index, layer in enumerate(layers):
        where = f"config.layers[{index}]."
        if not isinstance(layer, dict) or not {"n_heads", "d_head", "d_mlp"} <= set(layer) <= {
            "n_heads",
            "d_head",
            "d_mlp",
            "masks",
        }:
            raise check.fail(
                f"metadata field 'config.layers[{index}]' must be an object with n_heads, d_head "
                f"and d_mlp (and optionally masks), got {_json(layer)}"
            )
        shape = {key: check.get(layer, key, where, int) for key in ("n_heads", "d_head", "d_mlp")}
        for key, value in shape.items():
            if not 0 <= value <= sizes[key]:
                raise check.fail(
                    f"metadata field '{where}{key}' must lie in 0..{sizes[key]} "
                    f"(config.{key}), got {value}"
                )
        if shape["n_heads"] > 0 and shape["d_head"] == 0:
            raise check.fail(f"metadata field '{where}d_head' must be at least 1 when n_heads > 0")
        masks = layer.get("masks", [])
        if (
            not isinstance(masks, list)
            or (masks and len(masks) != shape["n_heads"])
            or not all(isinstance(m, str) and m in HEAD_MASKS for m in masks)
        ):
            raise check.fail(
                f"metadata field '{where}masks' must list one of "
                f"{', '.join(_json(m) for m in HEAD_MASKS)} per head ({shape['n_heads']}), "
                f"got {_json(masks)}"
            )
        shapes.append(LayerShape(**shape, masks=tuple(masks)))
    return tuple(shapes)


def _parse_vocab(check: _Checker, obj: dict[str, Any], config: ModelConfig, max_len: int) -> Vocab:
    tokens = check.atoms(check.get(obj, "tokens", "vocab.", list), "vocab.tokens", allow_null=False)
    bos_id, pad_id = (
        check.get(obj, "bos_id", "vocab.", int),
        check.get(obj, "pad_id", "vocab.", int),
    )
    if (bos_id, pad_id) != (len(tokens), len(tokens) + 1):
        raise check.fail(
            f"'vocab.bos_id' and 'vocab.pad_id' must follow the {len(tokens)} tokens "
            f"({len(tokens)} and {len(tokens) + 1}), got {bos_id} and {pad_id}"
        )
    if config.d_vocab != len(tokens) + 2:
        raise check.fail(
            f"'config.d_vocab' is {config.d_vocab}; "
            f"{len(tokens)} tokens + BOS + PAD need {len(tokens) + 2}"
        )
    return Vocab(tokens, bos_id, pad_id, max_len)


def _parse_output(
    check: _Checker, obj: dict[str, Any], config: ModelConfig, version: int, max_len: int
) -> OutputSpec:
    name = check.get(obj, "name", "output.", str)
    encoding_text, type_text = (
        check.get(obj, "encoding", "output.", str),
        check.get(obj, "type", "output.", str),
    )
    try:
        encoding, out_type = OutputEncoding(encoding_text), OutputType(type_text)
    except ValueError:
        raise check.fail(
            f"'output.encoding'/'output.type' are {_json(encoding_text)}/{_json(type_text)}; "
            "expected "
            "categorical|numerical and ints|floats|strings|bools"
        ) from None
    values = None
    if "values" in obj or encoding is OutputEncoding.CATEGORICAL:
        values = check.atoms(
            check.get(obj, "values", "output.", list), "output.values", allow_null=True
        )
    if encoding is OutputEncoding.CATEGORICAL and len(values or ()) != config.d_vocab_out:
        raise check.fail(
            f"'output.values' lists {len(values or ())} values "
            f"but 'config.d_vocab_out' is {config.d_vocab_out}"
        )
    if encoding is OutputEncoding.NUMERICAL:
        if config.d_vocab_out != 1:
            raise check.fail(
                f"a numerical output needs 'config.d_vocab_out' = 1, got {config.d_vocab_out}"
            )
        if values is not None and (not values or not all(_is_number(v) for v in values)):
            raise check.fail(
                "a numerical output's 'output.values' must be a non-empty list of numbers"
            )
        if values is None and out_type is OutputType.STRINGS:
            raise check.fail("a numerical output of type 'strings' needs 'output.values'")
    grids: dict[str, tuple[int, ...]] = {}
    for key, (since, per) in _GRID_FIELDS.items():
        if key in obj:
            grids[key] = _parse_denominators(
                check, obj, key, since, per, encoding, out_type, version, max_len
            )
            if values is not None:
                raise check.fail(f"'output.values' and 'output.{key}' exclude each other")
    if len(grids) > 1:
        first, second = list(grids)[:2]
        raise check.fail(f"'output.{first}' and 'output.{second}' exclude each other")
    int_positions: tuple[int, ...] = ()
    if "int_positions" in obj:
        int_positions = _parse_int_positions(check, obj, grids, version, max_len)
    whole_types: tuple[str, ...] = ()
    if "whole_types" in obj:
        if encoding is not OutputEncoding.NUMERICAL or (values is None and not grids):
            raise check.fail(
                "'output.whole_types' needs a numerical output with 'output.values' or a grid"
            )
        whole_types = _parse_whole_types(check, obj, version, max_len)
    return OutputSpec(
        name,
        encoding,
        out_type,
        values,
        grids.get("denominators"),
        grids.get("length_denominators"),
        grids.get("end_denominators"),
        int_positions,
        whole_types,
    )


def _parse_whole_types(
    check: _Checker, obj: dict[str, Any], version: int, max_len: int
) -> tuple[str, ...]:
    """`output.whole_types` (format version 7): per input length n = 1..max_len, n flags, one
    per program position: "i" a whole number decodes as an int there, "f" as a float, "." as
    the values or grid say."""
    if version < 7:
        raise check.fail("metadata 'output.whole_types' needs 'format_version' 7 or later")
    raw = check.get(obj, "whole_types", "output.", list)
    if len(raw) != max_len or not all(
        isinstance(row, str) and len(row) == n and set(row) <= set("if.")
        for n, row in enumerate(raw, start=1)
    ):
        raise check.fail(
            f"'output.whole_types' must hold {max_len} strings, the n-th of n characters "
            "'i', 'f' or '.' (one per position of an input of length n)"
        )
    return tuple(raw)


def _parse_int_positions(
    check: _Checker,
    obj: dict[str, Any],
    grids: dict[str, tuple[int, ...]],
    version: int,
    max_len: int,
) -> tuple[int, ...]:
    """`output.int_positions` (format version 6): the program positions a per-length or
    from-the-end grid decodes as ints (round(x * d) / d is a whole number there), increasing."""
    if version < 6:
        raise check.fail("metadata 'output.int_positions' needs 'format_version' 6 or later")
    if not ({"length_denominators", "end_denominators"} & set(grids)):
        grids_text = "'output.length_denominators' or 'output.end_denominators'"
        raise check.fail(f"'output.int_positions' needs {grids_text}")
    raw = check.get(obj, "int_positions", "output.", list)
    if not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < max_len for i in raw
    ) or any(a >= b for a, b in zip(raw, raw[1:])):
        raise check.fail(
            f"'output.int_positions' must list increasing program positions 0..{max_len - 1}"
        )
    return tuple(raw)


# output grid field -> (the format version that introduced it, what its entries are per)
_GRID_FIELDS = {
    "denominators": (4, "program position"),
    "length_denominators": (5, "input length 1..max_len"),
    "end_denominators": (5, "distance from the end n - 1 - i = 0..max_len-1"),
}


def _parse_denominators(
    check: _Checker,
    obj: dict[str, Any],
    key: str,
    since: int,
    per: str,
    encoding: OutputEncoding,
    out_type: OutputType,
    version: int,
    max_len: int,
) -> tuple[int, ...]:
    """An output grid (docs/format.md): `output.denominators` (format version 4), one whole
    d_i >= 1 per program position, position i decoding as round(x * d_i) / d_i; or
    `output.length_denominators` (version 5), one e_n per input length n = 1..max_len, every
    position of an input of length n decoding as round(x * e_n) / e_n; or
    `output.end_denominators` (version 5), one f_k per k = n - 1 - i = 0..max_len-1, position i of
    an input of length n decoding as round(x * f_k) / f_k."""
    if version < since:
        raise check.fail(f"metadata 'output.{key}' needs 'format_version' {since} or later")
    if encoding is not OutputEncoding.NUMERICAL or out_type not in (
        OutputType.INTS,
        OutputType.FLOATS,
    ):
        raise check.fail(f"'output.{key}' needs a numerical output of type ints or floats")
    raw = check.get(obj, key, "output.", list)
    if len(raw) != max_len or not all(
        isinstance(d, int) and not isinstance(d, bool) and 1 <= d < 2**31 for d in raw
    ):
        raise check.fail(
            f"'output.{key}' must list max_len = {max_len} whole numbers >= 1 (one per {per})"
        )
    return tuple(raw)


def _parse_layers(check: _Checker, layers: list[Any], config: ModelConfig) -> tuple[LayerOps, ...]:
    if len(layers) != config.n_layers:
        raise check.fail(
            f"'layers' describes {len(layers)} blocks but 'config.n_layers' is {config.n_layers}"
        )
    parsed = []
    for index, layer in enumerate(layers):
        where = f"layers[{index}]."
        if not isinstance(layer, dict):
            raise check.fail(f"metadata field 'layers[{index}]' must be an object")
        heads = []
        for entry in check.get(layer, "attn", where, list):
            if not isinstance(entry, dict):
                raise check.fail(f"metadata field '{where}attn' must hold objects")
            head = check.get(entry, "head", f"{where}attn.", int)
            n_heads = config.layer(index).n_heads
            if not 0 <= head < n_heads:
                raise check.fail(
                    f"'{where}attn' names head {head}, but layer {index} has {n_heads} heads"
                )
            heads.append(
                HeadOp(
                    head,
                    check.get(entry, "name", f"{where}attn.", str),
                    check.get(entry, "op", f"{where}attn.", str),
                )
            )
        mlps = []
        for entry in check.get(layer, "mlp", where, list):
            if not isinstance(entry, dict):
                raise check.fail(f"metadata field '{where}mlp' must hold objects")
            mlps.append(
                MlpOp(
                    check.get(entry, "name", f"{where}mlp.", str),
                    check.get(entry, "op", f"{where}mlp.", str),
                )
            )
        parsed.append(LayerOps(tuple(heads), tuple(mlps)))
    return tuple(parsed)


def _parse_program(check: _Checker, obj: Any) -> ProgramInfo | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise check.fail("metadata field 'program' must be an object")
    fields = {}
    for key in ("file", "source", "sha256"):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise check.fail(f"metadata field 'program.{key}' must be a string, got {_json(value)}")
        fields[key] = value
    info = ProgramInfo(**fields)
    if (
        info.source is not None
        and info.sha256 is not None
        and hashlib.sha256(info.source.encode("utf-8")).hexdigest() != info.sha256.lower()
    ):
        raise check.fail(
            "'program.sha256' does not match 'program.source' (the metadata was edited)"
        )
    return info


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float)  # bools count: a numerical `bools` output snaps to 0/1


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {
        int: "an integer",
        str: "a string",
        list: "a list",
        dict: "an object",
        float: "a number",
    }
    return " or ".join(names.get(k, k.__name__) for k in _as_tuple(kind))


def _json(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."

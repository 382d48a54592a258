"""The `rasp_forge` JSON metadata of a compiled-model file, checked field by field.

Every problem becomes one `ModelFormatError` line naming the field (`config.d_model`,
`vocab.tokens`, ...), what it should be and what the file holds. Unknown top-level fields are
ignored (they can only add information); unknown `config` fields are refused, since they could
change the computation. The optional fields the tools read (`certificate`, `embedding`, ...) are
checked for shape in `transformer.extra_metadata`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any

from transformer import residual_values
from transformer.config import HEAD_MASKS, LayerShape, ModelConfig
from transformer.decoding import OutputSpec
from transformer.extra_metadata import check_extra_fields, decoder_error_bound
from transformer.fileformat import FORMAT_NAME, FORMAT_VERSION
from transformer.metadata_checks import Checker, json_text
from transformer.output_metadata import parse_output
from transformer.vocab import Vocab


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
    # per residual dim, (typed value,) of a one-hot column, else None; None: the file records none
    # (compilers before 2026-12-06): `transformer.residual_values`
    residual_values: tuple[tuple[Any] | None, ...] | None = field(default=None, repr=False)

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


def parse_metadata(path: str, text: str) -> ModelMetadata:
    """Parse and check the `rasp_forge` JSON of the file at `path`."""
    check = Checker(path)
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
            f"metadata 'format' is {json_text(raw.get('format'))}, expected \"{FORMAT_NAME}\""
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
    check_extra_fields(check, raw)
    return ModelMetadata(
        format_version=version,
        compiler_version=check.get(raw, "compiler_version", "", str),
        config=config,
        vocab=_parse_vocab(check, check.get(raw, "vocab", "", dict), config, max_len),
        output=replace(
            parse_output(
                check, check.get(raw, "output", "", dict), config.d_vocab_out, version, max_len
            ),
            error_bound=decoder_error_bound(raw),
        ),
        residual=tuple(residual),
        layers=_parse_layers(check, layers, config),
        program=_parse_program(check, raw.get("program")),
        raw=raw,
        residual_values=residual_values.parse(check, raw, residual),
    )


def _parse_config(check: Checker, obj: dict[str, Any]) -> ModelConfig:
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
        raise check.fail(
            f"'config.act_fn' is {json_text(obj['act_fn'])}; compiled models use \"relu\""
        )
    if obj.get("normalization_type") is not None:
        raise check.fail(
            f"'config.normalization_type' is {json_text(obj['normalization_type'])}; "
            "compiled models have none"
        )
    direction = obj.get("attention_dir", "bidirectional")
    if direction not in ("bidirectional", "causal"):
        raise check.fail(
            f'\'config.attention_dir\' must be "bidirectional" or "causal", got {json_text(direction)}'
        )
    shapes = _parse_shapes(check, obj.get("layers"), sizes)
    _check_maxima(check, sizes, shapes)
    positional = obj.get("positional", True)
    if not isinstance(positional, bool):
        raise check.fail(
            f"metadata field 'config.positional' must be true or false, got {json_text(positional)}"
        )
    return ModelConfig(**sizes, attention_dir=direction, layers=shapes, positional=positional)


def _check_maxima(check: Checker, sizes: dict[str, int], shapes: tuple[LayerShape, ...]) -> None:
    """`config.n_heads`, `d_head` and `d_mlp` are the layers' maxima (0 or 1 where no layer has
    any): TransformerLens's uniform layout pads every layer to them, so one no layer attains
    would have `rasp export` allocate from a number nothing else checks."""
    maxima = LayerShape(sizes["n_heads"], sizes["d_head"], sizes["d_mlp"])
    layers = shapes or (maxima,) * sizes["n_layers"]  # format version 1: every layer has them
    largest = {
        "n_heads": max((shape.n_heads for shape in layers), default=0),
        # a layer without heads stores no head, whatever its d_head says
        "d_head": max((shape.d_head for shape in layers if shape.n_heads), default=0),
        "d_mlp": max((shape.d_mlp for shape in layers), default=0),
    }
    for key, most in largest.items():
        if sizes[key] != most and not (most == 0 and sizes[key] <= 1):
            of = "a layer with heads" if key == "d_head" else "any layer"
            raise check.fail(
                f"metadata field 'config.{key}' is {sizes[key]}, but the largest {key} of {of} "
                f"is {most}; config.n_heads, d_head and d_mlp must be the layers' maxima"
            )


def _parse_shapes(check: Checker, layers: Any, sizes: dict[str, int]) -> tuple[LayerShape, ...]:
    """`config.layers` (format version 2): each block's n_heads, d_head and d_mlp, within the
    config's maxima (which some layer attains: `_check_maxima`)."""
    if layers is None:
        return ()
    if not isinstance(layers, list) or len(layers) != sizes["n_layers"]:
        raise check.fail(
            f"metadata field 'config.layers' must list one shape per layer "
            f"({sizes['n_layers']}), got {json_text(layers)}"
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
                f"and d_mlp (and optionally masks), got {json_text(layer)}"
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
                f"{', '.join(json_text(m) for m in HEAD_MASKS)} per head ({shape['n_heads']}), "
                f"got {json_text(masks)}"
            )
        shapes.append(LayerShape(**shape, masks=tuple(masks)))
    return tuple(shapes)


def _parse_vocab(check: Checker, obj: dict[str, Any], config: ModelConfig, max_len: int) -> Vocab:
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


def _parse_layers(check: Checker, layers: list[Any], config: ModelConfig) -> tuple[LayerOps, ...]:
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


def _parse_program(check: Checker, obj: Any) -> ProgramInfo | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise check.fail("metadata field 'program' must be an object")
    fields = {}
    for key in ("file", "source", "sha256"):
        value = obj.get(key)
        if value is not None and not isinstance(value, str):
            raise check.fail(
                f"metadata field 'program.{key}' must be a string, got {json_text(value)}"
            )
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

"""Export a compiled model for TransformerLens (`rasp export M --to transformer-lens -o DIR`).

The file's tensors already carry TransformerLens names and shapes (docs/format.md) and its unembedding
is built from the residual labels, so exporting is: check the file, write the keyword arguments of
TransformerLens's `HookedTransformerConfig` as `config.json`, the vocabulary and output decoder as
`rasp_forge.json`, and copy the tensors to `model.safetensors`. A user then runs

    cfg = HookedTransformerConfig(**json.load(open("DIR/config.json")))
    model = HookedTransformer(cfg)
    model.load_state_dict(safetensors.torch.load_file("DIR/model.safetensors"), strict=False)

(`strict=False` because TransformerLens also keeps mask buffers that are not weights). Inputs are token
ids: BOS first, then the input tokens' ids (`vocab` in rasp_forge.json lists them). This targets
TransformerLens 2.x/3.x: version 4 removed `HookedTransformer`.
Needs safetensors and numpy only, and `transformer.fileformat` (which pads per-layer shapes to
TransformerLens's uniform ones), no torch (`transformer.interop.to_transformer_lens` gives the same
config, plus a torch dtype, for users who already have the runtime loaded).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rasp.errors import ErrorKind, RaspError, option
from rasp.tools.interrupts import held
from rasp.wording import count_text


def to_hooked_transformer_config(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of TransformerLens's `HookedTransformerConfig` for a compiled model."""
    from transformer.fileformat import uniform_d_head, uniform_d_mlp

    config = meta["config"]
    return {
        "n_layers": config["n_layers"],
        "d_model": config["d_model"],
        "d_head": uniform_d_head(config),
        "n_heads": config["n_heads"],
        "d_mlp": uniform_d_mlp(config),  # at least 1: TransformerLens runs no empty MLP
        "d_vocab": config["d_vocab"],
        "d_vocab_out": config["d_vocab_out"],
        "n_ctx": config["n_ctx"],
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": config.get("attention_dir", "bidirectional"),
        "attn_only": False,
        "positional_embedding_type": "standard",
        "default_prepend_bos": False,  # the BOS id is part of the compiled vocabulary, not a tokenizer's
        "use_attn_scale": True,  # scores / sqrt(d_head), as the weights assume
    }


def _check_padded(tensors: dict[str, Any], meta: Mapping[str, Any]) -> None:
    """Padding scales a narrower layer's query (W_Q, b_Q) by sqrt(d_head / its own d_head); where
    that factor is not a power of 2 the scaled weights round, so the padded model is certified
    afresh. A file that is not proved (no certificate, or one that does not hold) has nothing to
    keep: such a padding is refused, since nothing would show the rounded model computes the
    program."""
    from transformer.fileformat import is_power_of_4, uniform_d_head, uniform_d_mlp

    config = meta["config"]
    width = uniform_d_head(config)
    ratios = [width / layer["d_head"] for layer in config.get("layers") or [] if layer["d_head"]]
    if all(is_power_of_4(r) for r in ratios):
        return  # exact powers of 2: the padded model computes the same floats
    scaled = ", ".join(
        f"layer {layer}'s from {shape['d_head']}"
        for layer, shape in enumerate(config.get("layers") or [])
        if shape["d_head"] and not is_power_of_4(width / shape["d_head"])
    )
    padding = f"heads padded to width {width} ({scaled}) scale W_Q and b_Q by a factor that rounds"
    held = meta.get("certificate")
    if not isinstance(held, dict) or held.get("ok") is not True:
        why = (
            "the file holds no certificate"
            if not isinstance(held, dict)
            else "the file is not proved (its certificate does not hold: compiled with "
            "require_certificate=False)"
        )
        raise RaspError(
            f"padding this model to TransformerLens's uniform layer shape cannot be certified: "
            f"{padding}, and {why}, so nothing shows the padded model computes the program",
            hint="run the file with transformer.load (the runtime reads per-layer shapes), or "
            "compile the program with `rasp compile`, which writes a proved model",
            kind=ErrorKind.IO,
        )
    from compiler.certify import recheck

    uniform = dict(meta, config={k: v for k, v in config.items() if k != "layers"})
    uniform["config"]["d_head"] = width
    uniform["config"]["d_mlp"] = uniform_d_mlp(config)
    certificate = recheck(tensors, uniform)
    if certificate.errors:  # not evaluated at all (no reach in the file): nothing was lost
        raise RaspError(
            "padding this model to TransformerLens's uniform layer shape cannot be certified: "
            f"{padding}, and the padded weights cannot be re-checked ({certificate.errors[0]})",
            hint="run the file with transformer.load (the runtime reads per-layer shapes), or "
            "compile the program again with `rasp compile`, which writes what the check reads",
            kind=ErrorKind.IO,
        )
    if not certificate.ok:
        failed = next(iter(certificate.failures()), None)  # (an exact relu at 0 holds)
        then = (
            f": then {failed.sublayer} ({failed.block}) has a {failed.kind} decision of margin "
            f"{failed.margin:.3g} but float32 error up to {failed.bound:.3g}"
            if failed is not None
            else ""
        )
        raise RaspError(
            "padding this model to TransformerLens's uniform layer shape loses its certificate: "
            f"{padding}{then}",
            hint="run the file with transformer.load (the runtime reads per-layer shapes), or "
            "compile for another --max-len (the head widths follow it)",
            kind=ErrorKind.IO,
        )


def _check_padded_size(meta: Mapping[str, Any], path: str | Path, max_params: int) -> None:
    """Refuse, before anything is allocated, a model that TransformerLens's layout (every layer
    the widest's shape, a W_pos of n_ctx rows) makes larger than `max_params` parameters: a file
    without W_pos whose header says max_len 10^8 padded a 6.4 GB W_pos, with no check."""
    from compiler.budget import bytes_text
    from compiler.model import config_params
    from transformer.fileformat import uniform_d_head, uniform_d_mlp

    config = meta["config"]
    d_model, n_ctx, heads = config["d_model"], config["n_ctx"], config["n_heads"]
    width, hidden = uniform_d_head(config), uniform_d_mlp(config)
    layer = {"n_heads": heads, "d_head": width, "d_mlp": hidden}
    padded = config_params({**config, "positional": True, "layers": [layer] * config["n_layers"]})
    if padded <= max_params:
        return
    parts = [
        f"{count_text(config['n_layers'], 'layer')} of {count_text(heads, 'head')} of width "
        f"{width:,} and {count_text(hidden, 'MLP unit')}"
    ]
    if not config.get("positional", True):
        parts.append(f"a W_pos of {n_ctx:,} positions x {d_model:,} (the file has none)")
    raise RaspError(
        f"{path}: padded to TransformerLens's layout the model would have {padded:,} parameters "
        f"({bytes_text(4 * padded)} of float32 weights): {', and '.join(parts)}",
        hint=f"the limit is {max_params:,} parameters: run the file with transformer.load (which "
        f"reads it as it is), or raise the limit ({option('max_params')}) if the machine can "
        "hold it",
        kind=ErrorKind.IO,
    )


def _check_unmasked(meta: Mapping[str, Any], path: str | Path) -> None:
    """TransformerLens has no per-head masks: a model with a masked head would run unmasked there,
    with wrong outputs, so it is refused (naming the head)."""
    for layer, shape in enumerate(meta["config"].get("layers") or []):
        for head, mask in enumerate(shape.get("masks") or []):
            if mask:
                raise RaspError(
                    f"{path}: layer {layer} head {head} sees only the keys whose position is "
                    f"{mask} the query's (a per-head mask), which TransformerLens's "
                    "HookedTransformer cannot express",
                    hint="compile with --no-head-masks for TransformerLens (or, in Python, "
                    "register transformer.interop.mask_hooks(model) on the HookedTransformer)",
                    kind=ErrorKind.IO,
                )


def export_transformer_lens(
    model_path: str | Path,
    out_dir: str | Path,
    max_params: int | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write `config.json`, `rasp_forge.json` and `model.safetensors` into `out_dir`; returns their
    paths. Refused (RaspError) where the padded model would have more than `max_params`
    parameters (None: the compiler's default limit). `warn` is given one line where the file was
    edited after compiling (its digests, docs/format.md), as `rasp run --model` warns."""
    from safetensors.numpy import load_file, save_file

    from compiler.budget import DEFAULT_MAX_PARAMS
    from rasp.tools.model_file import read_model_file
    from rasp.tools.output_files import same_file, user_mode, writing
    from transformer.digests import edited_text
    from transformer.fileformat import uniform_tensors

    checked = read_model_file(model_path, "export")
    if (checked.edited or checked.edited_fields) and warn is not None:
        # the export carries what the file holds, not what its certificate was proved for
        warn(edited_text(str(model_path), checked.edited, checked.edited_fields))
    _check_unmasked(checked.meta, model_path)
    limit = DEFAULT_MAX_PARAMS if max_params is None else max_params
    _check_padded_size(checked.meta, model_path, limit)
    out = Path(out_dir)
    if out.is_symlink() and not out.exists():  # (mkdir said "File exists")
        raise RaspError(
            f"cannot write {out}: it is a link to no directory ({os.readlink(out)})",
            hint="pass a directory with -o",
            kind=ErrorKind.IO,
        )
    if out.exists() and not out.is_dir():
        raise RaspError(
            f"{out} exists and is not a directory",
            hint="pass a directory with -o",
            kind=ErrorKind.IO,
        )
    # TransformerLens gives every layer the same shape: pad the layers that store less (checked
    # before anything is written, so that a refused export leaves nothing behind)
    tensors = uniform_tensors(load_file(str(checked.path)), checked.meta["config"])
    _check_padded(tensors, checked.meta)
    with writing(out):
        out.mkdir(parents=True, exist_ok=True)
    meta = checked.meta
    config = to_hooked_transformer_config(meta)
    # How to feed and read the model: everything but the weights and the program source.
    guide = {
        key: meta[key]
        for key in (
            "vocab",
            "output",
            "residual",
            "residual_values",
            "embedding",
            "layers",
            "max_len",
        )
        if key in meta  # (residual_values: compilers from 2026-12-06)
    }
    guide["source_model"] = str(model_path)
    guide["usage"] = (
        "ids = [vocab.bos_id, id of each token...], a token's id being its index in vocab.tokens "
        "matched by JSON type and value (true is not 1), a shorter input of a batch padded with "
        "vocab.pad_id after its tokens; logits at positions 1..n; "
        "transformer.interop.decode_logits(this file, logits, lengths) decodes them as follows. "
        "categorical: output.values[argmax], undecided where two or more columns share the "
        "largest logit (a compiled model ties only on an input its program has no value for; an "
        "ablation can): decode_logits gives the first there, raises given undecided=RAISE, or "
        "puts its undecided= marker; numerical: the single logit, snapped to the "
        "nearest of output.values when listed (a number listed as both an int and a float, "
        "0 and 0.0, as the int), or at position i read as round(logit * d_i) / d_i "
        "with d_i = output.denominators[i] when those are given (d = "
        "output.length_denominators[n - 1] for every position of an input of length n when "
        "those are, d = output.end_denominators[n - 1 - i] at position i of n when those are, "
        "d = output.pair_denominators[n * (n - 1) / 2 + i] at position i of n when those are); "
        "an int where d is 1 or i is in output.int_positions, else a float; with neither, "
        "output.type decides: ints round half to even, bools are logit > 0.5, floats the logit; "
        "categorical or numerical, where output.whole_types is given, a whole number at position "
        "i of an input of length n is an int if output.whole_types[n - 1][i] is 'i' and a float "
        "if it is 'f'; where output.none_at is given, a numerical output decoded as that listed "
        "number is None; where output.tuples is true (a tracr program's output), a decoded string "
        "that starts with the character U+0000 is a tuple or list, the rest of the string its repr. "
        "residual[d] names dimension d of every hook_resid_* and of hook_embed, hook_pos_embed, "
        "hook_attn_out and hook_mlp_out (name:value, a one-hot column of the s-op name; name, a "
        "number); residual_values[d] is [value] for a one-hot column, the value with its JSON type "
        '(the label tokens:1 is the int 1 or the string "1"), null for any other dimension'
    )
    config_path, guide_path, weights_path = (
        out / "config.json",
        out / "rasp_forge.json",
        out / "model.safetensors",
    )
    for written in (config_path, guide_path, weights_path):  # a model may have any name
        if same_file(model_path, written):
            raise RaspError(
                f"exporting to {out} would replace {model_path} itself with {written}",
                hint="pass another directory with -o",
                kind=ErrorKind.IO,
            )
    # Each file is written under a temporary name, and all three are renamed into place only
    # once every write succeeded: a failed one (a full disk) must not leave this model's config
    # beside an earlier export's weights, which TransformerLens would load as one model.
    staged: list[tuple[Path, Path]] = []
    try:
        for path, write in (
            (config_path, lambda to: to.write_text(json.dumps(config, indent=2) + "\n")),
            (guide_path, lambda to: to.write_text(json.dumps(guide, indent=2) + "\n")),
            (weights_path, lambda to: save_file(tensors, str(to), metadata={"format": "pt"})),
        ):
            partial = path.with_name(f".{path.name}.partial")
            staged.append((partial, path))
            with writing(path):
                write(partial)
        with held():  # (all three renamed, or none: a Ctrl-C waits for the last)
            for partial, path in staged:
                # safetensors writes 0600 files; ours follow the umask (or keep a replaced one's)
                with writing(path), user_mode(path):
                    os.replace(partial, path)
    finally:
        for partial, _ in staged:
            partial.unlink(missing_ok=True)
    return [config_path, guide_path, weights_path]

"""Set one s-op's value in the residual stream: a forward hook built from the residual labels.

    hook = model.sop_hook("tokens", "c", position=0)   # ("blocks.0.hook_resid_pre", SopPatch)
    model.run_hooked(["abc"], [hook])                   # [["c", "b", "c"]] from reverse

`sop_hook` finds the s-op's dimensions by `model.residual_labels` (`name:value` one-hot columns,
or `name` for a number) and the hook point from the weights: by default the residual right after
the last sublayer that writes any of them (so the patch is not added to later), and it refuses a
point before that, or one after which no sublayer reads them (the patch would change nothing).
Where the file's `reach` lists the exact numbers a numerical s-op's companion dimensions hold
per value (`indices` with `indices^2`, `x.int` with `x.sq`: the key side of numerical
addressing), they are written too; a number outside the values the reach lists for the s-op
is refused, as a categorical value without a column is. docs/runtime.md ("Interventions") has
the details.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import warnings
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import torch
from torch import Tensor

from transformer import residual_values
from transformer.errors import ModelInputError
from transformer.hooks import HookPoint
from transformer.model import Transformer

_RESID = re.compile(r"blocks\.(\d+)\.hook_resid_(pre|mid|post)")


class UncheckedPatchWarning(UserWarning):
    """A numerical s-op patched with a number the file cannot check: its reach lists no value set
    for the s-op alone (every block reads it within a sum, `above.sum` = `prefix_mean - mean`, or
    beside another dimension), so the patch may leave the certificate."""


@dataclass(frozen=True)
class SopPatch:
    """The hook function: residual dimensions `dims` set to `numbers` at program position
    `position` (model position + 1; None: every position after BOS) of every row."""

    sop: str
    value: Any
    position: int | None
    dims: tuple[int, ...]
    numbers: tuple[float, ...]

    def __call__(self, value: Tensor, hook: HookPoint) -> None:
        if not _RESID.fullmatch(hook.name):  # its dims index the residual stream only
            raise ModelInputError(
                f"a sop_hook patch for {self.sop} runs at a residual hook "
                f"(blocks.L.hook_resid_pre, _mid or _post), not at {hook.name}"
            )
        n = value.shape[1] - 1  # program positions in this batch
        if self.position is not None and self.position >= n:
            raise ModelInputError(
                f"sop_hook for {self.sop} sets program position {self.position}, but the "
                f"inputs have {n} positions"
            )
        dims = torch.tensor(self.dims, device=value.device)
        numbers = torch.tensor(self.numbers, dtype=value.dtype, device=value.device)
        at = slice(1, None) if self.position is None else self.position + 1
        value[:, at, dims] = numbers  # the run hands hooks a copy (transformer/hooks.py)


def sop_hook(
    model: Transformer,
    labels: tuple[str, ...],
    reach: Any,
    sop: str,
    value: Any,
    position: int | None = None,
    at: int | str | None = None,
    typed: tuple[tuple[Any] | None, ...] | None = None,
) -> tuple[str, SopPatch]:
    """`(hook name, SopPatch)` setting residual group `sop` to `value` (see the module doc);
    `typed`: the file's typed value of each one-hot column (`transformer.residual_values`)."""
    if position is not None and (
        isinstance(position, bool) or not isinstance(position, Integral) or position < 0
    ):
        raise ModelInputError(
            f"position must be a program position (an int >= 0) or None, got {position!r}"
        )
    position = None if position is None else int(position)  # a numpy int too
    max_len = model.cfg.n_ctx - 1
    if position is not None and position >= max_len:  # (no input of this model reaches it)
        raise ModelInputError(
            f"position {position} is past the model's last program position {max_len - 1} "
            f"(max_len {max_len}; positions count from 0, as indices do)"
        )
    groups: dict[str, list[tuple[int, str | None]]] = {}
    for dim, label in enumerate(labels):
        name, colon, text = label.partition(":")
        groups.setdefault(name, []).append((dim, text if colon else None))
    group = groups.get(sop)
    if group is None:
        parts = [name for name in groups if name.startswith(f"{sop}.")]
        if parts == [f"{sop}.frac"] and groups[parts[0]][0][1] is None:
            # a width or length held only as 1/(w + 1): w is written there as that
            dims, numbers = _width(sop, groups[parts[0]][0][0], value, reach)
            stage = _stage(model, sop, dims, at)
            return _hook_name(stage), SopPatch(sop, value, position, dims, numbers)
        if parts:  # sort's target_position: .part0, .part1, .int, .sq, ...
            raise ModelInputError(
                f"{sop} is held only in parts ({', '.join(parts)}): patch the part the later "
                "sublayers read by its name (NAME.int where there is one, docs/runtime.md)"
            )
        name, colon, text = sop.partition(":")
        texts = [t or "" for _, t in groups.get(name, ())]
        if colon and text in texts:  # `tokens:a`, a label, for the s-op `tokens`
            shown = _json_string(text) if quoted(texts) else None
            raise ModelInputError(
                f"{sop!r} is the label of one value's dimension, not a residual group",
                f"name the s-op and give the value: sop_hook({name!r}, "
                f"{text if shown is None else shown!r}, ...)",
            )
        close = difflib.get_close_matches(sop, list(groups), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ModelInputError(
            f"no residual dimension is labelled {sop!r}{hint} (model.residual_labels lists them)"
        )
    if group[0][1] is not None:
        columns = [typed[dim] if typed is not None else None for dim, _ in group]
        if all(column is not None for column in columns):
            dims, numbers = _typed_one_hot(sop, group, [c[0] for c in columns if c], value)
        else:  # a file without typed values (compilers before 2026-12-06): by label text
            dims, numbers = _one_hot(sop, group, value)
    else:
        dims, numbers = _number(sop, group[0][0], value, reach)
    stage = _stage(model, sop, dims, at)
    return _hook_name(stage), SopPatch(sop, value, position, dims, numbers)


def _typed_one_hot(
    sop: str, group: list[tuple[int, str | None]], values: list[Any], value: Any
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Every column of the group 0 and `value`'s 1, its column found by typed value as RASP
    compares values (`residual_values.match`: 1.0 or True for a column 1; "1" never)."""
    found = residual_values.match(values, value)
    if len(found) > 1:  # 1.0 beside the columns 1 and True: which one is meant
        equal = residual_values.listed([values[i] for i in found])
        raise ModelInputError(
            f"{sop} has several values equal to {value!r} ({equal}), one column each",
            "give the value of the column meant, with its type",
        )
    if not found:
        same_text = [v for v in values if str(v) == str(value)]
        raise ModelInputError(
            f"{sop} has no value {value!r} in the model; its values are "
            f"{residual_values.listed(values)}",
            f"{same_text[0]!r} is the {type(same_text[0]).__name__}, not the "
            f"{type(value).__name__} {value!r}"
            if same_text
            else "",
        )
    dims = tuple(dim for dim, _ in group)
    return dims, tuple(1.0 if i == found[0] else 0.0 for i in range(len(dims)))


def _one_hot(
    sop: str, group: list[tuple[int, str | None]], value: Any
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Every column of the group 0 and `value`'s 1, found as docs/format.md writes labels: `str`
    of it, a string as JSON where one of the s-op's labels is a JSON string."""
    texts = [text or "" for _, text in group]
    want = label_text(value, quoted(texts))
    found = [i for i, text in enumerate(texts) if text == want]
    if not found and isinstance(value, int | float) and not isinstance(value, bool):
        found = [i for i, text in enumerate(texts) if _number_of(text) == value]  # 1.0 as "1"
    if len(found) != 1:
        raise ModelInputError(
            f"{sop} has no value {value!r} in the model; its values are {_listed(texts)}"
        )
    dims = tuple(dim for dim, _ in group)
    return dims, tuple(1.0 if i == found[0] else 0.0 for i in range(len(dims)))


def _number(
    sop: str, dim: int, value: Any, reach: Any
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """`value` at the s-op's dimension, and at the companion dimensions a vector reading of the
    file's reach pins per value (`indices^2` beside `indices`); only those values then."""
    if not isinstance(value, int | float) or not math.isfinite(value):
        listed = _listed_numbers(reach, sop, dim)
        raise ModelInputError(
            f"{sop} is numerical: its value must be a finite number, got {value!r}",
            _frac_hint(sop, value, listed)
            or (f"its values are {_shown(listed)}" if listed else ""),
        )
    for reading in _vector_readings(reach, sop, dim):
        labels, terms = reading["labels"], reading["terms"]
        for label, term in zip(labels, terms, strict=True):
            if _number_of(label) == value:
                return tuple(int(d) for d, _ in term), tuple(float(x) for _, x in term)
        others = sorted({int(d) for term in terms for d, _ in term} - {dim})
        raise ModelInputError(
            f"{sop} is read together with dimensions {others}, whose numbers the model lists "
            f"only for the values {', '.join(labels)}; {value!r} is none of them"
        )
    listed = _listed_numbers(reach, sop, dim)
    if not listed and isinstance(reach, dict):
        warnings.warn(
            f"{sop}: the model lists no values of {sop} alone (its blocks read it only together "
            f"with other dimensions), so {value!r} is written unchecked; a number no input gives "
            "there is outside the certificate",
            UncheckedPatchWarning,
            stacklevel=4,
        )
    match = _listed_match(value, listed)
    if listed and match is None:
        # a categorical s-op refuses a value it has no column for; a number no input gives
        # (99 for a count up to 8) would otherwise decode silently to the nearest value
        raise ModelInputError(
            f"{sop} has no value {value!r} in the model: its {len(listed)} values are "
            f"{_shown(listed)}",
            _frac_hint(sop, value, listed)
            or "no input gives that number there, so what the model computes from it is not "
            "certified; write any number with run_with_hooks",
        )
    # the listed number itself (a typed 0.333333333 for 1/3 writes 1/3): what the certificate
    # covers, where the typed one may round to a neighbouring float32
    return (dim,), (float(value) if match is None else match,)


def _width(sop: str, dim: int, value: Any, reach: Any) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Width (or length) `value` of `sop`, held only as `sop.frac` at `dim`: 1/(value + 1) there,
    where the reach lists that number (a width of 0..N; a count beyond is refused, naming them)."""
    frac = f"{sop}.frac"
    listed = _listed_numbers(reach, frac, dim)
    widths = sorted(1 / n - 1 for n in listed if n > 0)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= -1
    ):
        shown = f" ({sop} is {_short(widths[0])}..{_short(widths[-1])} here)" if widths else ""
        raise ModelInputError(
            f"{sop} is a count held only as {frac} = 1/({sop} + 1): its value must be a "
            f"number, got {value!r}{shown}"
        )
    match = _listed_match(1 / (value + 1), listed)
    if listed and match is None:
        raise ModelInputError(
            f"{sop} has no value {value!r} in the model: it is held only as {frac} = "
            f"1/({sop} + 1), whose {len(listed)} values give {sop} = "
            f"{_shown([float(round(w, 9)) for w in widths])}",
            "no input gives that number there, so what the model computes from it is not "
            "certified; write any number with run_with_hooks",
        )
    return (dim,), (1 / (float(value) + 1) if match is None else match,)


def _listed_numbers(reach: Any, sop: str, dim: int) -> list[float]:
    """The numbers the reach lists for a numerical reading `sop` that is dimension `dim` alone
    (the s-op's value set at a real position), sorted; [] where the file lists none."""
    readings = reach.get("readings") if isinstance(reach, dict) else None
    found: set[float] = set()
    for reading in readings if isinstance(readings, list) else ():
        try:
            plain = (
                reading.get("name") == sop
                and not reading.get("categorical")
                and not reading.get("vector")
                and reading["terms"] == [[[dim, 1.0]]]
            )
            if plain:
                found.update(float(n) for n in reading["numbers"] if math.isfinite(float(n)))
        except (TypeError, KeyError, ValueError, AttributeError):
            continue  # informative metadata: a malformed reading is passed over
    return sorted(found)


def _frac_hint(sop: str, value: Any, listed: list[float]) -> str:
    """For `NAME.frac`, which holds 1/(NAME + 1) (a selector width or the length, written by one
    head: compiler/widths.py), the number to write for `value` read as NAME; "" for other s-ops."""
    base = sop.removesuffix(".frac")
    if base == sop or not base:
        return ""
    held = f"{sop} holds 1/({base} + 1), not {base}"
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        if value > -1 and any(_same_number(1 / (value + 1), n) for n in listed):
            return (
                f"{held}: for {base} = {_short(float(value))} write 1 / {_short(value + 1.0)} "
                f"({1 / (value + 1):.6g})"
            )
    widths = [1 / n - 1 for n in listed if n > 0]
    if widths and all(abs(w - round(w)) < 1e-9 for w in widths):
        return f"{held} ({base} is {_short(min(widths))}..{_short(max(widths))} here)"
    return held


def _shown(listed: list[float]) -> str:
    return ", ".join(_short(n) for n in listed[:12]) + (", ..." if len(listed) > 12 else "")


def _listed_match(value: float, listed: list[float]) -> float | None:
    """The listed number `value` is (`_same_number`), the nearest where several are; else None."""
    same = [n for n in listed if _same_number(value, n)]
    return min(same, key=lambda n: abs(n - value)) if same else None


def _same_number(value: float, number: float) -> bool:
    """Equal up to float64 rounding (a typed 2/3 and the analysis' sum of thirds)."""
    return math.isclose(value, number, rel_tol=1e-9, abs_tol=1e-12)


def _short(number: float) -> str:
    return str(int(number)) if number.is_integer() else f"{number:.6g}"


def _vector_readings(reach: Any, sop: str, dim: int) -> list[dict[str, Any]]:
    """The reach's vector readings named `sop` whose first dimension is `dim` (informative
    metadata, so a malformed one is passed over)."""
    readings = reach.get("readings") if isinstance(reach, dict) else None
    found = []
    for reading in readings if isinstance(readings, list) else ():
        try:
            terms, labels = reading["terms"], reading["labels"]
            ok = (
                reading.get("vector") is True
                and reading.get("name") == sop
                and len(terms) == len(labels)
                and all(len(term) > 0 and int(term[0][0]) == dim for term in terms)
                and all(len(pair) == 2 for term in terms for pair in term)
            )
        except (TypeError, KeyError, IndexError, ValueError, AttributeError):
            ok = False
        if ok:
            found.append(reading)
    return found


def _stage(model: Transformer, sop: str, dims: tuple[int, ...], at: int | str | None) -> int:
    """The residual stage to patch at (0: after the embedding, 2l + 1: after block l's attention,
    2l + 2: after block l's MLP), checked against the sublayers that write and read `dims`."""
    writes, reads = _traffic(model, dims)
    last = max(writes, default=0)
    stages = 2 * len(model.blocks)
    if at is None:
        stage = last
    elif isinstance(at, int) and not isinstance(at, bool) and 0 <= at < len(model.blocks):
        stage = 2 * at + 2
    elif (
        isinstance(at, str)
        and (found := _RESID.fullmatch(at))
        and int(found[1]) < len(model.blocks)
    ):
        stage = 2 * int(found[1]) + {"pre": 0, "mid": 1, "post": 2}[found[2]]
    else:
        raise ModelInputError(
            f"at must be a block 0..{len(model.blocks) - 1} (after its MLP) or a residual hook "
            f"name (blocks.L.hook_resid_pre, _mid or _post), got {at!r}"
        )
    if stage < last:
        raise ModelInputError(
            f"{_writer(last)} writes {sop} after {_hook_name(stage)}, adding to the patched "
            f"value; patch at {_hook_name(last)} or later"
        )
    if not any(read >= stage for read in reads):
        readers = ", ".join(_reader(read, stages) for read in sorted(reads)) or "no sublayer"
        raise ModelInputError(
            f"nothing reads {sop} after {_hook_name(stage)} (read by {readers}): the patch would "
            "change no output; patch earlier"
        )
    return stage


def _traffic(model: Transformer, dims: tuple[int, ...]) -> tuple[set[int], set[int]]:
    """The stages at which sublayers write `dims` (their output is in the residual from then on)
    and at which they read them (the residual they take), from the weights' nonzero entries."""
    index = torch.tensor(dims, device=model.embed.W_E.device)

    def touches(matrix: Tensor, axis: int) -> bool:  # any nonzero entry in `dims` along `axis`
        return bool((matrix.index_select(axis, index) != 0).any())

    writes: set[int] = set()
    reads: set[int] = set()
    pos = model.pos_embed.W_pos
    if touches(model.embed.W_E, 1) or (pos is not None and touches(pos, 1)):
        writes.add(0)
    for layer, block in enumerate(model.blocks):
        attn, mlp = block.attn, block.mlp
        if any(touches(w, 1) for w in (attn.W_Q, attn.W_K, attn.W_V)):
            reads.add(2 * layer)
        if touches(attn.W_O, 2) or touches(attn.b_O, 0):
            writes.add(2 * layer + 1)
        if touches(mlp.W_in, 0):
            reads.add(2 * layer + 1)
        if touches(mlp.W_out, 1) or touches(mlp.b_out, 0):
            writes.add(2 * layer + 2)
    if touches(model.unembed.W_U, 0):
        reads.add(2 * len(model.blocks))
    return writes, reads


def _hook_name(stage: int) -> str:
    if stage == 0:
        return "blocks.0.hook_resid_pre"
    return f"blocks.{(stage - 1) // 2}.hook_resid_{'mid' if stage % 2 else 'post'}"


def _writer(stage: int) -> str:
    if stage == 0:
        return "the embedding"
    return f"blocks.{(stage - 1) // 2}.{'attn' if stage % 2 else 'mlp'}"


def _reader(stage: int, last: int) -> str:
    if stage == last:
        return "the unembedding"
    return f"blocks.{stage // 2}.{'mlp' if stage % 2 else 'attn'}"


# How labels quote values: rasp/residual_labels.py's rule, which this layer may not import; a
# test (tests/test_label_quoting.py) holds the two to the same texts.


def quoted(texts: list[str]) -> bool:
    """Whether one s-op's label texts write its strings as JSON (some text is a JSON string)."""
    return any(_json_string(text) is not None for text in texts)


def label_text(value: Any, is_quoted: bool) -> str:
    """`value`'s label text in an s-op whose texts are `is_quoted`."""
    return (
        json.dumps(value, ensure_ascii=False)
        if is_quoted and isinstance(value, str)
        else str(value)
    )


def _listed(texts: list[str]) -> str:
    """The texts for a message: `a, b, c`, or a JSON list where a text holds a comma, blanks or
    a control character (`",", " "` would not read as two values; a newline would split it)."""
    if any("," in text or text != text.strip() or not text.isprintable() for text in texts):
        return json.dumps(texts, ensure_ascii=False)
    return ", ".join(texts)


def _json_string(text: str) -> str | None:
    if not text.startswith('"'):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _number_of(text: str) -> float | None:
    # a number as str writes one; float() alone would also take "1_0" or " 1", strings' labels
    if not _NUMBER.fullmatch(text):
        return None
    return float(text)


_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?|-?inf|nan")

"""Which tensors and runtime fields differ from the digests the compiler recorded
(`weights_sha256`, `fields_sha256`, docs/format.md).

The certificate proves the weights the compiler wrote, run and decoded as the metadata it wrote
says; a file edited afterwards runs, but must not present that certificate as its own. The
compiler records the SHA-256 of each tensor's float32 bytes (little-endian, C order) and of each
field the runtime reads (`RUNTIME_FIELDS`, as JSON with sorted keys) beside it; a reader compares.
The digests can be rewritten with the rest, so this catches an edit, not an adversary: `rasp
verify --model` re-proves the certificate from the weights whatever the digests say.

Needs only numpy (no torch): `rasp show` checks a file without importing it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from transformer.metadata_checks import Checker, json_text

DIGESTS_KEY = "weights_sha256"
FIELDS_KEY = "fields_sha256"
# What the runtime reads besides the tensors to compute and decode: an edit there changes outputs.
RUNTIME_FIELDS = ("config", "max_len", "vocab", "output")
_HEX = re.compile(r"[0-9a-f]{64}")


class EditedWeightsWarning(UserWarning):
    """A loaded model's tensors or runtime fields differ from the digests its compiler recorded:
    its certificate does not cover them (`CompiledTransformer.edited_tensors` and `edited_fields`
    name them)."""


def tensor_sha256(array: Any) -> str:
    """The hex SHA-256 of a tensor's values as the file stores them: float32, little-endian,
    C order (the compiler's `compiler.model.tensor_sha256` computes the same)."""
    # hashed through the buffer: `tobytes` copied every tensor first, 3x slower at 100M parameters
    return hashlib.sha256(np.ascontiguousarray(array, dtype="<f4")).hexdigest()


def check_digests_field(check: Checker, raw: Mapping[str, Any]) -> None:
    """Refuse a `weights_sha256` or `fields_sha256` that is not an object of 64-digit lowercase
    hex strings."""
    for key, what in ((DIGESTS_KEY, "tensor"), (FIELDS_KEY, "field")):
        digests = raw.get(key)
        if digests is None:
            continue  # files written before 2026-12-05 have none
        must = (
            f"metadata field '{key}' must map {what} names to SHA-256 digests "
            "(64 lowercase hex digits)"
        )
        if not isinstance(digests, dict):
            raise check.fail(f"{must}, got {json_text(digests)}")
        for name, value in digests.items():
            if not (isinstance(value, str) and _HEX.fullmatch(value)):
                # the entry itself: the object's first 60 characters showed valid ones
                raise check.fail(f"{must}, got {json_text(value)} for {json_text(name)}")


def edited_tensors(
    recorded: Mapping[str, str] | None, tensors: Iterable[tuple[str, Any]]
) -> tuple[str, ...] | None:
    """The names, sorted, of the tensors whose digest differs from `recorded` (or that it does not
    list; a tensor it lists that is absent fails the tensor-table check first); None where
    nothing is recorded."""
    return differing(recorded, {name: tensor_sha256(array) for name, array in tensors})


def differing(
    recorded: Mapping[str, str] | None, found: Mapping[str, str]
) -> tuple[str, ...] | None:
    """`edited_tensors` from the digests `found` (name -> hex) of a file's tensors."""
    if recorded is None:
        return None
    return tuple(sorted(name for name, digest in found.items() if recorded.get(name) != digest))


def field_sha256(value: Any) -> str:
    """The hex SHA-256 of a metadata field's value as JSON with sorted keys (`json.dumps`'s
    default separators and escapes)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode("utf-8")).hexdigest()


def edited_fields(raw: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The fields the runtime computes or decodes with (`RUNTIME_FIELDS`) whose digest differs
    from the file's `fields_sha256` (or that it does not list); None where it records none."""
    recorded = raw.get(FIELDS_KEY)
    if recorded is None:
        return None
    return tuple(
        name
        for name in RUNTIME_FIELDS
        if name in raw and recorded.get(name) != field_sha256(raw[name])
    )


def edited_text(path: str, tensors: tuple[str, ...] | None, fields: tuple[str, ...] | None) -> str:
    """One line saying that the certificate does not cover the edited `tensors` and `fields`."""
    parts, keys = [], []
    for kind, names, key in (
        ("tensor", tensors or (), DIGESTS_KEY),
        ("metadata field", fields or (), FIELDS_KEY),
    ):
        if names:
            shown = ", ".join(f"'{name}'" for name in names[:3])
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            parts.append(f"{kind}{'s' if len(names) > 1 else ''} {shown}{more}")
            keys.append(key)
    plural = len(tensors or ()) + len(fields or ()) > 1
    return (
        f"{path}: {' and '.join(parts)} differ{'' if plural else 's'} from the "
        f"digest{'s' if plural else ''} its compiler recorded ({', '.join(keys)}): the file was "
        "edited after compiling, and its certificate does not cover what it now holds"
    )

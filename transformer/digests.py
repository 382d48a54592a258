"""Which tensors differ from the digests the compiler recorded (`weights_sha256`, docs/format.md).

The certificate proves the weights the compiler wrote; a file whose tensors were edited afterwards
runs, but must not present that certificate as its own. The compiler records the SHA-256 of each
tensor's float32 bytes (little-endian, C order) beside it; a reader compares. The metadata itself
can be rewritten with the weights, so this catches an edit, not an adversary: `rasp verify
--model` re-proves the certificate from the weights whatever the digests say.

Needs only numpy (no torch): `rasp show` checks a file without importing it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from transformer.metadata_checks import Checker, json_text

DIGESTS_KEY = "weights_sha256"
_HEX = re.compile(r"[0-9a-f]{64}")


class EditedWeightsWarning(UserWarning):
    """A loaded model's tensors differ from the digests its compiler recorded: its certificate
    does not cover them (`CompiledTransformer.edited_tensors` names them)."""


def tensor_sha256(array: Any) -> str:
    """The hex SHA-256 of a tensor's values as the file stores them: float32, little-endian,
    C order (the compiler's `compiler.model.tensor_sha256` computes the same)."""
    return hashlib.sha256(np.ascontiguousarray(array, dtype="<f4").tobytes()).hexdigest()


def check_digests_field(check: Checker, raw: Mapping[str, Any]) -> None:
    """Refuse a `weights_sha256` that is not an object of 64-digit lowercase hex strings."""
    digests = raw.get(DIGESTS_KEY)
    if digests is None:
        return  # files written before 2026-12-05 have none
    if not isinstance(digests, dict) or not all(
        isinstance(v, str) and _HEX.fullmatch(v) for v in digests.values()
    ):
        raise check.fail(
            f"metadata field '{DIGESTS_KEY}' must map tensor names to SHA-256 digests "
            f"(64 lowercase hex digits), got {json_text(digests)}"
        )


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


def edited_text(path: str, names: tuple[str, ...]) -> str:
    """One line saying that the certificate does not cover the edited tensors `names`."""
    shown = ", ".join(f"'{name}'" for name in names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return (
        f"{path}: tensor {shown}{more} differ{'s' if len(names) == 1 else ''} from the "
        f"digest{'s' if len(names) > 1 else ''} its compiler recorded ({DIGESTS_KEY}): the weights "
        "were edited after compiling, and the file's certificate does not cover them"
    )

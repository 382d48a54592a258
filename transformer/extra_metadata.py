"""The optional metadata fields the runtime does not compute with but the tools read (docs/format.md):
`certificate`, `embedding`, `sums_as_means`, `fractions_as_means`, `votes_as_means` and
`weights_sha256`.

Their content is informative (`rasp verify` re-certifies from the weights, trusting no stored
number), but `rasp show`, `draw` and `verify` index into them, so their shape is checked here,
where every other field is: a file with `"certificate": "x"` is refused by every command with one
line naming the field, never accepted by one and crashed on by another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from transformer.digests import check_digests_field
from transformer.metadata_checks import Checker, json_text

# The certifier writes infinite and NaN numbers as these strings (JSON has none).
_NUMBER_WORDS = ("inf", "-inf", "nan")
_CHECK_TEXTS = ("sublayer", "block", "op", "kind", "where")
_CHECK_NUMBERS = ("margin", "bound", "ratio")


def check_extra_fields(check: Checker, raw: dict[str, Any]) -> None:
    """Refuse an optional field of the wrong shape (absent or null is always fine)."""
    _check_certificate(check, raw.get("certificate"))
    _check_embedding(check, raw.get("embedding"))
    check_digests_field(check, raw)
    for key in ("sums_as_means", "fractions_as_means", "votes_as_means"):
        if raw.get(key) is not None and not isinstance(raw[key], bool):
            raise check.fail(
                f"metadata field '{key}' must be true or false, got {json_text(raw[key])}"
            )


def decoder_error_bound(raw: Mapping[str, Any]) -> float | None:
    """The certificate's largest float32 error of a numerical output's logit at any state the
    program reaches (the decoder's `snap` check's `max_bound`), or None where the file records
    none (older compilers, a categorical output) or it is not a finite number. Call after
    `check_extra_fields`: the certificate's shape is checked there."""
    certificate = raw.get("certificate")
    checks = certificate.get("checks") if isinstance(certificate, dict) else None
    for entry in checks if isinstance(checks, list) else ():
        if entry.get("sublayer") == "decoder" and entry.get("kind") == "snap":
            bound = entry.get("max_bound")
            finite = isinstance(bound, int | float) and not isinstance(bound, bool)
            return float(bound) if finite and 0 <= bound < float("inf") else None
    return None


def _check_certificate(check: Checker, certificate: Any) -> None:
    if certificate is None:
        return  # older compilers wrote none; `rasp show` says so
    if not isinstance(certificate, dict):
        raise check.fail(
            f"metadata field 'certificate' must be an object, got {json_text(certificate)}"
        )
    if "ok" in certificate:
        check.get(certificate, "ok", "certificate.", bool)
    for key in ("u", "underflow"):
        if key in certificate:
            _number(check, certificate, key, "certificate.")
    if "errors" in certificate:
        errors = check.get(certificate, "errors", "certificate.", list)
        if not all(isinstance(error, str) for error in errors):
            raise check.fail(
                f"metadata field 'certificate.errors' must list strings, got {json_text(errors)}"
            )
    if "checks" in certificate:
        for index, entry in enumerate(check.get(certificate, "checks", "certificate.", list)):
            _check_decision(check, entry, f"certificate.checks[{index}]")


def _check_decision(check: Checker, entry: Any, where: str) -> None:
    """One block's weakest decision (compiler.certificate.Check.to_json)."""
    if not isinstance(entry, dict):
        raise check.fail(f"metadata field '{where}' must be an object, got {json_text(entry)}")
    for key in _CHECK_TEXTS:
        check.get(entry, key, f"{where}.", str)
    for key in _CHECK_NUMBERS:
        _number(check, entry, key, f"{where}.")
    if "max_bound" in entry:  # optional in the record's reader too
        _number(check, entry, "max_bound", f"{where}.")


def _number(check: Checker, obj: dict[str, Any], key: str, where: str) -> None:
    """A JSON number, or one of the strings the certifier writes for inf and NaN."""
    if key not in obj:
        raise check.fail(f"metadata is missing '{where}{key}'")
    value = obj[key]
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (is_number or value in _NUMBER_WORDS):
        raise check.fail(
            f'metadata field \'{where}{key}\' must be a number (or "inf", "-inf", "nan"), '
            f"got {json_text(value)}"
        )


def _check_embedding(check: Checker, embedding: Any) -> None:
    """The s-ops the positional embedding writes, as {"name", "op"} objects."""
    if embedding is None:
        return
    if not isinstance(embedding, list):
        raise check.fail(f"metadata field 'embedding' must be a list, got {json_text(embedding)}")
    for index, entry in enumerate(embedding):
        if not isinstance(entry, dict):
            raise check.fail(
                f"metadata field 'embedding[{index}]' must be an object with name and op, "
                f"got {json_text(entry)}"
            )
        for key in ("name", "op"):
            check.get(entry, key, f"embedding[{index}].", str)

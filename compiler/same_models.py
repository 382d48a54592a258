"""Builds of one compile that assemble the same model: certified once (`build_trials.proved`).

Two builds with different options can plan the same blocks: in `tests/golden/def_names`'s
also_tried, the build with stated sums that maps read computed first (`compiler.sum_inputs`) is
the build with maps computed from their inputs tried before it, 11,353 parameters not proved
both times. The certifier is a pure function of what `compiler.certify.recheck` reads: the
tensors, and the metadata's config, reach, output, max_len, residual and vocabulary. A model
whose key (`model_key`: an SHA-256 of all of them) was certified before in this compile has that
certificate; the note of a build tried and not proved names the earlier build instead of
repeating its failure.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from compiler.certificate import Certificate
from compiler.model import CompiledModel

# the metadata fields the certifier reads (compiler.certify.recheck)
CERTIFIED_FIELDS = ("config", "reach", "output", "max_len", "residual", "vocab")


def model_key(model: CompiledModel) -> str | None:
    """An exact key of what certifying `model` reads: equal keys, equal certificates. None where
    its weights were released or a field is not JSON (never shared then). The fields as their
    JSON, as a model file holds them (a file's re-check gives the compile's certificate)."""
    if model.released:
        return None
    digest = hashlib.sha256()
    for name, value in sorted(model.weights.items()):
        array = np.ascontiguousarray(value)
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array)  # (through the buffer: no copy)
    fields = {name: model.metadata.get(name) for name in CERTIFIED_FIELDS}
    try:
        text = json.dumps(fields, sort_keys=True, default=_not_json)
    except (TypeError, ValueError):
        return None
    digest.update(text.encode())
    return digest.hexdigest()


@dataclass
class Certified:
    """The certificates of one compile's models by `model_key`, each with the build that first
    had it (its `how`: "with maps computed from their inputs")."""

    found: dict[str, tuple[str, Certificate]] = field(default_factory=dict)

    def get(self, key: str | None) -> tuple[str, Certificate] | None:
        return None if key is None else self.found.get(key)

    def add(self, key: str | None, how: str, certificate: Certificate) -> None:
        if key is not None:
            self.found.setdefault(key, (how, certificate))


def _not_json(value: object) -> object:
    raise TypeError(f"not JSON: {type(value).__name__}")

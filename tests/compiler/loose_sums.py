"""The compiler's analyses as they were before session 70, for tests written against them:
- the certifier's bound on an MLP part's output sum as gamma of every non-zero weight of the
  column, whatever units are on (`compiler.certify_live`): tests of the later builds whose
  programs the default build now proves use it, so that they still exercise those builds (each
  notes the model the default build now makes);
- a mean of a uniform s-op (a count) taken as any mean of its values (`compiler.values`)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import certify_mlp, values


def count_every_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        certify_mlp, "live_terms", lambda active, columns, n: np.broadcast_to(n, active.shape)
    )


def means_of_counts_as_any_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    """The value analysis as it was before session 70: a mean of a uniform s-op (a count) taken
    as any mean of its values, not as copies of one (`compiler.values`): tests of refusals and
    builds written over such means (noisy means) still reach them."""
    monkeypatch.setattr(values, "uniform_keys_average_copies", lambda uniform, relation: False)

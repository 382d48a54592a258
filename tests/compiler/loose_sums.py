"""The certifier's bound on an MLP part's output sum as it was before session 70: gamma of every
non-zero weight of the column, whatever units are on (`compiler.certify_live`). Tests of the
later builds whose programs the default build now proves use it, so that they still exercise
those builds (each notes the model the default build now makes)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler import certify_mlp


def count_every_weight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        certify_mlp, "live_terms", lambda active, columns, n: np.broadcast_to(n, active.shape)
    )

"""Fixtures for the runtime tests: hand-made model files saved once per session."""

from __future__ import annotations

from pathlib import Path

import handmade_models as hm
import pytest


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def prev_path(model_dir: Path) -> Path:
    return hm.previous_token().save(model_dir / "prev.safetensors")


@pytest.fixture(scope="session")
def mean_path(model_dir: Path) -> Path:
    return hm.mean_of_a().save(model_dir / "mean.safetensors")


@pytest.fixture(scope="session")
def causal_mean_path(model_dir: Path) -> Path:
    return hm.mean_of_a(causal=True).save(model_dir / "causal_mean.safetensors")

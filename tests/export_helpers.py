"""What the TransformerLens export tests share: TransformerLens's HookedTransformer (skipped where
it is not installed, unless CI requires it) and an export loaded into it."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest

REQUIRED = os.environ.get("RASP_REQUIRE_TRANSFORMER_LENS") == "1"


def hooked_transformer() -> tuple[type, type]:
    try:
        import transformer_lens as tl
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("TransformerLens is not installed (pip install -e '.[tl]')")
    if not hasattr(tl, "HookedTransformer"):
        if REQUIRED:
            pytest.fail("TransformerLens >= 4 has no HookedTransformer; CI must install 2.x/3.x")
        pytest.skip("TransformerLens >= 4 has no HookedTransformer")
    return tl.HookedTransformer, tl.HookedTransformerConfig


def load_export(directory: Path) -> object:
    hooked, hooked_config = hooked_transformer()
    import safetensors.torch

    with warnings.catch_warnings():  # 3.x warns that HookedTransformer goes away in 4.0
        warnings.simplefilter("ignore", DeprecationWarning)
        tl_model = hooked(hooked_config(**json.loads((directory / "config.json").read_text())))
    missing, unexpected = tl_model.load_state_dict(
        safetensors.torch.load_file(str(directory / "model.safetensors")), strict=False
    )
    assert not unexpected and all(k.endswith((".mask", ".IGNORE")) for k in missing)
    return tl_model

"""What the end-to-end `rasp verify` tests share: reverse compiled into a file, and a weight of a
file changed in place."""

from __future__ import annotations

from typing import Any

import pytest

REVERSE = """\
opp = length - indices - 1;
flip = select(indices, opp, ==);
reverse = aggregate(flip, tokens);
"""


def compiled_reverse(tmp_path: Any) -> tuple[Any, Any, dict[str, Any]]:
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    import json

    from safetensors import safe_open

    from rasp.tools.cli import main

    program = tmp_path / "reverse.rasp"
    program.write_text(REVERSE)
    model = tmp_path / "reverse.safetensors"
    assert (
        main(["compile", str(program), "--vocab", "abc", "--max-len", "4", "-o", str(model)]) == 0
    )
    with safe_open(str(model), "np") as handle:
        meta = json.loads(handle.metadata()["rasp_forge"])
    return program, model, meta


def corrupt(model: Any, tensor: str, dim: int, amount: float) -> None:
    import json

    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    with safe_open(str(model), "np") as handle:
        metadata = handle.metadata()
    weights = load_file(str(model))
    weights[tensor][..., dim] += amount  # one output bias entry: every position gets +amount there
    save_file(weights, str(model), metadata=metadata)
    json.loads(metadata["rasp_forge"])

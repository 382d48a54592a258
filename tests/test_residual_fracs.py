"""A selector width that the residual holds only as `NAME.frac` = 1/(NAME + 1), read by an MLP
through that frac, is decoded as NAME after the head that computes it (`rasp.tools.residual_parts.
FracWidth`): the REPL's `:residual` showed no variable after that head ("no decoded variable is
new or changed"), and verify blamed a fault of the head on the MLP that reads it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rasp.tools.residual_parts import FracWidth, frac_widths

SEEN = """\
earlier = select(tokens, tokens, ==) and select(indices, indices, <);
seen_count = selector_width(earlier);
seen = seen_count > 0;
"""


def _compiled(tmp_path: Any) -> tuple[Any, Any]:
    pytest.importorskip("compiler")
    pytest.importorskip("transformer")
    from rasp.tools.cli import main

    program = tmp_path / "seen.rasp"
    program.write_text(SEEN)
    model = tmp_path / "seen.safetensors"
    args = ["compile", str(program), "--vocab", "ab", "--max-len", "4", "-o", str(model), "-q"]
    assert main(args) == 0
    return program, model


def test_a_width_held_as_its_frac_is_decoded_after_its_head(tmp_path: Any) -> None:
    import transformer
    from rasp.interpreter import load_file
    from rasp.tools.residuals import decode_checkpoints

    program, path = _compiled(tmp_path)
    model = transformer.load(str(path))
    labels = model.residual_labels
    assert "seen_count.frac" in labels and "seen_count" not in labels
    interp = load_file(str(program))
    nodes = {name: interp.get(name) for name in ("tokens", "indices", "seen_count", "seen")}
    points = decode_checkpoints(model, list("abaa"), nodes)
    rows = {p.where: {v.name: (v.model, v.wrong, v.new) for v in p.variables} for p in points}
    assert rows["after layer 0 attn"]["seen_count"] == ((0, 0, 1, 2), (), True)
    assert rows["after layer 0 mlp"]["seen"] == ((False, False, True, True), (), True)
    # typed as the interpreter types them: a width is an int, a comparison a bool
    assert {type(v) for v in rows["after layer 0 attn"]["seen_count"][0]} == {int}
    assert {type(v) for v in rows["after layer 0 mlp"]["seen"][0]} == {bool}


def test_a_fault_of_the_width_head_is_blamed_on_the_head(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from rasp.tools.cli import main
    from tests.verify_helpers import corrupt

    program, path = _compiled(tmp_path)
    from safetensors import safe_open

    with safe_open(str(path), "np") as handle:
        labels = json.loads(handle.metadata()["rasp_forge"])["residual"]
    corrupt(path, "blocks.0.attn.b_O", labels.index("seen_count.frac"), -0.6)
    capsys.readouterr()
    assert main(["verify", str(program), "--model", str(path), "--json", "-q"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    # before: `seen`, after layer 0 mlp, as if the MLP that reads the frac were wrong
    assert (div["variable"], div["layer"], div["sublayer"]) == ("seen_count", 0, "attn")
    assert div["model"] == pytest.approx(1 / 0.4 - 1)
    assert div["interpreter"] == 0


def test_frac_width_decoding() -> None:
    labels = ["one", "bos", "w.frac", "x.frac", "x", "y:a", "y.frac", "z.frac"]
    found = frac_widths(labels, ["w", "x", "y", "v"])
    assert found == {"w": FracWidth("w", (2,))}  # x has its own group, y a one-hot, v no frac
    resid = np.zeros((5, len(labels)))
    resid[:, 2] = [1.0, 0.5, np.float32(1 / 3), 0.4, 0.0]
    width = found["w"]
    assert width.decode(resid) == [0.0, 1.0, 2.0, pytest.approx(1.5), None]
    assert width.agrees(2.0, 2) and not width.agrees(1.5, 1) and not width.agrees(None, 0)
    assert not width.agrees(1.0, True) and not width.agrees(1.0, "1")

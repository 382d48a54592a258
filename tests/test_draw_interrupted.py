"""A picture interrupted while it is written (Ctrl-C, a full disk) leaves no half picture: it is
written beside its path and renamed into place once complete (`output_files.staged`)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformer")
figure = pytest.importorskip("matplotlib.figure")

from rasp.tools.draw import draw_model_file  # noqa: E402
from tests.transformer.handmade_models import previous_token  # noqa: E402


def _half_then_interrupted(self: object, path: str, **kwargs: object) -> None:
    Path(path).write_bytes(b"half a picture")
    raise KeyboardInterrupt


@pytest.mark.parametrize("before", [None, b"the earlier picture"])
def test_an_interrupted_picture_leaves_the_path_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: bytes | None
) -> None:
    model = previous_token().save(tmp_path / "prev.safetensors")
    png = tmp_path / "out.svg"  # svg and pdf are written as they are drawn: a long window
    if before is not None:
        png.write_bytes(before)
    monkeypatch.setattr(figure.Figure, "savefig", _half_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        draw_model_file(model, list("abca"), png)
    assert (png.read_bytes() if png.exists() else None) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["prev.safetensors", *(["out.svg"] if before else [])]
    )


def test_a_picture_keeps_its_format_and_a_replaced_files_mode(tmp_path: Path) -> None:
    model = previous_token().save(tmp_path / "prev.safetensors")
    svg = tmp_path / "out.svg"
    svg.write_text("old")
    svg.chmod(0o640)
    draw_model_file(model, list("abca"), svg)
    assert svg.read_text().lstrip().startswith("<?xml") and (svg.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.svg", "prev.safetensors"]


def test_a_picture_at_a_link_is_written_through_it(tmp_path: Path) -> None:
    model = previous_token().save(tmp_path / "prev.safetensors")
    target, link = tmp_path / "target.svg", tmp_path / "link.svg"
    link.symlink_to(target)
    draw_model_file(model, list("abca"), link)
    assert link.is_symlink() and target.read_text().lstrip().startswith("<?xml")

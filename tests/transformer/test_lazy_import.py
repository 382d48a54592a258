"""`import transformer` leaves torch unloaded until a name that needs it is used (tools read a
file's header first and refuse bad requests in milliseconds; torch takes seconds)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_package_and_its_file_format_does_not_import_torch() -> None:
    code = (
        "import sys, transformer, transformer.fileformat\n"
        "transformer.read_metadata\n"
        "print('torch' in sys.modules)\n"
        "transformer.load\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.stdout.split() == ["False", "True"], done.stderr


def test_an_unknown_name_is_an_attribute_error() -> None:
    import pytest

    import transformer

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = transformer.nothing  # type: ignore[attr-defined]
    assert transformer.load is transformer.io.load  # type: ignore[attr-defined]


def test_show_and_export_never_import_torch(tmp_path: Path) -> None:
    from tests.transformer.handmade_models import previous_token

    model = previous_token().save(tmp_path / "prev.safetensors")
    code = (
        "import sys\n"
        "from rasp.tools.cli import main\n"
        f"a = main(['show', {str(model)!r}, '-q'])\n"
        f"b = main(['export', {str(model)!r}, '--to', 'transformer-lens', '-o', "
        f"{str(tmp_path / 'tl')!r}, '-q'])\n"
        "print(a, b, 'torch' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.stdout.split()[-3:] == ["0", "0", "False"], done.stderr

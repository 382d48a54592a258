"""The runtime reads only the file: `transformer` never imports `rasp` or `compiler`, and they never
import torch (checked in fresh interpreters, since this test process has imported everything)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_transformer_imports_neither_rasp_nor_compiler() -> None:
    code = (
        "import sys, transformer, transformer.io, transformer.interop, transformer.model\n"
        "print(sorted(m for m in ('rasp', 'compiler') if m in sys.modules))"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_file_format_module_needs_no_torch() -> None:
    # Loading the module file directly (not via the package __init__, which imports torch).
    code = (
        "import importlib.util, sys\n"
        "for name in ('errors', 'fileformat'):\n"
        "    spec = importlib.util.spec_from_file_location(\n"
        "        'transformer.' + name, 'transformer/' + name + '.py')\n"
        "    module = importlib.util.module_from_spec(spec); sys.modules[spec.name] = module\n"
        "    spec.loader.exec_module(module)\n"
        "print('torch' in sys.modules)"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("package", ["rasp", "compiler"])
def test_front_end_and_compiler_do_not_import_torch(package: str) -> None:
    probe = _run(f"import {package}")
    if probe.returncode != 0:
        pytest.skip(f"{package} does not import yet: {probe.stderr.strip().splitlines()[-1:]}")
    modules = sorted(
        p.stem for p in (ROOT / package).glob("*.py") if p.stem not in ("__init__", "__main__")
    )
    code = "import importlib, sys\n"
    code += "".join(
        f"try:\n    importlib.import_module('{package}.{m}')\nexcept Exception:\n    pass\n"
        for m in modules
    )
    code += "print('torch' in sys.modules)"
    result = _run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"

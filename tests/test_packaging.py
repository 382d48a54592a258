"""The four top-level packages have generic names: make sure the ones imported are this project's."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rasp", "compiler", "transformer", "programs")


@pytest.mark.parametrize("name", PACKAGES)
def test_package_comes_from_this_project(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__file__ is not None
    assert Path(module.__file__).resolve().is_relative_to(ROOT), module.__file__


def test_pyproject_lists_packages_and_script() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == list(PACKAGES)
    assert meta["project"]["scripts"]["rasp"] == "rasp.tools.entry:main"
    assert any(dep.startswith("torch>=2.4") for dep in meta["project"]["dependencies"])


def test_data_files_are_inside_the_packages() -> None:
    # hatchling ships every file inside a listed package, so these reach the wheel.
    assert (files("rasp") / "grammar.lark").is_file()
    assert any(p.name.endswith(".rasp") for p in files("programs").iterdir())


def test_front_end_and_compiler_do_not_import_torch() -> None:
    code = "import sys, rasp.sops, rasp.errors, compiler.blocks; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "False"

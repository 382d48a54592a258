"""rasp.tracr evaluates tracr programs to tracr's own values (recorded from DeepMind's tracr in
tracr_values.json), types included: True stays True, None stays None, 1 is not 1.0. The graph the
compiler reads (`rasp.tracr.lower.to_sops`) gives the same values under `rasp.sops.evaluate`."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from corpus import CASES, Case, encode, recorded

from rasp import sops
from rasp.errors import RaspRuntimeError
from rasp.tools.pyprogram import PythonProgram, load_python_program


@cache
def _program(target: str) -> PythonProgram:
    return load_python_program(target)


def _exact(values: Any) -> str:
    return json.dumps([encode(v) for v in values])


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_rasp_tracr_gives_tracr_values(case: Case) -> None:
    program = _program(case.target).program
    for xs, want in recorded()[case.key]["rows"]:
        if isinstance(want, dict):  # tracr raised: so must we, with the same exception
            with pytest.raises(Exception) as info:
                program(xs)
            assert type(info.value).__name__ == want["error"], xs
            continue
        assert _exact(program(xs)) == json.dumps(want), xs


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.key)
def test_the_lowered_graph_gives_tracr_values(case: Case) -> None:
    lowered = _program(case.target).sop
    for xs, want in recorded()[case.key]["rows"]:
        if isinstance(want, dict):
            with pytest.raises(RaspRuntimeError):
                sops.evaluate(lowered, xs)
            continue
        got = sops.evaluate(lowered, xs)
        assert isinstance(got, sops.SeqValue)
        assert _exact(got.values) == json.dumps(want), xs


def test_every_program_of_the_corpus_is_recorded() -> None:
    assert {case.key for case in CASES} == set(recorded())

"""Builds that assemble a model certified before in the compile are not certified again
(compiler.same_models), and their refusal note names the earlier build."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compiler import build_trials, compile_sop
from compiler.build_trials import BuildOptions, Builds
from compiler.forms import Forms
from compiler.graph import build_graph
from compiler.same_models import Certified, model_key
from compiler.sum_inputs import SUMS_FIRST
from rasp.errors import CompileError, Source
from rasp.interpreter import load_source

ALSO_TRIED = Path(__file__).parents[1] / "golden" / "def_names" / "also_tried.rasp"
DIRECT = "with maps computed from their inputs"


def _root(text: str, name: str = "<test>"):  # type: ignore[no-untyped-def]
    return load_source(Source(name, text)).get("res")


def _refused_counting(monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    """also_tried.rasp's refusal (its default form's, as tests/test_def_names_golden.py has it)
    and the builds certified, by how."""
    monkeypatch.setattr(Forms, "votes_differ", lambda self: False)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)
    certified: list[str] = []
    certify = build_trials.certified

    def counted(model, how, note):  # type: ignore[no-untyped-def]
        certified.append(how)
        return certify(model, how, note)

    monkeypatch.setattr(build_trials, "certified", counted)
    root = _root(ALSO_TRIED.read_text(encoding="utf-8"), ALSO_TRIED.name)
    with pytest.raises(CompileError) as refused:
        compile_sop(root, list("abc"), 10)
    return refused.value.render(), certified


def test_a_later_build_of_the_same_model_is_not_certified_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text, certified = _refused_counting(monkeypatch)
    assert DIRECT in certified and SUMS_FIRST not in certified
    note = f"also tried {SUMS_FIRST}: the same model as the build {DIRECT} (11,353 parameters)"
    assert note in text
    assert f"also tried {DIRECT}: 11,353 parameters, not proved: layer 1 mlp" in text


def test_without_the_key_the_same_model_is_certified_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (what the test above rules out: the model is the same, only its key is missing)
    monkeypatch.setattr(build_trials, "model_key", lambda model: None)
    text, certified = _refused_counting(monkeypatch)
    assert certified.count(SUMS_FIRST) == 1
    assert f"also tried {SUMS_FIRST}: 11,353 parameters, not proved" in text


def _model():  # type: ignore[no-untyped-def]
    root = _root("res = aggregate(select(indices, indices, <=), tokens_int, 0);")
    return compile_sop(root, [0, 1, 2], 5), root


def test_the_key_reads_every_weight_and_the_certified_fields() -> None:
    model, _ = _model()
    again, _ = _model()
    assert model_key(model) == model_key(again) is not None
    name = sorted(model.weights)[0]
    weights = dict(model.weights)
    edited = np.array(weights[name], dtype=np.float32, copy=True)
    edited.flat[0] = np.nextafter(edited.flat[0], np.float32(np.inf))
    weights[name] = edited
    assert model_key(replace(model, weights=weights)) != model_key(model)
    metadata = {**model.metadata, "max_len": 6}
    assert model_key(replace(model, metadata=metadata)) != model_key(model)
    # a field the certifier does not read changes nothing
    metadata = {**model.metadata, "program": None}
    assert model_key(replace(model, metadata=metadata)) == model_key(model)
    assert model_key(model.without_weights()) is None
    metadata = {**model.metadata, "reach": {"x": object()}}
    assert model_key(replace(model, metadata=metadata)) is None


def test_a_proved_model_built_again_takes_its_certificate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model, root = _model()
    graph = build_graph(root)
    calls: list[str] = []
    certify = build_trials.certified

    def counted(model, how, note):  # type: ignore[no-untyped-def]
        calls.append(how)
        return certify(model, how, note)

    monkeypatch.setattr(build_trials, "certified", counted)
    builds = Builds(
        model=lambda options: (model, graph),
        sketch=lambda options: None,  # type: ignore[arg-type,return-value]
        single_key=frozenset,
        mixed_copies=lambda: False,
        certified=Certified(),
    )
    tried: list[tuple[str, str]] = []
    first = build_trials.proved(builds, BuildOptions(), "first", lambda s: None, tried)
    options = BuildOptions(gates=False)
    second = build_trials.proved(builds, options, "second", lambda s: None, tried)
    assert first is not None and second is not None
    assert calls == ["first"] and tried == []
    assert second.certificate is first.certificate and second.options == options

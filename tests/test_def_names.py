"""What messages call an s-op a `def`'s call made: its name in the body and where the def was
called (`got (in pick, called at p.rasp:7:25)`), not a generated `_aggregate_1` or a second
call's `got_2` alone; an unnamed one's residual name says which def made it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.graph import build_graph
from rasp.errors import Source
from rasp.interpreter import load_source
from tests.cli_helpers import run

PICK = (
    "def pick(x, k) {\n"
    "    sel = select(indices, k, ==);\n"
    '    got = aggregate(sel, x, "");\n'
    "    return got;\n"
    "}\n"
    "def both(x) {\n"
    "    return pick(x, 0) + pick(x, length - 1);\n"
    "}\n"
    "res = both(tokens);\n"
)


def _graph(text: str, name: str) -> Any:
    return build_graph(load_source(Source("p.rasp", text)).get(name))


def _by_name(graph: Any) -> dict[str, Any]:
    return {node.name: node for node in graph.nodes}


def test_a_local_of_a_def_called_twice_is_shown_with_its_call() -> None:
    nodes = _by_name(_graph(PICK, "res"))
    assert nodes["got"].shown == (
        "got (in pick, called at p.rasp:7:12 from both, called at p.rasp:9:7)"
    )
    # the second call's residual name is got_2: the body's name says which s-op it is
    assert nodes["got_2"].shown == (
        "got_2 (got in pick, called at p.rasp:7:25 from both, called at p.rasp:9:7)"
    )
    assert nodes["res"].shown == "res"  # the program's own name says it


def test_an_unnamed_sop_of_a_def_is_named_after_the_def() -> None:
    text = (
        "def frac(x) {\n"
        "    return aggregate(select(indices, indices, <=), x, 0);\n"
        "}\n"
        "def twice(x) {\n"
        "    y = frac(x);\n"
        "    return y + frac(x == 1);\n"
        "}\n"
        "z = twice(tokens_int);\n"
    )
    nodes = _by_name(_graph(text, "z"))
    # (was `_aggregate_1`): frac's unnamed return value
    assert nodes["_frac_aggregate_1"].shown == (
        "_frac_aggregate_1 (in frac, called at p.rasp:6:16 from twice, called at p.rasp:8:5)"
    )
    # made in frac, named y by twice's body: twice's local
    assert nodes["y"].shown == "y (in twice, called at p.rasp:8:5)"
    assert "_aggregate_1" not in nodes


def test_a_local_the_program_renames_is_the_programs() -> None:
    text = 'def f(x) {\n    y = x == "a";\n    return y;\n}\nb = f(tokens);\nc = b and b;\n'
    interp = load_source(Source("p.rasp", text))
    assert interp.get("b").named_in is None
    assert _by_name(build_graph(interp.get("c")))["b"].shown == "b"
    text = 'def f(x) {\n    y = x;\n    return y;\n}\na = tokens == "a";\nc = f(a) and a;\n'
    # an s-op passed in and renamed by the body: no call made it, none is named
    assert _by_name(_graph(text, "c"))["y"].shown == "y (in f)"


def test_a_certificate_refusal_in_a_def_names_the_local_and_the_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compiler import compile_sop
    from rasp.errors import CompileError

    # (the side tables' build, compiler.side_build, now compiles it: the refusal is the
    # subject)
    monkeypatch.setattr("compiler.driver.sides_instead", lambda kept, *args: kept)

    text = (
        "def last_big(x) {\n"
        "    v1 = aggregate(select(indices, indices, >=), x);\n"
        "    r = aggregate(select(indices, length / (v1 + 2), >=), indices, 1);\n"
        "    return r;\n"
        "}\n"
        "res = last_big(indices) + indices;\n"
    )
    root = load_source(Source("p.rasp", text)).get("res")
    with pytest.raises(CompileError) as caught:
        compile_sop(root, list("0123"), 32)
    first = caught.value.diagnostics[0]
    assert first.span is not None and first.span.line == 3
    assert "(layer 2 attn, r (in last_big, called at p.rasp:6:7)): a softmax" in first.message
    # the query it reads, unnamed in the def, as the body's text with the call that made it
    # (was `_map_2`, then `_last_big_map_1`: tests/test_def_state_labels.py)
    assert (
        # (the query of the largest error: 1.333... before MLP sums counted live terms)
        "(at query ((length / (v1 + 2))=1.2549019607843137); (length / (v1 + 2)): in last_big, "
        "called at p.rasp:6:7)"
    ) in first.message
    assert "_map_" not in first.message


def test_verify_names_a_divergence_in_a_def_by_its_local_and_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("transformer")
    from safetensors import safe_open

    from tests.verify_helpers import corrupt

    program, model = tmp_path / "p.rasp", tmp_path / "p.safetensors"
    program.write_text(PICK)
    args = [str(program), "--vocab", "abc", "--max-len", "4"]
    assert run(capsys, "compile", *args, "-o", str(model))[0] == 0
    with safe_open(str(model), "np") as handle:
        meta = json.loads(handle.metadata()["rasp_forge"])
    (layer,) = [i for i, ops in enumerate(meta["layers"]) if ops["attn"][0]["name"] == "got_2"]
    corrupt(model, f"blocks.{layer}.attn.b_O", meta["residual"].index("got_2:b"), 5.0)
    code, _, err = run(capsys, "verify", *args, "--model", str(model))
    assert code == 1
    assert (
        "first divergence: variable `got_2` (got in pick, called at "
        f'{program}:7:25 from both, called at {program}:9:7) = aggregate(sel, tokens, ""), '
        f"layer {layer} attn"
    ) in err, err
    code, out, _ = run(capsys, "verify", *args, "--model", str(model), "--json")
    assert json.loads(out)["divergence"]["shown"].startswith("got_2 (got in pick, called at")


def test_a_warning_of_failing_inputs_names_every_call_down_to_the_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = tmp_path / "p.rasp"
    program.write_text(
        "def frac(x) {\n    return aggregate(select(indices, indices, <=), x, 0);\n}\n"
        "def twice(x) {\n    y = frac(x);\n    return y + frac(x == 1);\n}\n"
        "z = twice(tokens_int);\n"
    )
    out_path = str(tmp_path / "m.safetensors")
    code, _, err = run(
        capsys, "compile", str(program), "--vocab", "0123", "--max-len", "5", "-o", out_path
    )
    assert code == 0
    # (was `in the call of twice at ...:8:5`, though line 2 is frac's)
    assert (
        f"{program}:2:12: asked to average multiple values, but they are non-numbers in frac, "
        f"called at {program}:6:16 from twice, called at {program}:8:5)"
    ) in err, err


def test_a_file_compiled_with_the_earlier_names_still_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A model file compiled before a def's unnamed s-ops were named after it holds
    `_aggregate_1`: `verify --model` rebuilds its reach with those names (else: NOT proved, the
    reach differs), and locates a fault at that variable."""
    pytest.importorskip("transformer")
    from safetensors import safe_open

    from compiler.graph import names_before_def_stems
    from tests.verify_helpers import corrupt

    program, model = tmp_path / "p.rasp", tmp_path / "p.safetensors"
    program.write_text(
        "def frac(x) {\n    return aggregate(select(indices, indices, <=), x, 0);\n}\n"
        "def twice(x) {\n    y = frac(x);\n    return y + frac(indicator(x == 1));\n}\n"
        "z = twice(tokens_int);\n"
    )
    with names_before_def_stems():
        argv = ["compile", str(program), "--vocab", "0123", "--max-len", "4", "-o", str(model)]
        assert run(capsys, *argv)[0] == 0
    with safe_open(str(model), "np") as handle:
        meta = json.loads(handle.metadata()["rasp_forge"])
    assert "_aggregate_1" in meta["residual"]
    code, out, err = run(capsys, "verify", "--model", str(model))
    assert code == 0, out + err
    assert "reach:       rebuilt from the recorded program: equal to the file's" in out + err
    corrupt(model, "blocks.0.attn.b_O", meta["residual"].index("_aggregate_1"), 5.0)
    code, out, err = run(capsys, "verify", "--model", str(model), "--json")
    assert code == 1
    divergence = json.loads(out)["divergence"]
    assert divergence["variable"] == "_aggregate_1"
    assert divergence["shown"].startswith("_aggregate_1 (in frac, called at ")

"""`rasp verify --model M --name S`, S another s-op than the one M computes: a faithful model
disagrees with S only because it computes something else, so no layer and not the unembedding is
to blame. verify said "the output `both` goes wrong in the unembedding", and decoded the residual
stream with the generated names of S's own graph (`_map_2` there is another node than in M)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rasp.sops import SOp
from rasp.tools.verify import Divergence, diagnose, nodes_by_name, plan_inputs, verify
from rasp.tools.verify_json import report_json
from rasp.tools.verify_text import format_failure
from tests.test_verify import FakeModel, program

TWO = """\
p = aggregate(select(indices, (indices + 1) % length, ==), tokens);
q = aggregate(select(indices, (indices + 2) % length, ==), tokens);
both = p == q;
"""


def _flag(prev: SOp) -> SOp:
    flag = nodes_by_name(prev)["flag"]
    assert isinstance(flag, SOp)
    return flag


def test_another_sop_than_the_output_blames_no_layer() -> None:
    prev, meta = program()  # the model computes `prev`; `flag` is one of its variables
    flag = _flag(prev)
    model = FakeModel(prev, meta)
    div = diagnose(flag, model, list("aab"), nodes_by_name(prev), name="flag")
    assert div == Divergence(
        "prev", None, "output", 0, 0, True, None, (), "flag", "after layer 0 mlp", True
    )
    plan = plan_inputs("ab", 2, samples=0)
    report = verify(flag, model, plan, nodes=nodes_by_name(prev), name="flag")
    text = format_failure(report, "`flag`").splitlines()
    assert text[4:6] == [
        "  no layer is at fault: every materialised variable agrees with the interpreter, and so "
        "does the model's output `prev`; the model computes `prev`, not `flag`, and the two differ "
        "at position 0",
        "    `flag` itself: held in the residual stream after layer 0 mlp, where it agrees",
    ]
    data = report_json(report)["divergence"]
    assert (data["sublayer"], data["variable"], data["verified"]) == ("output", "prev", "flag")
    assert data["held_at"] == "after layer 0 mlp" and data["output_checked"] is True
    # the model's own name, or none: the unembedding is still blamed where the output is wrong
    assert diagnose(prev, model, list("aab"), nodes_by_name(prev), name="prev") is None


def test_an_output_wrong_for_itself_is_still_the_unembedding() -> None:
    prev, meta = program()
    flag = _flag(prev)

    class WrongOut(FakeModel):
        def run(self, inputs: Any) -> list[list[Any]]:
            return [[v + 5 for v in out] for out in super().run(inputs)]

    model = WrongOut(prev, meta)
    div = diagnose(flag, model, list("aab"), nodes_by_name(prev), name="flag")
    assert div == Divergence("prev", None, "unembed", 0, 5, 0, None, (), "flag")
    plan = plan_inputs("ab", 1, samples=0)
    report = verify(flag, model, plan, nodes=nodes_by_name(prev), name="flag")
    assert format_failure(report, "`flag`").splitlines()[4] == (
        "  every materialised variable agrees; the model's output `prev` (not the `flag` "
        "verified) goes wrong in the unembedding (position 0: interpreter 0, model 5)"
    )


def test_an_output_the_program_lacks_is_not_claimed_right() -> None:
    prev, meta = program()
    flag = _flag(prev)
    div = diagnose(flag, FakeModel(prev, meta), list("aab"), nodes_by_name(flag), name="flag")
    assert div is not None and div.sublayer == "output" and not div.output_checked
    report = verify(flag, FakeModel(prev, meta), plan_inputs("a", 1, samples=0), name="flag")
    report.divergence = div
    assert "(`prev` is not an s-op of this program, so the output itself was not checked)" in (
        format_failure(report, "`flag`")
    )


def test_the_cli_decodes_the_models_own_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("compiler")
    from rasp.tools.cli import main

    source, model = tmp_path / "two.rasp", tmp_path / "two.safetensors"
    source.write_text(TWO)
    assert main(["compile", str(source), "--vocab", "abc", "--max-len", "5", "-o", str(model)]) == 0
    capsys.readouterr()
    # samples: the first failing input is longer than 1, where (indices + 1) % length, the
    # model's `_map_2`, differs from (indices + 2) % length, `_map_2` in q's own graph
    argv = ["verify", str(source), "--model", str(model), "--name", "q", "--exhaustive-len", "0"]
    assert main([*argv, "--samples", "5"]) == 1
    err = capsys.readouterr().err
    assert "`_map_2`" not in err and "unembedding" not in err
    assert "the model computes `both`, not `q`, and the two differ at position 0" in err
    assert "    `q` itself: held in the residual stream after layer 1 attn, where it agrees" in err
    assert main([*argv, "--samples", "5", "--json"]) == 1
    div = json.loads(capsys.readouterr().out)["divergence"]
    assert {
        k: div[k] for k in ("variable", "sublayer", "verified", "held_at", "output_checked")
    } == {
        "variable": "both",
        "sublayer": "output",
        "verified": "q",
        "held_at": "after layer 1 attn",
        "output_checked": True,
    }

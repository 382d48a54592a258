"""Tables over noisy inputs clamped (`BuildOptions.clamped_tables`, compiler.mlp.table_mlp): a
saturating pair per row, tried where no build is proved; and the trials skipped where a refused
decision reads nothing their options change (compiler.build_facts.untouched_failure)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from compiler import alternatives, build_facts, build_trials, compile_sop
from compiler.certificate import Check
from compiler.graph import build_graph
from rasp.interpreter import Interpreter
from rasp.parser import parse
from rasp.tracr import lib
from tests.compiler.loose_sums import count_every_weight
from tests.runtime_helpers import run_compiled

# two balances' zeros (whose mean a copy of the last position reads) and a match on the last index
PROGRAM = """
prefix = select(indices, indices, <=);
b1 = aggregate(prefix, indicator(tokens == "(")) - aggregate(prefix, indicator(tokens == ")"));
b2 = aggregate(prefix, indicator(tokens == "{")) - aggregate(prefix, indicator(tokens == "}"));
both = (b1 == 0) and (b2 == 0);
last = aggregate(select(indices, length - 1, ==), both);
"""


@pytest.mark.slow  # (a 64 s compile)
@pytest.mark.exactness
def test_shuffle_dyck2_at_n_256_clamps_its_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # refused before: `(b1 == 0) and (b2 == 0)` stepped over b1 with the other bool as context
    # (margin 1.5, error 1.66); built from the bools first, the table `(b1 < 0) or (b2 < 0)`
    # passed their error to its mean, which `not` steps on (margin 3, error 6.5)
    # under the bound before live terms (`compiler.certify_live`), whose refused decision reads
    # no matched head: with live terms the same model is kept, after the build without matching
    count_every_weight(monkeypatch)
    tried: list[str] = []
    original = build_trials.instead

    def recorded(*args: object, **kwargs: object) -> object:
        tried.append(str(args[3]))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build_trials, "instead", recorded)
    program = lib.make_shuffle_dyck2()
    model = compile_sop(program, list("(){}"), 256, name="shuffle_dyck2")
    assert model.metadata["certificate"]["ok"]
    assert (model.metadata["config"]["n_layers"], model.param_count()) == (3, 45_610)
    assert alternatives.CLAMPED in tried
    # the refused decision reads no matched head and no width: those builds are not planned
    assert "without matching" not in tried and "with widths decoded first" not in tried
    rng = random.Random(7)
    inputs = [[rng.choice("(){}") for _ in range(rng.randint(1, 256))] for _ in range(30)]
    inputs += [list("({") * 64 + list(")}") * 64, list("(" * 128 + ")" * 128), list(")(") * 128]
    inputs += [list("({})") * 64, list("{" * 255 + "}")]
    for tokens, got in zip(inputs, run_compiled(model, inputs), strict=True):
        assert got == program(tokens), "".join(tokens)


def _graph() -> object:
    interp = Interpreter()
    interp.exec_program(parse(PROGRAM, "<test>"))
    return build_graph(interp.get("last"))


def _kept(graph: object, *blocks: str) -> SimpleNamespace:
    checks = [Check("layer 1 mlp", b, b, "relu", 1.5, 1.7, "unit 0") for b in blocks]
    return SimpleNamespace(graph=graph, certificate=SimpleNamespace(failures=lambda: checks))


def test_a_failure_reading_nothing_touched_is_untouched() -> None:
    graph = _graph()
    widths = build_facts.width_nodes(graph)  # type: ignore[arg-type]
    assert widths == {"length"}
    # `both` reads the balances only: no build with widths decoded first changes it
    assert build_facts.untouched_failure(_kept(graph, "both"), widths)  # type: ignore[arg-type]
    # `last` is copied by a head whose selector reads the length
    assert not build_facts.untouched_failure(_kept(graph, "last"), widths)  # type: ignore[arg-type]
    # one untouched failure is enough: the other build fails it too
    kept = _kept(graph, "last", "both")
    assert build_facts.untouched_failure(kept, widths)  # type: ignore[arg-type]
    # a block the graph does not name proves nothing
    assert not build_facts.untouched_failure(_kept(graph, "?"), widths)  # type: ignore[arg-type]


def test_matched_nodes_are_the_matched_heads_and_what_their_selectors_read() -> None:
    graph = _graph()
    interp = Interpreter()
    interp.exec_program(parse(PROGRAM, "<test>"))
    model = compile_sop(interp.get("last"), list("(){}"), 40, name="last")
    assert "indices^2" in model.metadata["residual"]  # `length - 1` matched against the index
    matched = build_facts.matched_nodes(SimpleNamespace(model=model, graph=graph))  # type: ignore[arg-type]
    assert {"last", "length"} <= matched
    # the index and the tokens are embedded alike by every build; the balances are not read
    assert not matched & {"indices", "tokens", "both", "b1", "b2"}
    assert build_facts.untouched_failure(_kept(graph, "both"), matched)  # type: ignore[arg-type]
    assert not build_facts.untouched_failure(_kept(graph, "last"), matched)  # type: ignore[arg-type]

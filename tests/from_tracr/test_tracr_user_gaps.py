"""What a tracr user meets moving over, said in tracr's terms: an s-op of DeepMind's own tracr
(installed beside rasp-forge) named as such wherever it is given, a causal refusal's hint in
rasp.tracr's API, and tracr's model fields pointed at their counterparts."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler import compile_sop
from rasp import tracr as rasp
from rasp.errors import CompileError
from rasp.tracr import lib
from tests.cli_helpers import run

pytest.importorskip("transformer")

# stands for DeepMind tracr's classes (its s-ops are callable on an input, as this one)
FOREIGN = """\
class Map:
    __module__ = "tracr.rasp.rasp"

    def __call__(self, xs):
        return xs


program = Map()
"""


def _foreign() -> object:
    namespace: dict[str, object] = {}
    exec(FOREIGN, namespace)  # noqa: S102 (the fake's text, as the command-line test loads it)
    return namespace["program"]


def test_a_deepmind_sop_on_the_command_line_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # it was called with no input: "'program' in f.py cannot be called without arguments"
    path = tmp_path / "f.py"
    path.write_text(FOREIGN, encoding="utf-8")
    code, out, err = run(capsys, "run", f"{path}:program", "--input", "ab")
    assert code == 1 and out == ""
    assert f"'program' in {path} was built with DeepMind's tracr, not rasp.tracr" in err
    assert "pass --tracr-compat" in err and "cannot be called" not in err


def test_a_deepmind_sop_given_to_rasp_tracr_is_named() -> None:
    foreign = _foreign()
    with pytest.raises(TypeError, match=r"got Map of DeepMind's tracr \(tracr.rasp.rasp\)"):
        rasp.Map(lambda x: x, foreign)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="from rasp import tracr as rasp"):
        rasp.Select(rasp.tokens, foreign, rasp.Comparison.EQ)  # type: ignore[arg-type]
    with pytest.raises(CompileError) as err:
        compile_sop(foreign, ["a"], 3)  # type: ignore[arg-type]
    (problem,) = err.value.diagnostics
    assert problem.message == (
        "expected an s-op to compile, got DeepMind tracr's Map (tracr.rasp.rasp), not rasp.tracr's"
    )
    assert problem.hint is not None and "--tracr-compat" in problem.hint


def test_compile_rasp_to_model_says_what_it_was_given() -> None:
    # it read the name first: AttributeError, 'function' object has no attribute 'annotations'
    from rasp.tools.tracr_compiling import compile_rasp_to_model

    with pytest.raises(CompileError, match="expected an s-op to compile, got function"):
        compile_rasp_to_model(lambda xs: xs, {"a"}, 3)  # type: ignore[arg-type]
    with pytest.raises(CompileError, match="got DeepMind tracr's Map"):
        compile_rasp_to_model(_foreign(), {"a"}, 3)  # type: ignore[arg-type]


def test_a_causal_refusal_hints_in_the_program_s_api() -> None:
    later = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.GT)
    program = rasp.numerical(rasp.Aggregate(later, rasp.numerical(rasp.tokens == "a"), default=0))
    with pytest.raises(CompileError) as err:
        compile_sop(program, ["a", "b"], 4, causal=True)
    (problem,) = err.value.diagnostics
    assert "may select later positions" in problem.message
    assert problem.hint == (
        "add `& rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)` to the selector, "
        "or compile without causal"
    )
    keep = later & rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    fixed = rasp.numerical(rasp.Aggregate(keep, rasp.numerical(rasp.tokens == "a"), default=0))
    assert compile_sop(fixed, ["a", "b"], 4, causal=True).config["n_layers"] >= 1


def test_a_bool_or_number_refusal_hints_in_the_program_s_api() -> None:
    """tracr_lib_campaign seed 780237 --big --deep --their-lib #14: `x if y else z` of
    `indices == length` (always False), the index and the index gives 0 at position 0 and False
    after it; the hint named the original's `indicator(...)`. Where the graph is rewritten (the
    nary map's tuples) no lowered node was left to tell the program was tracr's."""
    length = lib.make_length()
    same = lib.make_nary_sequencemap(lambda x, y: x == y, rasp.indices, length)
    program = lib.make_nary_sequencemap(
        lambda x, y, z: x if y else z, same, rasp.indices, rasp.indices
    )
    with pytest.raises(CompileError) as err:
        compile_sop(program, [1, 2, 3], 4)
    (problem,) = err.value.diagnostics
    assert "can be a bool or a number" in problem.message
    assert problem.hint is not None and "indicator" not in problem.hint
    assert "rasp.Map(lambda x: 1 if x else 0, ...)" in problem.hint


def test_tracr_s_model_fields_point_at_their_counterparts() -> None:
    from rasp.tools.tracr_compiling import compile_rasp_to_model

    model = compile_rasp_to_model(lib.make_hist(), {1, 2}, 3, compiler_bos="BOS")
    assert model.residual_labels == [
        "one",
        "bos",
        "pad",
        "tokens:1",
        "tokens:2",
        "hist.frac",
        "hist",
    ]
    assert len(model.residual_labels) == model.config["d_model"]
    with pytest.raises(AttributeError, match=r"'params' \(tracr's; here: model.weights"):
        _ = model.params
    out = model.apply(["BOS", 1, 2])
    with pytest.raises(AttributeError, match=r"'residuals' \(tracr's; here: .*run_with_cache"):
        _ = out.residuals
    with pytest.raises(AttributeError, match="has no attribute 'nothing'$"):
        _ = out.nothing
    ids, _ = model.runtime().encode([[1, 2]])  # the hint's recipe runs
    _, cache = model.runtime().run_with_cache(ids)
    assert "blocks.0.hook_resid_pre" in cache


def test_a_missing_module_is_not_called_the_program_s_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a tracr notebook's `import jax.numpy as jnp` was "an error in the Python program itself"
    path = tmp_path / "nb.py"
    path.write_text(
        "from tracr.rasp import rasp\nimport jax.numpy as jnp\nimport no_such_module_56\n"
        "program = rasp.Map(lambda x: x + 1, rasp.tokens)\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "run", f"{path}:program", "--tracr-compat", "--input", "[1]")
    assert code == 1 and out == ""
    if "'jax'" in err:  # (where jax is installed, the next import is the missing one)
        assert f"{path}:2:1: error: {path} imports 'jax', which is not installed" in err
        assert "rasp.tracr and its models do not" in err
    else:
        assert f"{path}:3:1: error: {path} imports 'no_such_module_56', which is not" in err
    assert "install" in err and "error in the Python program itself" not in err

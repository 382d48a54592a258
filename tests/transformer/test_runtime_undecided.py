"""Undecided outputs in hooked flows: the logits of `run_with_hooks` decode as `run_hooked`
decodes them, and a numerical output left between its values by a hook is named or marked, never
snapped silently to the nearest value (transformer/ties.py, docs/runtime.md)."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from transformer import ModelOutputError, UndecidedOutputError
from transformer.hooked_runs import HookedLogits
from transformer.hooks import HookPoint
from transformer.ties import ARGMAX, RAISE

ROOT = Path(__file__).resolve().parents[2]


def _model(file: str, name: str, vocab: str = "abc", max_len: int = 5) -> Any:
    program = load_file(str(ROOT / "programs" / f"{file}.rasp")).get(name)
    compiled = compile_sop(program, list(vocab), max_len)
    return transformer.from_tensors(compiled.weights, compiled.metadata)


@pytest.fixture(scope="module")
def reverse() -> transformer.CompiledTransformer:
    return _model("reverse", "reverse")


@pytest.fixture(scope="module")
def hist() -> transformer.CompiledTransformer:
    return _model("hist", "hist")


@pytest.fixture(scope="module")
def frac_prevs() -> transformer.CompiledTransformer:
    return _model("frac_prevs", "frac_prevs", "xa", 6)


def _zero(value: torch.Tensor, hook: HookPoint) -> None:
    value.zero_()


def _shift(amount: float) -> Any:
    def hook(value: torch.Tensor, hook: HookPoint) -> torch.Tensor:
        return value + amount  # every logit moved off its value

    return hook


ABLATE_REVERSE = [("blocks.1.hook_attn_out", _zero)]


def test_hooked_logits_decode_as_run_hooked_does(reverse: transformer.CompiledTransformer) -> None:
    ids, lengths = reverse.encode(["abc"])
    logits = reverse.run_with_hooks(ids, ABLATE_REVERSE)
    assert isinstance(logits, HookedLogits)
    # before: [["a", "a", "a"]], the first listed value at every tied position, silently
    with pytest.raises(UndecidedOutputError, match="undecided at position 0 of input 0"):
        reverse.decode(logits, lengths)
    # the marker survives what a researcher does to logits before decoding them
    for derived in (logits.clone(), logits[:, :], logits.cpu(), torch.cat([logits, logits])):
        assert isinstance(derived, HookedLogits)
    with pytest.raises(UndecidedOutputError):
        reverse.decode(logits.clone()[:, :4], lengths)
    with pytest.raises(UndecidedOutputError):
        reverse.decode(reverse.run_with_cache(ids, fwd_hooks=ABLATE_REVERSE)[0], lengths)
    assert reverse.decode(logits, lengths, undecided=None) == [[None] * 3]
    assert reverse.decode(logits, lengths, undecided=ARGMAX) == [["a"] * 3]


def test_unhooked_logits_stay_plain_and_decode_as_before(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, lengths = reverse.encode(["abc", "ba"])
    for logits in (
        reverse.forward(ids),
        reverse.run_with_cache(ids)[0],
        reverse.run_with_hooks(ids, []),  # no hook: nothing was changed
    ):
        assert type(logits) is torch.Tensor
        assert reverse.decode(logits, lengths) == [["c", "b", "a"], ["a", "b"]]
    tied = torch.zeros(2, 4, 3)  # plain zeros: argmax's first value, as always
    assert reverse.decode(tied, lengths) == [["a"] * 3, ["a"] * 2]
    # a hook that changes nothing still marks its logits, which then decode as usual
    untouched = reverse.run_with_hooks(ids, [("blocks.0.hook_resid_post", lambda v, hook: None)])
    assert isinstance(untouched, HookedLogits)
    assert reverse.decode(untouched, lengths) == [["c", "b", "a"], ["a", "b"]]


def test_an_ablated_numerical_output_is_named_with_its_logit(
    hist: transformer.CompiledTransformer,
) -> None:
    ablate = [("blocks.0.hook_mlp_out", _zero)]
    assert hist.run(["aab"]) == [[2, 2, 1]]
    # before: [[1, 1, 1]], the logit 0 snapped to the nearest count, 1, silently
    with pytest.raises(UndecidedOutputError) as err:
        hist.run_hooked(["aab"], ablate)
    message = str(err.value)
    assert message.startswith(
        "output 'hist' is undecided at position 0 of input 0 (and 2 more positions): its logit, "
        "0, is 1 from the nearest value it can take, 1, beyond the certified float32 error "
        "bound 0; "
    )
    assert (err.value.input, err.value.position) == (0, 0) and "\n" not in message
    assert hist.run_hooked(["aab"], ablate, undecided=None) == [[None] * 3]
    assert hist.run_hooked(["aab"], ablate, undecided=ARGMAX) == [[1, 1, 1]]  # as before
    ids, lengths = hist.encode(["aab"])
    with pytest.raises(UndecidedOutputError, match="its logit, 0, "):
        hist.decode(hist.run_with_hooks(ids, ablate), lengths)


def test_a_numerical_logit_moved_within_the_bound_still_decodes(
    hist: transformer.CompiledTransformer, frac_prevs: transformer.CompiledTransformer
) -> None:
    ids, lengths = hist.encode(["aab", "c"])
    logits = hist.forward(ids).clone()
    logits[0, 2] += 0.25  # a count of 2.25: no count
    assert hist.decode(logits, lengths, undecided=None) == [[2, None, 1], [1]]
    with pytest.raises(UndecidedOutputError, match="position 1 of input 0: its logit, 2.25, "):
        hist.decode(logits, lengths, undecided=RAISE)
    assert hist.decode(logits, lengths) == [[2, 2, 1], [1]]  # unhooked: snapped, as always
    # a grid output (by length): off its grid by more than the certified bound
    bound = frac_prevs.meta.output.error_bound
    assert bound is not None and 0 < bound < 1e-5
    ids, lengths = frac_prevs.encode(["xax"])
    logits = frac_prevs.forward(ids).clone()
    logits[0, 2] += 2 * bound  # past the bound, far within the grid's half step
    logits[0, 3] += bound / 2  # within it: still the value
    assert frac_prevs.decode(logits, lengths, undecided=None) == [[1, None, 2 / 3]]


@pytest.mark.parametrize(
    ("file", "name", "vocab", "max_len"),
    [
        ("hist", "hist", "abc", 5),
        ("double_hist", "double_hist", "abc", 5),
        ("frac_prevs", "frac_prevs", "xa", 6),
        ("length", "length", "abc", 5),
    ],
)
def test_no_input_the_program_has_a_value_for_is_undecided(
    file: str, name: str, vocab: str, max_len: int
) -> None:
    model = _model(file, name, vocab, max_len)
    words = ["".join(t) for n in range(1, max_len + 1) for t in itertools.product(vocab, repeat=n)]
    assert model.run(words, undecided=RAISE) == model.run(words)
    assert model.to(dtype=torch.float64).run(words, undecided=RAISE) == model.run(words)


def test_a_model_without_a_certified_bound_finds_no_numerical_output_undecided(
    hist: transformer.CompiledTransformer,
) -> None:
    raw = dict(hist.meta.raw)
    raw.pop("certificate")
    tensors = {name: p.detach().numpy() for name, p in hist.model.state_dict().items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare = transformer.from_tensors(tensors, raw)
    assert bare.meta.output.error_bound is None
    ablate = [("blocks.0.hook_mlp_out", _zero)]
    assert bare.run_hooked(["aab"], ablate) == [[1, 1, 1]]  # nothing to tell a value by


@pytest.mark.parametrize("seed", range(4))
def test_numpy_and_torch_find_the_same_numerical_positions(
    seed: int, hist: transformer.CompiledTransformer, frac_prevs: transformer.CompiledTransformer
) -> None:
    # the torch reduction runs on GPUs; on the CPU numpy's does: the two must agree
    rng = np.random.default_rng(seed)
    for model in (hist, frac_prevs):
        spec = model.meta.output
        numbers = rng.integers(0, 13, size=(3, 5, 1)) / 4 + rng.choice([0, 1e-7, 1e-3], (3, 5, 1))
        at_tokens = torch.from_numpy(numbers)
        real = torch.from_numpy(np.arange(5) < rng.integers(1, 6, size=3)[:, None])
        ours = spec._reduce_numpy(at_tokens, real.numpy(), True)
        theirs = spec._reduce_torch(at_tokens, real, True)
        assert ours.undecided is not None and theirs.undecided is not None
        assert ours.undecided.tolist() == theirs.undecided.tolist()
        assert ours.codes.tolist() == theirs.codes.tolist()
        with pytest.raises(ModelOutputError) as a:
            spec.check(ours)
        with pytest.raises(ModelOutputError) as b:
            spec.check(theirs)
        assert str(a.value) == str(b.value)

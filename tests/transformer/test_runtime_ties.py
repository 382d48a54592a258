"""A categorical position whose largest logit is shared (an ablation's all-zero logits) is
undecided: decoding names it or marks it, never reads it as the first listed value."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from transformer import ModelOutputError
from transformer.hooks import HookPoint
from transformer.interop import decode_logits as export_decode
from transformer.ties import ARGMAX, RAISE, tied_numpy, tied_torch

ROOT = Path(__file__).resolve().parents[2]


def _compiled(file: str, name: str) -> Any:
    return compile_sop(
        load_file(str(ROOT / "programs" / f"{file}.rasp")).get(name), ["a", "b", "c"], 5
    )


@pytest.fixture(scope="module")
def reverse_compiled() -> Any:
    return _compiled("reverse", "reverse")


@pytest.fixture(scope="module")
def reverse(reverse_compiled: Any) -> transformer.CompiledTransformer:
    return transformer.from_tensors(reverse_compiled.weights, reverse_compiled.metadata)


def _zero_attention(value: torch.Tensor, hook: HookPoint) -> None:
    value.zero_()  # the ablated head writes nothing: every output logit is 0


ABLATE = [("blocks.1.hook_attn_out", _zero_attention)]
# undefined on "ab": the interpreter refuses to average two strings; the model's logits are halves
FIRSTS = "firsts = aggregate(select(indices, indices, <=), tokens);\n"


def test_an_ablation_that_ties_every_logit_is_named_not_read_as_the_first_value(
    reverse: transformer.CompiledTransformer,
) -> None:
    # before: [["a", "a", "a"], ["a", "a"]], values that read like real ones
    with pytest.raises(ModelOutputError) as err:
        reverse.run_hooked(["abc", "ba"], ABLATE)
    message = str(err.value)
    assert message.startswith(
        "output 'reverse' is undecided at position 0 of input 0 (and 4 more positions): its "
        "largest logit, 0, is shared by 'a', 'b', 'c'"
    )
    assert "undecided=None" in message and "\n" not in message


def test_undecided_marks_exactly_the_tied_positions(
    reverse: transformer.CompiledTransformer,
) -> None:
    def blank_one(value: torch.Tensor, hook: HookPoint) -> None:
        value[1, 2] = 0.0  # input 1, program position 1: its residual holds nothing

    hooks = [("blocks.1.hook_resid_post", blank_one)]
    assert reverse.run_hooked(["abc", "ba"], hooks, undecided=None) == [
        ["c", "b", "a"],
        ["a", None],
    ]
    assert reverse.run_hooked(["abc", "ba"], ABLATE, undecided="?") == [["?"] * 3, ["?"] * 2]
    ids, lengths = reverse.encode(["abc", "ba"])
    logits = reverse.run_with_hooks(ids, hooks)
    assert reverse.decode(logits, lengths, undecided=-1) == [["c", "b", "a"], ["a", -1]]
    with pytest.raises(ModelOutputError, match="at position 1 of input 1: "):
        reverse.decode(logits, lengths, undecided=RAISE)
    # a hooked run's logits decode as run_hooked decodes them: refused, unless argmax is asked
    with pytest.raises(ModelOutputError, match="at position 1 of input 1: "):
        reverse.decode(logits, lengths)
    assert reverse.decode(logits, lengths, undecided=ARGMAX) == [["c", "b", "a"], ["a", "a"]]


def test_ties_at_padding_are_not_read(reverse: transformer.CompiledTransformer) -> None:
    ids, _ = reverse.encode(["abc", "a"])
    logits = reverse.forward(ids).clone()
    logits[1, 2:] = 0.0  # past input 1's one token
    assert reverse.decode(logits, [3, 1]) == [["c", "b", "a"], ["a"]]


def _edited(compiled: Any, tensor: str, edit: Any) -> transformer.CompiledTransformer:
    tensors = dict(compiled.weights)
    tensors[tensor] = edit(tensors[tensor].copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the edited tensor's warning
        return transformer.from_tensors(tensors, compiled.metadata)


def test_edited_weights_that_tie_are_refused_by_every_decoding_path(
    reverse: transformer.CompiledTransformer, reverse_compiled: Any
) -> None:
    broken = _edited(reverse_compiled, "unembed.W_U", np.zeros_like)
    # run groups by length: the first batch's first row is input 1, named as such
    with pytest.raises(ModelOutputError, match=r"at position 0 of input 1 \(and 3 more"):
        broken.run(["abc", "a"], undecided=RAISE)
    assert broken.run(["abc", "a"]) == [["a"] * 3, ["a"]]  # argmax by default: unchanged
    assert broken.run(["abc", "a"], undecided=None) == [[None] * 3, [None]]
    assert broken.run_array(np.array([list("ab")])).tolist() == [["a", "a"]]

    def blind_to_c(w_u: np.ndarray) -> np.ndarray:
        w_u[reverse.residual_labels.index("reverse:c")] = 0.0  # an output c reads no logit
        return w_u

    no_c = _edited(reverse_compiled, "unembed.W_U", blind_to_c)
    assert no_c.run(["ab", "ba"]) == [["b", "a"], ["a", "b"]]
    with pytest.raises(ModelOutputError, match="at position 1 of input 3: "):
        no_c.run(["ab", "ba", "b", "cb"], batch_size=1, undecided=RAISE)  # in input order


def test_exported_logits_decode_ties_the_same_way(reverse: transformer.CompiledTransformer) -> None:
    guide = dict(reverse.meta.raw)
    logits = torch.zeros(1, 4, 3)
    with pytest.raises(ModelOutputError, match="undecided at position 0 of input 0"):
        export_decode(guide, logits, [3], undecided=RAISE)
    assert export_decode(guide, logits, [3]) == [["a"] * 3]
    assert export_decode(guide, logits, [3], undecided=None) == [[None] * 3]


def test_unhooked_compiled_models_never_tie(reverse: transformer.CompiledTransformer) -> None:
    words = ["".join("abc"[int(i)] for i in t) for n in range(1, 5) for t in np.ndindex(*(3,) * n)]
    assert reverse.run(words) == [list(reversed(w)) for w in words]
    ids, lengths = reverse.encode(words)
    assert reverse.decode(reverse.forward(ids), lengths, undecided=None) == reverse.run(words)


def test_an_input_the_program_has_no_value_for_may_tie_and_is_named(tmp_path: Path) -> None:
    source = tmp_path / "firsts.rasp"
    source.write_text(FIRSTS)
    program = load_file(str(source)).get("firsts")
    compiled = compile_sop(program, ["a", "b", "c"], 4)
    model = transformer.from_tensors(compiled.weights, compiled.metadata)
    # the interpreter refuses "ab" (two strings averaged); the model's logits there are halves
    with pytest.raises(ModelOutputError, match="undecided at position 1 of input 2: .* 'a', 'b'"):
        model.run(["a", "aa", "ab"], undecided=RAISE)
    assert model.run(["a", "aa", "ab"]) == [["a"], ["a", "a"], ["a", "a"]]  # as always
    assert model.run(["a", "aa", "ab"], undecided=None) == [["a"], ["a", "a"], ["a", None]]


@pytest.mark.parametrize("seed", range(5))
def test_the_numpy_and_torch_tie_masks_agree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    logits = rng.integers(-2, 3, size=(4, 6, 3)).astype(np.float32)  # many ties
    real = np.arange(6) < rng.integers(0, 7, size=4)[:, None]
    mask = tied_numpy(logits, real)
    expected = [
        [
            bool(real[b, i]) and sorted(logits[b, i])[-1] == sorted(logits[b, i])[-2]
            for i in range(6)
        ]
        for b in range(4)
    ]
    assert mask.tolist() == expected
    assert tied_torch(torch.from_numpy(logits), torch.from_numpy(real)).tolist() == expected

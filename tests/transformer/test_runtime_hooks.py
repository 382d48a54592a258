"""Interventions: `run_with_hooks`, `run_with_cache(fwd_hooks=...)`, `sop_hook` and `run_hooked`.

Patched runs are checked against what the program computes on the correspondingly changed state:
the interpreter on a changed input, or outputs computed by hand from a changed s-op.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file
from rasp.sops import evaluate
from transformer import ModelInputError
from transformer.hooks import HookPoint, hook_names

ROOT = Path(__file__).resolve().parents[2]


def _model(file: str, name: str, max_len: int = 6) -> transformer.CompiledTransformer:
    program = load_file(str(ROOT / "programs" / f"{file}.rasp")).get(name)
    compiled = compile_sop(program, list("abc"), max_len)
    return transformer.from_tensors(compiled.weights, compiled.metadata)


@pytest.fixture(scope="module")
def reverse() -> transformer.CompiledTransformer:
    return _model("reverse", "reverse")


@pytest.fixture(scope="module")
def sort() -> transformer.CompiledTransformer:
    return _model("sort", "sorted")


def test_hooks_that_change_nothing_give_the_plain_run_bit_for_bit(
    sort: transformer.CompiledTransformer,
) -> None:
    ids, _ = sort.encode(["cabba", "ab"])
    seen: list[str] = []

    def look(value: torch.Tensor, hook: HookPoint) -> None:
        seen.append(hook.name)

    plain_logits, plain_cache = sort.run_with_cache(ids)
    logits, cache = sort.run_with_cache(ids, fwd_hooks=[(lambda name: True, look)])
    assert torch.equal(logits, plain_logits) and torch.equal(logits, sort.forward(ids))
    assert seen == list(hook_names(sort.config.n_layers))  # every hook, in forward order
    assert cache.keys() == plain_cache.keys()
    assert all(torch.equal(cache[name], plain_cache[name]) for name in cache)


def test_sort_follows_a_patched_target_position(sort: transformer.CompiledTransformer) -> None:
    # sort moves the token at i to target_position[i]: set a permutation there and every token
    # lands where it says (the model holds the s-op as target_position.int, with .sq beside it)
    rng = random.Random(5)
    for tokens in ["cab", "abcb", "ccbaa", "bacabc"]:
        n = len(tokens)
        for _ in range(3):
            target = rng.sample(range(n), n)
            hooks = [
                sort.sop_hook("target_position.int", t, position=i) for i, t in enumerate(target)
            ]
            want = [""] * n
            for i, t in enumerate(target):
                want[t] = tokens[i]
            assert sort.run_hooked([tokens], hooks) == [want], (tokens, target)


def test_the_patch_writes_every_number_the_reading_pins(
    sort: transformer.CompiledTransformer,
) -> None:
    name, patch = sort.sop_hook("target_position.int", 1, position=0)
    labels = sort.residual_labels
    assert name == "blocks.1.hook_resid_post"  # after the MLP that writes both dimensions
    assert {labels[d]: x for d, x in zip(patch.dims, patch.numbers, strict=True)} == {
        "target_position.int": 1.0,
        "target_position.sq": 4.0,  # (1 - 3)^2 at max_len 6, as the file's reach lists it
    }
    with pytest.raises(ModelInputError, match=r"only for the values 0, 1, .*; 7 is none"):
        sort.sop_hook("target_position.int", 7, position=0)
    with pytest.raises(ModelInputError, match=r"target_position is held only in parts \(target_"):
        sort.sop_hook("target_position", 1, position=0)


def test_a_patched_token_gives_the_interpreters_output_on_the_changed_input(
    reverse: transformer.CompiledTransformer,
) -> None:
    program = load_file(str(ROOT / "programs" / "reverse.rasp")).get("reverse")
    for tokens in ["a", "abc", "cabba", "bbcaac"]:
        for position, token in itertools.product(range(len(tokens)), "abc"):
            hook = reverse.sop_hook("tokens", token, position=position)
            changed = tokens[:position] + token + tokens[position + 1 :]
            assert reverse.run_hooked([tokens], [hook]) == [list(evaluate(program, changed).values)]


def test_a_patched_length_flips_a_prefix(reverse: transformer.CompiledTransformer) -> None:
    # flip = select(indices, length - indices - 1, ==): with length k, position i reads k - 1 - i
    name, _ = reverse.sop_hook("length", 2)
    assert name == "blocks.0.hook_resid_post"
    for tokens in ["abc", "cabba", "bbcaac"]:
        for k in range(1, len(tokens) + 1):
            out = reverse.run_hooked([tokens], [reverse.sop_hook("length", k)])[0]
            assert out[:k] == list(tokens[:k][::-1]), (tokens, k)


def test_a_patched_output_is_what_decodes(reverse: transformer.CompiledTransformer) -> None:
    name, _ = reverse.sop_hook("reverse", "b", position=1)
    assert name == "blocks.1.hook_resid_mid"  # written by layer 1's attention, read at the end
    assert reverse.run_hooked(["abca"], [reverse.sop_hook("reverse", "b", position=1)]) == [
        ["a", "b", "b", "a"]
    ]
    hooks = [reverse.sop_hook("reverse", "c", at="blocks.1.hook_resid_post")]  # every position
    assert reverse.run_hooked(["abca", "ab"], hooks) == [["c"] * 4, ["c"] * 2]


def test_activation_patching_from_another_runs_cache(
    reverse: transformer.CompiledTransformer,
) -> None:
    # the embedding of "cab" in a run of "abc": the run then computes reverse("cab"), whether the
    # hook returns the new tensor or writes it in place
    clean, _ = reverse.encode(["cab"])
    _, cache = reverse.run_with_cache(clean)
    ids, lengths = reverse.encode(["abc"])

    def replace(value: torch.Tensor, hook: HookPoint) -> torch.Tensor:
        return cache[hook.name]

    def in_place(value: torch.Tensor, hook: HookPoint) -> None:
        value[:] = cache[hook.name]

    for fn in (replace, in_place):
        logits = reverse.run_with_hooks(ids, [("hook_embed", fn)])
        assert reverse.decode(logits, lengths) == [["b", "a", "c"]]
    assert reverse.run(["abc"]) == [["c", "b", "a"]]


def test_no_hook_outlives_its_call_even_when_it_raises(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, lengths = reverse.encode(["abc"])
    want = reverse.forward(ids)

    class Boom(Exception):
        pass

    def boom(value: torch.Tensor, hook: HookPoint) -> None:
        value.zero_()  # a half-done edit must not stay in the weights either
        raise Boom(hook.name)

    for name in ("hook_pos_embed", "hook_embed", "blocks.0.hook_resid_post"):
        with pytest.raises(Boom, match=name):
            reverse.run_with_hooks(ids, [(name, boom)])
        assert torch.equal(reverse.forward(ids), want)
    patched = reverse.run_with_hooks(ids, [reverse.sop_hook("tokens", "a")])
    assert reverse.decode(patched, lengths) == [["a", "a", "a"]]
    assert torch.equal(reverse.forward(ids), want) and reverse.run(["abc"]) == [["c", "b", "a"]]


def test_the_cache_of_a_hooked_run_holds_each_value_as_the_hooks_left_it(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, _ = reverse.encode(["abc"])
    _, plain = reverse.run_with_cache(ids)
    name, patch = reverse.sop_hook("tokens", "c", position=0, at="blocks.0.hook_resid_post")

    def scale(value: torch.Tensor, hook: HookPoint) -> None:
        value *= 2  # in place, on block 1's resid_pre: block 0's resid_post stays as recorded

    logits, cache = reverse.run_with_cache(
        ids, fwd_hooks=[(name, patch), ("blocks.1.hook_resid_pre", scale)]
    )
    labels = reverse.residual_labels
    post = cache["blocks.0.hook_resid_post"][0, 1]  # program position 0
    assert post[labels.index("tokens:c")] == 1 and post[labels.index("tokens:a")] == 0
    assert torch.equal(cache["blocks.1.hook_resid_pre"], 2 * cache["blocks.0.hook_resid_post"])
    assert torch.equal(cache["blocks.0.hook_resid_mid"], plain["blocks.0.hook_resid_mid"])
    assert not torch.equal(cache["blocks.1.hook_attn_out"], plain["blocks.1.hook_attn_out"])


def test_predicates_choose_names_and_hooks_see_them_in_order(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, _ = reverse.encode(["ab"])
    seen: list[tuple[str, int]] = []
    reverse.run_with_hooks(
        ids,
        [
            (
                lambda name: name.endswith("hook_resid_post"),
                lambda v, hook: seen.append((hook.name, 1)),
            ),
            ("blocks.1.hook_resid_post", lambda v, hook: seen.append((hook.name, 2))),
        ],
    )
    assert seen == [
        ("blocks.0.hook_resid_post", 1),
        ("blocks.1.hook_resid_post", 1),
        ("blocks.1.hook_resid_post", 2),
    ]
    assert HookPoint("blocks.1.attn.hook_z").layer() == 1


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ([("blocks.0.hook_resid_pst", print)], r"unknown hook name 'blocks.0.hook_resid_pst'; did "
         r"you mean blocks.0.hook_resid_post"),
        ([("blocks.2.hook_resid_post", print)], r"unknown hook name .*blocks.0 to blocks.1"),
        ([(lambda name: "blocks.7" in name, print)], r"chooses none of the model's 28 hook"),
        ([("hook_embed",)], r"fwd_hooks\[0\] must be a \(name, fn\) pair"),
        ([(3, print)], r"name must be a hook name or a predicate"),
        ("hook_embed", r"fwd_hooks must be a list"),
        ({"hook_embed": print}, r"fwd_hooks must be a list of \(name, fn\) pairs, got dict"),
        ([("hook_embed", lambda v, hook: v[:, :1])], r"returned torch.float32 \[1, 1, 13\] .* "
         r"torch.float32 \[1, 3, 13\]"),
        ([("hook_embed", lambda v, hook: v.double())], r"returned torch.float64"),
        ([("hook_embed", lambda v, hook: 0.0)], r"returned float"),
    ],
)  # fmt: skip
def test_bad_hooks_are_named(
    reverse: transformer.CompiledTransformer, hooks: Any, message: str
) -> None:
    ids, _ = reverse.encode(["ab"])
    with pytest.raises(ModelInputError, match=message):
        reverse.run_with_hooks(ids, hooks)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("lenght", 2), {}, r"no residual dimension is labelled 'lenght'; did you mean length"),
        (("tokens", "z"), {}, r"tokens has no value 'z' in the model; its values are 'a', 'b', 'c'$"),
        (("length", "2"), {}, r"length is numerical: its value must be a finite number"),
        (("length", float("nan")), {}, r"finite number"),
        (("length", 7), {}, r"length has no value 7 in the model: its 6 values are 1, 2, 3, 4, 5, "
         r"6; no input gives"),
        (("length", 2.5), {}, r"length has no value 2.5"),
        (("reverse", "a"), {"at": 0}, r"blocks.1.attn writes reverse after blocks.0.hook_resid_"
         r"post, adding to the patched value; patch at blocks.1.hook_resid_mid or later"),
        (("tokens", "a"), {"at": 1}, r"nothing reads tokens after blocks.1.hook_resid_post"),
        (("tokens", "a"), {"at": 2}, r"at must be a block 0..1"),
        (("tokens", "a"), {"at": "blocks.0.attn.hook_z"}, r"at must be a block"),
        (("tokens", "a"), {"position": -1}, r"position must be a program position"),
        # no input reaches it: it was refused only once a run's inputs were too short for it
        (("tokens", "a"), {"position": 6}, r"position 6 is past the model's last program "
         r"position 5 \(max_len 6; positions count from 0"),
    ],
)  # fmt: skip
def test_bad_patches_are_refused_before_the_run(
    reverse: transformer.CompiledTransformer, args: Any, kwargs: Any, message: str
) -> None:
    with pytest.raises(ModelInputError, match=message):
        reverse.sop_hook(*args, **kwargs)


def test_a_numerical_patch_is_one_of_the_values_the_file_lists(
    reverse: transformer.CompiledTransformer,
) -> None:
    # length 99 decoded silently as the nearest length the weights handle; now refused, while
    # every listed value (and the same number written as a float) is taken, as the listed
    # number (3.0000000000000004 writes 3)
    for k in (1, 6, 6.0, 3.0000000000000004):
        assert reverse.sop_hook("length", k)[1].numbers == (float(round(k)),)
    with pytest.raises(ModelInputError, match="length has no value 99") as err:
        reverse.sop_hook("length", 99)
    assert "run_with_hooks" in err.value.hint


def test_a_patch_past_the_inputs_or_off_the_residual_is_refused(
    reverse: transformer.CompiledTransformer,
) -> None:
    hook = reverse.sop_hook("tokens", "a", position=3)
    with pytest.raises(ModelInputError, match="sets program position 3, but the inputs have 2"):
        reverse.run_hooked(["ab"], [hook])
    with pytest.raises(ModelInputError, match="runs at a residual hook .*not at hook_embed"):
        reverse.run_hooked(["ab"], [("hook_embed", hook[1])])


SCRIPT = """
import json, sys
import torch
import transformer

model = transformer.load(sys.argv[1])
torch.set_float32_matmul_precision("medium")
inside = []

def look(value, hook):
    inside.append([torch.get_float32_matmul_precision(), torch.is_autocast_enabled("cpu")])

with torch.autocast("cpu", dtype=torch.bfloat16):
    outputs = model.run_hooked(["abc"], [(lambda name: name.endswith("resid_post"), look)])
print(json.dumps({"inside": inside, "after": torch.get_float32_matmul_precision(),
                  "outputs": outputs}))
"""


def test_hooks_run_inside_the_precision_guard(prev_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(prev_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["inside"] and all(flags == ["highest", False] for flags in seen["inside"]), seen
    assert seen["after"] == "medium"
    assert seen["outputs"] == [["-", "a", "b"]]


def test_hooks_get_the_hook_point_by_keyword_as_in_transformer_lens(
    reverse: transformer.CompiledTransformer,
) -> None:
    seen: list[str] = []

    def keyword_only(value: torch.Tensor, *, hook: HookPoint) -> None:
        seen.append(hook.name)

    reverse.run_hooked(["ab"], [("blocks.0.mlp.hook_post", keyword_only)])
    assert seen == ["blocks.0.mlp.hook_post"]


@pytest.mark.parametrize("file", ["reverse", "hist"])  # hist reads no position: a zero buffer
def test_an_edit_of_a_cached_activation_never_reaches_the_model(file: str) -> None:
    # hook_pos_embed was a view of W_pos (or of the zero embedding): writing a cache entry, as
    # activation patching does, changed every later run of the model
    model = _model(file, file, max_len=4)
    ids, lengths = model.encode(["abc"])
    want = model.forward(ids)
    for hooks in ([], [("hook_embed", lambda value, hook: None)]):
        _, cache = model.run_with_cache(ids, fwd_hooks=hooks)
        with torch.inference_mode():  # as a hook of a later run would write it
            for entry in cache.values():
                entry.fill_(5.0)
        assert torch.equal(model.forward(ids), want)


def test_a_hook_after_a_replacement_edits_a_copy_not_the_callers_tensor(
    reverse: transformer.CompiledTransformer,
) -> None:
    # the second hook at a name was handed the first one's return value itself: zeroing it in
    # place wrote into the other run's cache the first hook had returned
    ids, _ = reverse.encode(["ab"])
    _, clean = reverse.run_with_cache(ids)
    kept = {name: value.clone() for name, value in clean.items()}
    name = "blocks.0.hook_resid_post"

    def patch(value: torch.Tensor, hook: HookPoint) -> torch.Tensor:
        return clean[hook.name]

    def zero(value: torch.Tensor, hook: HookPoint) -> None:
        value[:, 1] = 0.0

    _, cache = reverse.run_with_cache(ids, fwd_hooks=[(name, patch), (name, zero)])
    assert all(torch.equal(clean[key], kept[key]) for key in kept)
    assert not cache[name][:, 1].any() and torch.equal(cache[name][:, 2], kept[name][:, 2])


def test_run_with_cache_takes_transformer_lens_names_filter_and_remove_batch_dim(
    reverse: transformer.CompiledTransformer,
) -> None:
    ids, _ = reverse.encode(["abc"])
    logits, full = reverse.run_with_cache(ids)
    pattern = "blocks.1.attn.hook_pattern"
    for names_filter in (pattern, [pattern], lambda name: name.endswith("hook_pattern")):
        got, cache = reverse.run_with_cache(ids, names_filter=names_filter)
        assert torch.equal(got, logits)
        assert set(cache) <= {"blocks.0.attn.hook_pattern", pattern} and pattern in cache
        assert torch.equal(cache[pattern], full[pattern])
    _, cache = reverse.run_with_cache(ids, names_filter=[pattern], remove_batch_dim=True)
    assert torch.equal(cache[pattern], full[pattern][0])
    for kwargs, message in [
        ({"names_filter": "blocks.1.attn.hook_patern"}, r"did you mean blocks.1.attn.hook_pattern"),
        ({"names_filter": lambda name: "blocks.7" in name}, r"names_filter chooses none"),
        ({"names_filter": 3}, r"names_filter must be a hook name"),
    ]:
        with pytest.raises(ModelInputError, match=message):
            reverse.run_with_cache(ids, **kwargs)
    two, _ = reverse.encode(["abc", "ab"])
    with pytest.raises(ModelInputError, match=r"remove_batch_dim takes a batch of one row"):
        reverse.run_with_cache(two, remove_batch_dim=True)


def test_hooks_may_come_from_any_iterable_as_in_transformer_lens(
    reverse: transformer.CompiledTransformer,
) -> None:
    # a generator of pairs was refused ("must be a list ..., got generator")
    ids, _ = reverse.encode(["ab"])
    seen: list[str] = []
    names = ("hook_embed", "blocks.1.hook_resid_post")
    reverse.run_with_hooks(ids, ((name, lambda v, hook: seen.append(hook.name)) for name in names))
    assert seen == list(names)

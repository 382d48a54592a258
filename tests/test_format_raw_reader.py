"""docs/format.md's reader written with numpy and safetensors alone ("Reading a file without
rasp-forge") computes what the runtime computes: the format page is enough to run a model from
scratch, masks, causal attention and a missing `W_pos` included."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from doc_examples import ROOT, blocks

import transformer
from compiler import compile_sop
from rasp.interpreter import load_file


def _raw_reader() -> Any:
    (code,) = [
        b.text
        for b in blocks(ROOT / "docs" / "format.md")
        if b.language == "python" and "def run_raw" in b.text
    ]
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102 (the page's own example)
    return namespace["run_raw"]


SAME = "same = aggregate(select(tokens, tokens, ==), tokens);"  # reads no position: no W_pos
SEEN = "seen = selector_width(select(tokens, tokens, ==) and select(indices, indices, <)) > 0;"


@pytest.mark.parametrize(
    ("program", "name", "vocab", "options"),
    [
        ("reverse.rasp", "reverse", "abc", {}),
        ("sort.rasp", "sorted", "abc", {}),  # a masked head
        ("dyck1.rasp", "dyck1", "()", {}),
        ("most_freq.rasp", "most_freq", "ab", {}),
        (SAME, "same", "ab", {}),
        (SEEN, "seen", "ab", {"causal": True, "head_masks": False}),
    ],
)
def test_the_documented_raw_reader_runs_as_the_runtime(
    tmp_path: Path, program: str, name: str, vocab: str, options: dict[str, Any]
) -> None:
    if program.endswith(".rasp"):
        source = ROOT / "programs" / program
    else:
        source = tmp_path / "p.rasp"
        source.write_text(program, encoding="utf-8")
    path = tmp_path / "m.safetensors"
    compile_sop(load_file(source).get(name), list(vocab), 4, **options).save(path)
    model = transformer.load(path)
    if name == "same":
        assert model.meta.raw["config"]["positional"] is False
    if model.meta.raw["output"]["encoding"] != "categorical":
        pytest.skip("the page's reader decodes a categorical output only")
    run_raw = _raw_reader()
    for n in range(1, 5):
        for tokens in itertools.product(vocab, repeat=n):
            ids, _ = model.encode(["".join(tokens)])
            _, cache = model.run_with_cache(ids)
            output, resid, _ = run_raw(str(path), list(tokens))
            assert output == model.run(["".join(tokens)])[0], tokens
            final = cache[f"blocks.{model.config.n_layers - 1}.hook_resid_post"][0, 1:].numpy()
            assert np.allclose(resid, final, atol=1e-4), tokens

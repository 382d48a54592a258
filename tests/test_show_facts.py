"""Every word `rasp show` prints, checked against the weights of the file it describes.

The expected facts are read off the tensors alone (which heads write anything, which residual
dimensions each head and MLP writes, the embedding's and unembedding's rows and columns, the
tensors' shapes), never from the metadata's `layers`, so a summary that repeats a wrong metadata
entry, or words it wrongly, fails here. Run on every library program, on tracr programs and on
causal models."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("transformer")
compiler = pytest.importorskip("compiler")

from safetensors.numpy import load_file  # noqa: E402

from rasp.errors import Source  # noqa: E402
from rasp.interpreter import load_file as load_program  # noqa: E402
from tests.cli_helpers import run  # noqa: E402
from tests.test_differential import PROGRAMS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECIAL = ("one", "bos", "pad")


@dataclass(frozen=True)
class LayerFacts:
    n_heads: int
    d_head: int
    d_mlp: int
    heads: dict[int, set[str]]  # head -> the variables its W_O writes
    mlp_writes: set[str]  # the variables W_out writes


def variable(label: str) -> str:
    """The variable a residual label belongs to: `hist.frac`, `indices^2` and `sort:a` are
    dimensions of `hist`, `indices` and `sort` (a helper dimension is named after its s-op)."""
    return re.split(r"[.^:]", label, maxsplit=1)[0]


def writes(matrix: np.ndarray, labels: list[str]) -> set[str]:
    """The variables of the residual dimensions (last axis) `matrix` writes anything to."""
    return {
        variable(labels[d]) for d in np.flatnonzero(np.abs(matrix).reshape(-1, len(labels)).sum(0))
    }


def layer_facts(weights: dict[str, np.ndarray], labels: list[str]) -> list[LayerFacts]:
    found = {int(m.group(1)) for k in weights if (m := re.match(r"blocks\.(\d+)\.", k))}
    layers = []
    for layer in range(max(found, default=-1) + 1):
        w_o = weights[f"blocks.{layer}.attn.W_O"]  # [head, d_head, d_model]
        w_in, w_out = weights[f"blocks.{layer}.mlp.W_in"], weights[f"blocks.{layer}.mlp.W_out"]
        heads = {h: writes(w_o[h], labels) for h in range(w_o.shape[0])}
        layers.append(
            LayerFacts(
                n_heads=w_o.shape[0],
                d_head=w_o.shape[1],
                d_mlp=w_in.shape[1],
                heads={h: names for h, names in heads.items() if names},
                mlp_writes=writes(w_out, labels),
            )
        )
    return layers


def check_summary(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    weights = load_file(str(path))
    code, out, err = run(capsys, "show", str(path), "--json")
    assert code == 0, err
    shown = json.loads(out)
    code, text, err = run(capsys, "show", str(path))
    assert code == 0, err
    # the residual labels, one per dimension, from the JSON groups (checked against the weights
    # below): a group covers its dims, the groups tile the residual stream in order
    labels = []
    for entry in shown["residual"]:
        start, stop = entry["dims"]
        assert start == len(labels), entry
        values = entry["values"]
        labels += (
            [entry["name"]] * (stop - start)
            if values is None
            else [f"{entry['name']}:{v}" for v in values]
        )
        assert values is None or len(values) == stop - start, entry
    d_model = weights["embed.W_E"].shape[1]
    assert (
        len(labels) == d_model
        and f"residual stream ({d_model} dims, and the sublayers that write them):" in text
    )

    # shape and parameters
    facts = layer_facts(weights, labels)
    config = shown["config"]
    assert config["n_layers"] == len(facts) == len(shown["layers"])
    assert config["d_model"] == d_model
    shapes = config.get("layers") or [config] * len(facts)
    heads_text = " ".join(f"{f.n_heads}x{f.d_head}" for f in facts) or "-"
    mlps_text = " ".join(str(f.d_mlp) for f in facts) or "-"
    layers_text = f"{len(facts)} layer{'s' * (len(facts) != 1)}"
    direction = config.get("attention_dir", "bidirectional")
    w_pos = weights.get("pos_embed.W_pos")  # none where no s-op reads a position
    n_ctx = config["n_ctx"] if w_pos is None else w_pos.shape[0]
    assert (
        f"shape:       {layers_text}, d_model {d_model}, n_ctx {n_ctx}, {direction}; "
        f"heads {heads_text}, d_mlp {mlps_text}"
    ) in text.splitlines()
    for fact, shape in zip(facts, shapes, strict=True):
        assert (shape["n_heads"], shape["d_head"], shape["d_mlp"]) == (
            fact.n_heads,
            fact.d_head,
            fact.d_mlp,
        )
    total = sum(t.size for t in weights.values())
    nonzero = sum(int(np.count_nonzero(t)) for t in weights.values())
    assert shown["parameters"] == {"total": total, "nonzero": nonzero}
    assert f"parameters:  {total:,} total, {nonzero:,} non-zero" in text

    # heads and MLPs: which exist, and what each one's name says it writes
    used = " ".join(str(len(f.heads)) for f in facts) or "-"
    assert f"heads used:  {used} (per layer)" in text.splitlines()
    rows = _table_rows(text)
    expected_rows = []
    for layer, (fact, entry) in enumerate(zip(facts, shown["layers"], strict=True)):
        attn = {op["head"]: op["name"] for op in entry.get("attn", [])}
        assert set(attn) == set(fact.heads), (layer, attn, fact.heads)
        for h, name in attn.items():
            assert {variable(n) for n in name.split(", ")} == fact.heads[h], (layer, h, name)
        mlp_names = {variable(op["name"]) for op in entry.get("mlp", [])}
        assert mlp_names == fact.mlp_writes, (layer, mlp_names, fact.mlp_writes)
        masks = (shapes[layer].get("masks") or []) if config.get("layers") else []
        for op in entry.get("attn", []):
            mask = masks[op["head"]] if op["head"] < len(masks) else ""
            block = f"head {op['head']}" + (f" (keys {mask} query)" if mask else "")
            expected_rows.append((str(layer), block, op["name"], op["op"]))
        expected_rows += [(str(layer), "mlp", op["name"], op["op"]) for op in entry.get("mlp", [])]
    assert [row for row in rows if row[0] != "-"] == expected_rows

    # the embedding: each token's row writes `one` and its own `tokens:` dimension (none where the
    # program never mentions the tokens: compiler.layout); BOS and PAD theirs; the positional
    # embedding writes `indices` and the s-ops the summary says it writes
    vocab = shown["vocab"]
    w_e = weights["embed.W_E"]
    one_hot = any(str(label).startswith("tokens:") for label in labels)
    for token_id, token in enumerate(vocab["tokens"]):
        on = {labels[d] for d in np.flatnonzero(w_e[token_id])}
        assert on == {"one", *([f"tokens:{token}"] if one_hot else [])}, (token, on)
    assert {labels[d] for d in np.flatnonzero(w_e[vocab["bos_id"]])} == {"one", "bos"}
    assert {labels[d] for d in np.flatnonzero(w_e[vocab["pad_id"]])} == {"pad"}
    embedded = {op["name"] for op in shown["embedding"]}
    positional = set() if w_pos is None else writes(w_pos, labels)
    assert embedded <= positional <= embedded | {"indices"}, (embedded, positional)
    assert [row[2] for row in rows if row[0] == "-"] == [op["name"] for op in shown["embedding"]]

    # the output: W_U reads the output's dimensions, column j its j-th value
    output = shown["output"]
    w_u = weights["unembed.W_U"]
    assert writes(w_u.T, labels) == {variable(output["name"])} or output["name"] not in labels
    if output["encoding"] == "categorical":
        for j, value in enumerate(output["values"]):
            (dim,) = np.flatnonzero(w_u[:, j])
            assert labels[dim] == f"{variable(labels[dim])}:{value}", (j, value, labels[dim])


def _table_rows(text: str) -> list[tuple[str, ...]]:
    """The `layer  block  name  operation` table's rows, split at the header's column starts."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("layer  block"))
    header = lines[at]
    starts = [header.index(word) for word in ("block", "name", "operation")]
    rows = []
    for line in lines[at + 1 :]:
        if not line:
            break
        cuts = [0, *starts, len(line)]
        rows.append(tuple(line[a:b].strip() for a, b in zip(cuts, cuts[1:])))
    return rows


CAUSAL = ("dyck1", "frac_prevs")  # the library programs that read no later position


def compile_program(program: str, path: Path, causal: bool = False) -> Path:
    source = ROOT / "programs" / f"{program}.rasp"
    interp = load_program(source)
    name = interp.last_assigned
    model = compiler.compile_sop(
        interp.get(name),
        list(PROGRAMS[program][0]),
        5,
        name=name,
        source=Source(str(source), source.read_text()),
        causal=causal,
    )
    model.save(path)
    return path


@pytest.mark.parametrize(
    ("program", "causal"),
    [(p, False) for p in sorted(PROGRAMS)] + [(p, True) for p in CAUSAL],
)
def test_show_says_what_the_weights_do(
    program: str, causal: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check_summary(compile_program(program, tmp_path / "m.safetensors", causal), capsys)


def test_a_summary_repeating_a_wrong_name_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check can fail: most_freq's layer 0 heads with two names swapped in the metadata."""
    from safetensors import safe_open
    from safetensors.numpy import save_file

    path = compile_program("most_freq", tmp_path / "m.safetensors")
    with safe_open(str(path), "np") as f:
        meta = json.loads(f.metadata()["rasp_forge"])
    heads = meta["layers"][0]["attn"]
    heads[0]["name"], heads[1]["name"] = heads[1]["name"], heads[0]["name"]
    save_file(load_file(str(path)), str(path), metadata={"rasp_forge": json.dumps(meta)})
    with pytest.raises(AssertionError, match="hist"):
        check_summary(path, capsys)


TRACR = {
    "library.py": {
        "length": "abc",
        "reverse": "abc",
        "hist": "abc",
        "sort_unique": "abc",
        "frac_prevs": "abx",
        "pair_balance": "()x",
        "shuffle_dyck": "()x",
        "detect_abc": "abc",
        "nary_concat": "abc",
    },
    "numbers.py": {"running_mean": "[1,2,3]", "weighted": "[1,2,3]", "count_greater": "[1,2,3]"},
}


@pytest.mark.parametrize(
    ("module", "name"), [(module, name) for module, names in TRACR.items() for name in names]
)
def test_show_says_what_a_tracr_models_weights_do(
    module: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = f"{ROOT / 'programs' / 'tracr' / module}:{name}"
    out = tmp_path / "m.safetensors"
    vocab = TRACR[module][name]
    code, _, err = run(
        capsys, "compile", program, "--vocab", vocab, "--max-len", "5", "-o", str(out), "-q"
    )
    assert code == 0, err
    check_summary(out, capsys)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_draw_labels_what_the_weights_do(
    program: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`rasp draw`'s panels: one per head that writes anything, titled with its layer, head and
    the variables it writes; one residual snapshot per layer; the residual labels of `show`."""
    import transformer
    from rasp.tools.draw import trace_model

    path = compile_program(program, tmp_path / "m.safetensors")
    weights = load_file(str(path))
    code, out, _ = run(capsys, "show", str(path), "--json")
    labels = []
    for entry in json.loads(out)["residual"]:
        start, stop = entry["dims"]
        values = entry["values"] or [None] * (stop - start)
        labels += [entry["name"] if v is None else f"{entry['name']}:{v}" for v in values]
    facts = layer_facts(weights, labels)
    vocab = PROGRAMS[program][0]
    trace = trace_model(transformer.load(path), list((vocab * 5)[:5]))
    assert trace.labels == tuple(labels)
    assert [title for title, _ in trace.residuals] == ["embedding"] + [
        f"after layer {layer}" for layer in range(len(facts))
    ]
    drawn = {(head.layer, head.head): head.name for head in trace.heads}
    assert set(drawn) == {(layer, h) for layer, f in enumerate(facts) for h in f.heads}
    for (layer, h), name in drawn.items():
        assert {variable(n) for n in name.split(", ")} == facts[layer].heads[h], (layer, h, name)


def test_an_output_that_is_always_none_is_labelled_none() -> None:
    """`rasp run --model` labels a tracr output that is always None `(none)`; `rasp show` said
    `(categorical, strings)`, the file's type (the format has no type for None)."""
    from rasp.tools.inspect import output_type_text

    always_none = {"encoding": "categorical", "type": "strings", "values": [None]}
    assert output_type_text(always_none) == "none"
    assert output_type_text({**always_none, "values": [None, "a"]}) == "strings"

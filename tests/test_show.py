"""`rasp show` and the model-file reader: summary text (golden), JSON, and bad files refused as
`rasp run --model` refuses them."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import save_file

from rasp.tools.inspect import _token_text, format_summary, group_residual, summarize, summary_json
from rasp.tools.model_file import ModelFileError, expected_shapes, read_model_file

FAKE_SHA256 = hashlib.sha256(b"frac = 1;\n").hexdigest()
FAKE_META: dict[str, Any] = {
    "format": "rasp-forge-model",
    "format_version": 1,
    "compiler_version": "0.1.0",
    "config": {
        "n_layers": 1,
        "d_model": 8,
        "n_heads": 1,
        "d_head": 2,
        "d_mlp": 3,
        "n_ctx": 4,
        "d_vocab": 4,
        "d_vocab_out": 1,
        "act_fn": "relu",
        "normalization_type": None,
        "attention_dir": "bidirectional",
    },
    "max_len": 3,
    "vocab": {"tokens": ["a", "b"], "bos_id": 2, "pad_id": 3},
    "output": {"name": "frac", "encoding": "numerical", "type": "floats"},
    "residual": [
        "one",
        "bos",
        "tokens:a",
        "tokens:b",
        "indices:0",
        "indices:1",
        "indices:2",
        "frac",
    ],
    "layers": [
        {
            "attn": [
                {"head": 0, "name": "frac", "op": 'numerical aggregate(select(...), tokens == "a")'}
            ],
            "mlp": [],
        }
    ],
    "program": {"file": "frac.rasp", "source": "frac = 1;\n", "sha256": FAKE_SHA256},
}


def fake_tensors(meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """Deterministic weights of the right shapes; every third entry is zero."""
    tensors = {}
    for name, shape in expected_shapes(meta["config"]).items():
        values = np.arange(int(np.prod(shape)), dtype=np.float32) % 3
        tensors[name] = values.reshape(shape)
    return tensors


def write_fake_model(
    path: Path, meta: dict[str, Any] | None = None, tensors: dict[str, np.ndarray] | None = None
) -> Path:
    meta = FAKE_META if meta is None else meta
    save_file(
        fake_tensors(meta) if tensors is None else tensors,
        str(path),
        metadata={"rasp_forge": json.dumps(meta)},
    )
    return path


GOLDEN_FAKE = """\
model:       MODEL (format 1, compiler 0.1.0)
program:     frac.rasp
sha256:      8f644df5d4927c8130a23a382878154777c112a127262688e74ba521d64c67ba
output:      frac (numerical, floats)
vocab:       a b  (bos id 2, pad id 3)
max length:  3
shape:       1 layer, d_model 8, n_ctx 4, bidirectional; heads 1x2, d_mlp 3
heads used:  1 (per layer)
parameters:  210 total, 134 non-zero (63.8%)

layer  block   name  operation
0      head 0  frac  numerical aggregate(select(...), tokens == "a")

certificate: none (compiled before certificates existed)

residual stream (8 dims, and the sublayers that write them):
     0  one            embedding, layer 0 head 0, layer 0 mlp
     1  bos            embedding, layer 0 head 0, layer 0 mlp
     2  tokens: a b    embedding, layer 0 head 0, layer 0 mlp
     4  indices: 0..2  embedding, layer 0 head 0, layer 0 mlp
     7  frac           embedding, layer 0 head 0, layer 0 mlp"""


def test_summary_text_is_golden(tmp_path: Path) -> None:
    path = write_fake_model(tmp_path / "m.safetensors")
    text = format_summary(summarize(read_model_file(path)))
    assert text.replace(str(path), "MODEL") == GOLDEN_FAKE


@pytest.mark.parametrize(
    ("key", "version", "text"),
    [
        ("denominators", 4, "decoded as k / d_i at position i, d_i up to"),
        ("length_denominators", 5, "decoded as k / d_n at length n, d_n up to"),
        ("end_denominators", 5, "decoded as k / d_j at j = n - 1 - i from the end, d_j up to"),
    ],
)
def test_summary_names_an_output_grid(tmp_path: Path, key: str, version: int, text: str) -> None:
    max_len = FAKE_META["max_len"]
    summary = _output_summary(tmp_path, version, **{key: list(range(1, max_len + 1))})
    assert f"output:      frac (numerical, floats), {text} {max_len}\n" in summary


def _output_summary(tmp_path: Path, version: int, **fields: object) -> str:
    """`rasp show`'s summary of the fake model with these `output` fields."""
    output = dict(FAKE_META["output"], **fields)
    meta = dict(FAKE_META, format_version=version, output=output)
    path = write_fake_model(tmp_path / "output.safetensors", meta)
    return format_summary(summarize(read_model_file(path)))


def test_summary_names_the_int_positions_of_a_grid(tmp_path: Path) -> None:
    max_len = FAKE_META["max_len"]
    grid = list(range(1, max_len + 1))
    summary = _output_summary(tmp_path, 6, length_denominators=grid, int_positions=[0])
    assert f"d_n up to {max_len}, ints at position 0\n" in summary


def test_summary_counts_the_typed_cells_of_whole_numbers(tmp_path: Path) -> None:
    max_len = FAKE_META["max_len"]
    grid = list(range(1, max_len + 1))
    types = ["i" + "f" * (n - 1) for n in range(1, max_len + 1)]
    summary = _output_summary(tmp_path, 7, length_denominators=grid, whole_types=types)
    floats = max_len * (max_len - 1) // 2
    assert f"typed per length and position ({max_len} ints, {floats} floats, 0 either)" in summary


def test_summary_json(tmp_path: Path) -> None:
    path = write_fake_model(tmp_path / "m.safetensors")
    data = summary_json(summarize(read_model_file(path)))
    json.dumps(data)  # serialisable
    assert data["parameters"] == {"total": 210, "nonzero": 134}
    assert "source" not in data["program"] and data["program"]["sha256"] == FAKE_SHA256
    assert data["residual"][2] == {
        "name": "tokens",
        "dims": [2, 4],
        "encoding": "categorical",
        "values": ["a", "b"],
        "quoted": False,
        "typed_values": None,  # the fake records no residual_values
        # the fake's weights are dense: every block writes and reads every dim
        "written_by": ["embedding", "layer 0 head 0", "layer 0 mlp"],
        "read_by": ["layer 0 head 0 (q, k, v)", "layer 0 mlp", "unembed"],
    }
    assert data["residual"][-1]["encoding"] == "numerical"


def test_summary_json_says_which_groups_write_their_strings_as_json(tmp_path: Path) -> None:
    # the texts alone ('"1"', '1') did not say that the first is the string 1 written as JSON
    meta = copy.deepcopy(FAKE_META)
    meta["residual"] = [*meta["residual"][:2], "tokens:1", 'tokens:"1"', *meta["residual"][4:]]
    path = write_fake_model(tmp_path / "m.safetensors", meta=meta)
    tokens = summary_json(summarize(read_model_file(path)))["residual"][2]
    assert tokens["values"] == ["1", '"1"'] and tokens["quoted"] is True
    # and, where the file records them, the values themselves: the int 1 and the string "1"
    meta["residual_values"] = [None] * len(meta["residual"])
    meta["residual_values"][2:4] = [[1], ["1"]]
    path = write_fake_model(tmp_path / "typed.safetensors", meta=meta)
    tokens = summary_json(summarize(read_model_file(path)))["residual"][2]
    assert tokens["typed_values"] == [1, "1"]


@pytest.mark.parametrize("recorded", [None, "absent"])
def test_summary_json_of_a_model_without_a_program(tmp_path: Path, recorded: Any) -> None:
    # null where the file records none, as docs/inspect.md says (it printed {})
    meta = {k: v for k, v in FAKE_META.items() if k != "program"}
    if recorded is None:
        meta["program"] = None
    path = write_fake_model(tmp_path / "m.safetensors", meta)
    assert summary_json(summarize(read_model_file(path)))["program"] is None


def test_group_residual_keeps_separate_runs() -> None:
    groups = group_residual(["x:1", "x:2", "y", "x:3"])
    assert [(g.name, g.start, g.stop, g.values) for g in groups] == [
        ("x", 0, 2, ("1", "2")),
        ("y", 2, 3, None),
        ("x", 3, 4, ("3",)),
    ]
    assert group_residual(["i:0", "i:1", "i:2", "i:5", "i:x"])[0].describe() == "i: 0..2 5 x"


def test_only_values_written_as_ints_join_a_run() -> None:
    # tokens "05" "06" "07" (and the Arabic-Indic digits ٥ ٦ ٧) read as the ints 5..7: the
    # vocabulary line showed `05 06 07`, the residual `tokens: 5..7`
    (padded,) = group_residual(["tokens:05", "tokens:06", "tokens:07"])
    assert padded.describe() == "tokens: 05 06 07"
    (arabic,) = group_residual(["tokens:\u0665", "tokens:\u0666", "tokens:\u0667"])
    assert arabic.describe() == "tokens: \u0665 \u0666 \u0667"
    (mixed,) = group_residual(["i:-1", "i:0", "i:1", "i:+2", "i:3"])
    assert mixed.describe() == "i: -1..1 +2 3"


def test_a_long_value_list_is_elided_with_its_count() -> None:
    # A one-hot of a mean can hold thousands of values; its line lists a few and counts them all.
    labels = [f"v:{k / 7}" for k in range(100)]
    (group,) = group_residual(labels)
    text = group.describe()
    shown = text.split(": ", 1)[1].split(" ")
    assert shown[:8] == [label.split(":")[1] for label in labels[:8]]
    assert shown[8] == "..." and shown[9:12] == [label.split(":")[1] for label in labels[-3:]]
    assert text.endswith("(100 values; --json lists them all)")
    # Runs of integers count as one part each, so an index range is never elided.
    (indices,) = group_residual([f"i:{k}" for k in range(1000)])
    assert indices.describe() == "i: 0..999"
    (twelve,) = group_residual([f"t:{k * 2}" for k in range(12)])
    assert twelve.describe() == "t: " + " ".join(str(k * 2) for k in range(12))


def test_residual_values_are_quoted_as_the_vocabulary_line_quotes_tokens() -> None:
    # The vocab line writes a token that needs quoting as JSON ("x y"); the residual wrote the
    # same token with Python's quotes (' ') or bare (x y, read as two values).
    (group,) = group_residual(["tokens: ", "tokens:a", "tokens:x y", 'tokens:say "hi"', "tokens:"])
    assert group.describe() == 'tokens: " " a "x y" "say \\"hi\\"" ""'
    assert _token_text(" ") == '" "' and _token_text("x y") == '"x y"'


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = write_fake_model(tmp_path / "good.safetensors")
    data = good.read_bytes()
    out: dict[str, tuple[Path, str]] = {}
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) - 40])
    out["truncated"] = (truncated, "truncated file")
    text = tmp_path / "text.safetensors"
    text.write_text("this is not a model\n")
    out["text"] = (text, "not a safetensors file")
    newer = dict(FAKE_META, format_version=99)
    out["newer"] = (write_fake_model(tmp_path / "newer.safetensors", newer), "format version 99")
    tensors = fake_tensors(FAKE_META)
    del tensors["blocks.0.mlp.W_out"]
    out["missing"] = (
        write_fake_model(tmp_path / "missing.safetensors", tensors=tensors),
        "missing tensor(s) 'blocks.0.mlp.W_out'",
    )
    tensors = fake_tensors(FAKE_META)
    tensors["unembed.W_U"] = np.zeros((8, 5), dtype=np.float32)
    out["shape"] = (
        write_fake_model(tmp_path / "shape.safetensors", tensors=tensors),
        "tensor 'unembed.W_U' has shape [8, 5]",
    )
    no_meta = tmp_path / "nometa.safetensors"
    save_file(fake_tensors(FAKE_META), str(no_meta))
    out["no metadata"] = (no_meta, "without the 'rasp_forge' metadata entry")
    bad_json = tmp_path / "badjson.safetensors"
    save_file(fake_tensors(FAKE_META), str(bad_json), metadata={"rasp_forge": "{not json"})
    out["bad json"] = (bad_json, "not valid JSON")
    out["absent"] = (tmp_path / "absent.safetensors", "no such file")
    # What `rasp show` used to accept while `run` refused it (issue 11).
    out["max_len text"] = (
        write_fake_model(tmp_path / "ten.safetensors", dict(FAKE_META, max_len="ten")),
        "'max_len' must be an integer, got \"ten\"",
    )
    out["max_len too long"] = (
        write_fake_model(tmp_path / "long.safetensors", dict(FAKE_META, max_len=1000)),
        "'max_len' is 1000 but 'config.n_ctx' is 4",
    )
    tensors = fake_tensors(FAKE_META)
    tensors["embed.W_E"][0, 0] = np.nan
    out["nan"] = (
        write_fake_model(tmp_path / "nan.safetensors", tensors=tensors),
        "tensor 'embed.W_E' contains NaN or infinite values",
    )
    folder = tmp_path / "folder.safetensors"
    folder.mkdir()
    out["directory"] = (folder, "is a directory, not a model file")
    return out


def test_bad_files_give_one_clear_error(tmp_path: Path) -> None:
    for case, (path, expected) in _bad_files(tmp_path).items():
        with pytest.raises(ModelFileError) as info:
            read_model_file(path)
        rendered = info.value.render()
        assert expected in rendered, case
        assert rendered.startswith(f"error: {path}: ") and "\n" not in rendered, case


def test_show_refuses_what_run_refuses_with_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rasp.tools.cli import main

    good = write_fake_model(tmp_path / "good.safetensors")
    assert main(["show", str(good)]) == 0
    capsys.readouterr()
    for case, (path, _) in _bad_files(tmp_path).items():
        shown = main(["show", str(path)]), capsys.readouterr()
        ran = main(["run", "--model", str(path), "--input", "ab"]), capsys.readouterr()
        assert (shown[0], shown[1].out) == (1, ""), case
        assert (ran[0], ran[1].out) == (1, ""), case
        assert shown[1].err.splitlines()[0] == ran[1].err.splitlines()[0], case


REVERSE = """\
opp = length - indices - 1;
flip = select(indices, opp, ==);
reverse = aggregate(flip, tokens);
"""


def test_show_of_a_compiled_program_is_golden(tmp_path: Path, golden: Any) -> None:
    """`rasp show` of the compiler's reverse at N=5 (rewrite with --update-golden if the compiler changes)."""
    pytest.importorskip("compiler")
    import compiler
    from rasp.errors import Source
    from rasp.interpreter import load_file

    program = tmp_path / "reverse.rasp"
    program.write_text(REVERSE)
    sop = load_file(program).get("reverse")
    model = compiler.compile_sop(
        sop, list("abc"), 5, name="reverse", source=Source("reverse.rasp", REVERSE)
    )
    path = tmp_path / "reverse.safetensors"
    model.save(path)
    summary = summarize(read_model_file(path))
    assert summary.total_params == model.param_count()
    golden(
        Path(__file__).parent / "golden" / "show" / "reverse.txt",
        format_summary(summary).replace(str(path), "reverse.safetensors") + "\n",
    )


def test_tables_line_up_wide_names_by_columns() -> None:
    # a Python program's names may be CJK (`.named("逆順")`, 2 characters, 4 columns): padded by
    # characters, the columns after them drifted 2 to the right
    from rasp.text_width import display_width
    from rasp.tools.certificate_text import table_lines
    from rasp.tools.inspect import Operation, operations_table

    ops = (
        Operation(0, "head 0", "逆順", "aggregate(...)"),
        Operation(0, "mlp", "length", "length"),
    )
    table = operations_table(ops)
    assert table[1:] == ["0      head 0  逆順    aggregate(...)", "0      mlp     length  length"]
    check = {"sublayer": "layer 0 attn", "kind": "softmax", "where": "q 0", "margin": 23}
    check |= {"bound": 0, "ratio": 9}
    checks = [
        {**check, "block": "逆順"},
        {**check, "block": "length"},
        {**check, "block": "長" * 20},
    ]
    lines = table_lines({"ok": True, "checks": checks})[3:]
    assert len({display_width(line[: line.index("softmax")]) for line in lines}) == 1, lines
    assert "長" * 10 + "…   softmax" in lines[2]  # cut to 22 columns (21 here), not 22 characters


def test_counts_of_one_are_singular() -> None:
    from rasp.tools.inspect import heads_text

    layer = {"n_heads": 1, "d_head": 1, "d_mlp": 0}
    one = {"n_layers": 1, "n_heads": 1, "d_head": 1, "d_mlp": 0, "layers": [layer]}
    assert heads_text(one) == "1 layer, 1 head"
    none = {**one, "layers": [{**layer, "n_heads": 0}]}
    assert heads_text(none) == "1 layer, 0 heads"
    two = {**one, "n_layers": 2, "layers": [layer, layer]}
    assert heads_text(two) == "2 layers, 2 heads"


def test_control_characters_in_a_files_strings_are_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crafted file's strings reach the terminal as text: an escape sequence, a newline (a fake
    line of the table) or a right-to-left override are written as their escapes; --json, whose
    strings JSON escapes itself, gives them as they are."""
    from rasp.tools.cli import main

    layers = [
        {"attn": [{"head": 0, "name": "frac", "op": "mean\u202e(x)"}], "mlp": []},
    ]
    program = dict(FAKE_META["program"], file="evil.rasp\nsha256:      0000\x1b[2J")
    meta = dict(FAKE_META, layers=layers, program=program)
    path = write_fake_model(tmp_path / "m.safetensors", meta)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\u202e\r")
    assert not any(line.startswith("sha256:      0000") for line in out.splitlines())
    assert "program:     evil.rasp\\nsha256:      0000\\x1b[2J\n" in out
    assert "mean\\u202e(x)" in out
    assert main(["show", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    strings: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, str):
            strings.append(value)
        for child in value.values() if isinstance(value, dict) else []:
            collect(child)
        for child in value if isinstance(value, list) else []:
            collect(child)

    collect(data)
    assert "mean\u202e(x)" in strings


def test_a_token_with_a_control_character_is_quoted_once_not_escaped_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the escape was made first and then quoted as a backslash: ESC read `"a\\x1b"`, the same
    # as the four characters a \ x 1 b would; now JSON's escapes, inside the quotes
    from rasp.tools.cli import main

    program = tmp_path / "id.rasp"
    program.write_text("y = tokens;\n")
    model = tmp_path / "id.safetensors"
    vocab = json.dumps(["a\x1b", "b\\", "x\u202e", "a\\x1b"])
    assert (
        main(["compile", str(program), "--vocab", vocab, "--max-len", "2", "-o", str(model)]) == 0
    )
    capsys.readouterr()
    assert main(["show", str(model)]) == 0
    out = capsys.readouterr().out
    assert all(line.isprintable() for line in out.splitlines())
    shown = '"a\\u001b" "b\\\\" "x\\u202e" "a\\\\x1b"'
    assert f"vocab:       {shown}  (bos id 4, pad id 5)" in out
    assert f"tokens: {shown}" in out


def test_the_certificate_is_shown_as_the_files_claim(tmp_path: Path) -> None:
    # anyone editing the file can rewrite its certificate: the text says who re-checks it, with
    # the path as a shell would take it
    meta = dict(FAKE_META, certificate={"ok": True, "checks": []})
    path = write_fake_model(tmp_path / "my model.safetensors", meta)
    lines = format_summary(summarize(read_model_file(path))).splitlines()
    at = lines.index("certificate: no decision to check")
    assert lines[at + 1] == (
        f"  as the file records it; `rasp verify --model '{path}'` re-checks it from the weights"
    )
    # a file without a certificate claims nothing
    plain = format_summary(summarize(read_model_file(write_fake_model(tmp_path / "p.safetensors"))))
    assert "as the file records it" not in plain


def test_an_output_no_row_computes_is_said_to_be_read_by_the_unembedding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `depth = opens - closes` is a free view of two counts: the table listed opens and closes
    # and nothing for depth, leaving a reader to look for it
    from rasp.tools.repl import ReplSession
    from tests.cli_helpers import run

    program = tmp_path / "depth.rasp"
    program.write_text(
        'opens = selector_width(select(indices, indices, <=) and select(tokens, "(", ==));\n'
        'closes = selector_width(select(indices, indices, <=) and select(tokens, ")", ==));\n'
        "depth = opens - closes;\n"
    )
    model = tmp_path / "depth.safetensors"
    argv = ["compile", str(program), "--vocab", "()", "--max-len", "4", "-o", str(model), "-q"]
    assert run(capsys, *argv)[0] == 0
    note = (
        "no row computes the output 'depth': the unembedding reads it off the residual stream "
        "directly (a free view, docs/compiler.md)"
    )
    code, text, _ = run(capsys, "show", str(model))
    assert code == 0 and f"\n\n{note}\n\ncertificate:" in text
    session = ReplSession()
    session.feed(f'load "{program.with_suffix("")}";')
    session.feed(":compile depth () 4")
    assert session.feed(":layers").splitlines()[-1] == note
    # an output a row computes has none
    program.write_text(program.read_text() + "out2 = depth + 1 > 1;\n")
    argv[-2] = str(tmp_path / "deeper.safetensors")
    assert run(capsys, *argv)[0] == 0
    code, text, _ = run(capsys, "show", argv[-2])
    assert code == 0 and "no row computes" not in text and "mlp     out2" in text

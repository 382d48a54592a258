"""The reach is no longer the certificate's trust root: `rasp verify --model` rebuilds it from the
program the file records, with the file's compile options, and requires it to equal the file's.

Before, a file whose reach and weights were edited together re-checked as proved while it computed
something other than its program: `reverse` with the output reading's labels swapped (and the
output entry and its digest to match), or with one copy's columns swapped in the reach and in
W_O, decoded `abc` as `cab`, certified.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import transformer
from compiler.reach import decoding_digest
from rasp.tools.cli import main
from rasp.tools.rebuild import rebuild_reach
from transformer.digests import EditedWeightsWarning

ROOT = Path(__file__).resolve().parents[1]
REVERSE = str(ROOT / "programs" / "reverse.rasp")


# exactly i + 1 keys at position i: a masked head ("<="), unless compiled without head masks
PREFIX = 'res = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'


def _compiled(tmp_path: Path, *options: str, program: str = REVERSE) -> Path:
    path = tmp_path / "model.safetensors"
    args = ["compile", program, "--vocab", "abc", "--max-len", "6", "-o", str(path), *options]
    assert main(args) == 0
    return path


def _prefix(tmp_path: Path) -> str:
    program = tmp_path / "prefix.rasp"
    program.write_text(PREFIX)
    return str(program)


def _rewrite(path: Path, edit_meta: Any, edit_weights: Any = None) -> Path:
    """A copy of the model file at `path` with its metadata (and weights) edited."""
    with safe_open(str(path), "np") as f:
        meta = json.loads(f.metadata()["rasp_forge"])
    weights = load_file(str(path))
    edit_meta(meta)
    program = meta.get("program")
    if isinstance(program, dict) and isinstance(program.get("source"), str):  # kept consistent
        program["sha256"] = hashlib.sha256(program["source"].encode("utf-8")).hexdigest()
    if edit_weights is not None:
        edit_weights(weights)
    edited = path.with_name("edited.safetensors")
    save_file(weights, str(edited), metadata={"rasp_forge": json.dumps(meta)})
    return edited


def _verify(
    path: Path, capsys: pytest.CaptureFixture[str], *options: str, program: str | None = REVERSE
) -> dict[str, Any]:
    """`rasp verify PROGRAM --model path --json`'s certificate entry (few inputs: only it
    matters); `program` None: the program the file records."""
    capsys.readouterr()
    named = [] if program is None else [program]
    args = ["verify", *named, "--model", str(path), "--exhaustive-len", "1", "--samples", "0"]
    main([*args, "--json", *options])
    report = json.loads(capsys.readouterr().out)
    certificate: dict[str, Any] = report["certificate"]
    return certificate


def _reading(meta: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in meta["reach"]["readings"] if r["name"] == name)


def _swap_labels(meta: dict[str, Any]) -> None:
    """The output `reverse` decodes column 0 as "b" and column 1 as "a": the reach's labels of
    the output reading, the output's values and the reach's digest of them all agree."""
    meta["output"]["values"] = ["b", "a", "c"]
    _reading(meta, "reverse")["labels"] = ["'b'", "'a'", "'c'"]
    meta["reach"]["decoding"] = decoding_digest(meta["output"])


def _copy_head(meta: dict[str, Any]) -> dict[str, Any]:
    return next(h for h in meta["reach"]["heads"] if h["name"] == "reverse")


def _swap_columns(meta: dict[str, Any]) -> None:
    """The reach says the `reverse` head copies token "a" into the column of "b" and back."""
    value = _copy_head(meta)["values"][0]
    value["columns"] = [1.0, 0.0, 2.0]
    value["default"] = [0.0, 1.0, 0.0]


def _swap_w_o(meta: dict[str, Any]) -> Any:
    """The weights to match `_swap_columns`: W_O and b_O write "a"'s column to "b"'s."""
    head = _copy_head(meta)
    a, b = head["values"][0]["out"][:2]
    layer = head["layer"]

    def edit(weights: dict[str, np.ndarray]) -> None:
        w_o, b_o = weights[f"blocks.{layer}.attn.W_O"], weights[f"blocks.{layer}.attn.b_O"]
        w_o[..., [a, b]] = w_o[..., [b, a]]
        b_o[[a, b]] = b_o[[b, a]]

    return edit


def _meta(path: Path) -> dict[str, Any]:
    with safe_open(str(path), "np") as f:
        meta: dict[str, Any] = json.loads(f.metadata()["rasp_forge"])
    return meta


@pytest.mark.parametrize("attack", ["labels", "columns"])
@pytest.mark.parametrize("named", [True, False])
def test_a_reach_edited_with_the_weights_is_not_proved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], attack: str, named: bool
) -> None:
    path = _compiled(tmp_path)
    if attack == "labels":
        edited = _rewrite(path, _swap_labels)
        where = "reading `reverse`, labels[0]"
    else:
        edited = _rewrite(path, _swap_columns, _swap_w_o(_meta(path)))
        where = "layer 1 head 0 (`reverse`), values[0].columns[0]"
    # the edited file computes something other than reverse: abc -> cab
    with pytest.warns(EditedWeightsWarning):
        assert transformer.load(str(edited)).run(["abc"]) == [["c", "a", "b"]]
    # rebuilt from the program given, or from the one the file records
    certificate = _verify(edited, capsys, program=REVERSE if named else None)
    assert certificate["ok"] is False, certificate
    line = certificate["lines"][0]
    assert line.startswith("  certificate: NOT proved: ") and where in line, line
    what = REVERSE if named else "the recorded program"
    assert f"the file's reach differs from the one {what} compiles to" in line
    # the weights prove the file's own reach: said, but not what decides
    assert "against the file's own reach: every decision proved" in certificate["lines"][1]


def test_an_unedited_file_rebuilds_to_its_own_reach(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _compiled(tmp_path)
    for program, what in ((None, "the recorded program"), (REVERSE, REVERSE)):
        certificate = _verify(path, capsys, program=program)
        assert certificate["ok"] is True
        assert f"  reach:       rebuilt from {what}: equal to the file's" in certificate["lines"]


def test_an_operations_words_are_not_what_the_proof_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an earlier compiler worded hist_bos's width "selector_width(_and_1)": the same model
    def reworded(meta: dict[str, Any]) -> None:
        meta["reach"]["heads"][0]["op"] = "said otherwise"
        assert meta["reach"]["mlps"]  # an MLP's words too
        for mlp in meta["reach"]["mlps"]:
            mlp["op"] = "said otherwise"

    edited = _rewrite(_compiled(tmp_path), reworded)
    certificate = _verify(edited, capsys)
    assert certificate["ok"] is True, certificate
    (line,) = [line for line in certificate["lines"] if line.startswith("  reach:")]
    assert "equal to the file's but for the words that describe an operation" in line
    assert 'op is "said otherwise" in the file' in line
    # an `op` key is no field of a reading: added to one, it is a difference
    edited = _rewrite(
        _compiled(tmp_path), lambda meta: _reading(meta, "reverse").update(op="said otherwise")
    )
    certificate = _verify(edited, capsys)
    assert certificate["ok"] is False, certificate
    assert (
        'reading `reverse`, op is "said otherwise" in the file, absent rebuilt'
        in certificate["lines"][0]
    )
    # a difference elsewhere still decides, words or not
    edited = _rewrite(_compiled(tmp_path), lambda meta: (reworded(meta), _swap_labels(meta)))
    assert _verify(edited, capsys)["ok"] is False


def test_options_are_recorded_and_rebuilt_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without head masks the model differs (its head scores indices); rebuilt with masks, its
    reach would not be the file's."""
    prefix = _prefix(tmp_path)
    path = _compiled(tmp_path, "--no-head-masks", "--max-params", "5000000", program=prefix)
    options = _meta(path)["program"]["options"]
    assert options == {"causal": False, "head_masks": False, "max_params": 5000000}
    assert _verify(path, capsys, program=prefix)["ok"] is True
    path = _compiled(tmp_path, "--causal", program=prefix)
    assert _meta(path)["program"]["options"]["causal"] is True
    assert _verify(path, capsys, program=prefix)["ok"] is True


def test_a_file_written_before_options_were_recorded_rebuilds_from_its_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def drop(meta: dict[str, Any]) -> None:
        del meta["program"]["options"]

    prefix = _prefix(tmp_path)
    masked = _rewrite(_compiled(tmp_path, program=prefix), drop)
    assert _verify(masked, capsys, program=prefix)["ok"] is True
    unmasked = _rewrite(_compiled(tmp_path, "--no-head-masks", program=prefix), drop)
    assert _verify(unmasked, capsys, program=prefix)["ok"] is True
    causal = _rewrite(_compiled(tmp_path, "--causal", program=prefix), drop)
    assert _verify(causal, capsys, program=prefix)["ok"] is True


def test_a_changed_option_is_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def masks_on(meta: dict[str, Any]) -> None:
        meta["program"]["options"]["head_masks"] = True

    prefix = _prefix(tmp_path)
    edited = _rewrite(_compiled(tmp_path, "--no-head-masks", program=prefix), masks_on)
    certificate = _verify(edited, capsys, program=prefix)
    assert certificate["ok"] is False and "differs" in certificate["lines"][0], certificate


def test_a_file_without_a_rasp_source_is_rebuilt_from_the_program_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _compiled(tmp_path)
    for edit in (lambda m: m.pop("program"), lambda m: m["program"].update(file="p.py:reverse")):
        certificate = _verify(_rewrite(path, edit), capsys)
        assert certificate["ok"] is True
        assert f"  reach:       rebuilt from {REVERSE}: equal to the file's" in certificate["lines"]


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda m: m.pop("program"), "not rebuilt: the file records no program source"),
        (
            lambda m: m["program"].update(file="prog.py:reverse"),
            "not rebuilt: the file records the Python program prog.py:reverse, which",
        ),
    ],
)
def test_without_a_program_to_rebuild_from_the_reach_is_trusted_and_said(
    tmp_path: Path, edit: Any, says: str
) -> None:
    meta = _meta(_compiled(tmp_path))
    edit(meta)
    rebuild = rebuild_reach(meta, "m.safetensors")
    assert rebuild.ok is None and says in rebuild.line
    assert rebuild.line.endswith("; the proof trusts the file's reach")


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        # a source that no longer parses, or no longer defines the output
        (
            lambda m: m["program"].update(source="reverse = ;"),
            "(recorded in m.safetensors):1:11: error: expected a value after '='",
        ),
        (
            lambda m: m["program"].update(source="x = tokens;"),
            "m.safetensors computes `reverse`, which",
        ),
        # a program the compiler refuses under the recorded parameter limit
        (
            lambda m: m["program"]["options"].update(max_params=10),
            "error: the model would have 987 parameters",
        ),
        # malformed options, and a reach that is not one
        (lambda m: m["program"]["options"].update(causal="yes"), 'options.causal is "yes"'),
        (lambda m: m["program"]["options"].update(max_params=True), "options.max_params is true"),
        (lambda m: m["program"].update(options=[1]), "the file's program.options is [1]"),
        (lambda m: m.update(reach=[]), "the reach's whole record is [] in the file"),
        (lambda m: m["reach"].pop("decoding"), "the reach's decoding is absent in the file"),
        (
            lambda m: m["reach"]["readings"].pop(),
            "the reach's readings has 6 entries in the file, 7",
        ),
        (lambda m: m.update(max_len=5), "reading `length.frac`, numbers[0] is"),
        (lambda m: m.pop("max_len"), "does not say which output, vocabulary and max_len"),
    ],
)
def test_a_file_whose_program_does_not_rebuild_is_not_proved(
    tmp_path: Path, edit: Any, says: str
) -> None:
    meta = _meta(_compiled(tmp_path))
    edit(meta)
    rebuild = rebuild_reach(meta, "m.safetensors")
    assert rebuild.ok is False and rebuild.line.startswith("NOT proved: "), rebuild
    assert says in rebuild.line, rebuild.line


def test_no_rebuild_skips_it_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = _rewrite(_compiled(tmp_path), _swap_labels)
    certificate = _verify(edited, capsys, "--no-rebuild")
    assert certificate["ok"] is True  # the file's reach, trusted, as asked
    assert (
        "  reach:       not rebuilt: --no-rebuild was given; the proof trusts the file's reach"
        in (certificate["lines"])
    )
    assert main(["verify", REVERSE, "--vocab", "abc", "--max-len", "2", "--no-rebuild"]) == 2
    assert "--no-rebuild applies only with --model" in capsys.readouterr().err


def test_a_python_program_given_is_the_one_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model file never runs the Python it records; given on the command line, it is run (verify
    runs it anyway) and rebuilt from."""
    target = str(ROOT / "programs" / "tracr" / "library.py") + ":reverse"
    path = _compiled(tmp_path, program=target)
    certificate = _verify(path, capsys, program=target)
    assert certificate["ok"] is True
    line = f"  reach:       rebuilt from {target.split(':')[0]}: equal to the file's"
    assert line in certificate["lines"], certificate
    edited = _rewrite(path, _swap_labels)
    assert _verify(edited, capsys, program=target)["ok"] is False


def test_json_says_how_the_reach_was_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON reader can tell a rebuilt reach from a trusted one without parsing the lines: the
    certificate's `reach` is `{ok, line}` (ok null: not rebuilt, the file's reach trusted)."""
    path = _compiled(tmp_path)
    equal = _verify(path, capsys)["reach"]
    assert equal == {"ok": True, "line": f"rebuilt from {REVERSE}: equal to the file's"}
    trusted = _verify(path, capsys, "--no-rebuild")["reach"]
    assert trusted["ok"] is None and trusted["line"].startswith("not rebuilt: --no-rebuild")
    differs = _verify(_rewrite(path, _swap_labels), capsys)["reach"]
    assert differs["ok"] is False and differs["line"].startswith("NOT proved: ")
    # a model verify compiles itself is checked against its own compile's reach
    capsys.readouterr()
    args = ["verify", REVERSE, "--vocab", "ab", "--max-len", "2", "--samples", "0", "--json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["certificate"]["reach"] is None


def test_a_file_verified_under_another_name_it_lacks_the_output_of_rebuilds_the_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FILE does not define the model's output (`reverse`): verified under `--name`, the reach is
    rebuilt from the recorded program, and FILE's s-op is only compared on the inputs
    (docs/inspect.md); with no recorded program, the reach is trusted, and said."""
    path = _compiled(tmp_path)
    other = tmp_path / "other.rasp"
    other.write_text(
        "flip = select(indices, length - indices - 1, ==);\nr = aggregate(flip, tokens);\n"
    )
    certificate = _verify(path, capsys, "--name", "r", program=str(other))
    assert (
        "  reach:       rebuilt from the recorded program: equal to the file's"
        in certificate["lines"]
    )


def test_without_a_recorded_program_the_s_op_named_is_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that records no program, verified against FILE under `--name` (FILE lacking the
    model's output): the reach is rebuilt from the s-op named, under the model's output name. It
    was trusted: a reach edited with the weights passed as proved."""
    path = _compiled(tmp_path)
    other = tmp_path / "other.rasp"
    other.write_text(
        "flip = select(indices, length - indices - 1, ==);\nr = aggregate(flip, tokens);\n"
    )
    bare = _rewrite(path, lambda m: m.pop("program"))
    certificate = _verify(bare, capsys, "--name", "r", program=str(other))
    assert certificate["reach"] == {
        "ok": True,
        "line": f"rebuilt from {other}: equal to the file's",
    }
    edited = _rewrite(path, lambda m: (m.pop("program"), _swap_labels(m)))
    certificate = _verify(edited, capsys, "--name", "r", program=str(other))
    assert certificate["ok"] is False and certificate["reach"]["ok"] is False, certificate


def test_a_python_function_whose_s_op_has_another_name_is_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`PROG.py:make` returns an s-op named `frac`: compiled from Python (no program recorded),
    the model computes `frac`, and the only program to rebuild it from is `make`'s."""
    import compiler
    from rasp.tools.pyprogram import python_program

    program = tmp_path / "mk.py"
    program.write_text(
        "from rasp import tracr as rasp\n"
        "def make():\n"
        "    x = rasp.numerical(rasp.Map(lambda t: 1 if t == 'a' else 0, rasp.tokens))\n"
        "    sel = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)\n"
        "    return rasp.numerical(rasp.Aggregate(sel, x, default=0)).named('frac')\n"
    )
    sop = python_program(f"{program}:make", None)[0]
    path = tmp_path / "frac.safetensors"
    compiler.compile_sop(sop, ["a", "b"], 4).save(path)
    certificate = _verify(path, capsys, program=f"{program}:make")
    rebuilt = {"ok": True, "line": f"rebuilt from {program}: equal to the file's"}
    assert certificate["reach"] == rebuilt
    # compiled from `make` (the file records that Python program), verified as `again`
    program.write_text(program.read_text() + "again = make()\n")
    path = _compiled(tmp_path, program=f"{program}:make")
    assert _verify(path, capsys, program=f"{program}:again")["reach"] == rebuilt

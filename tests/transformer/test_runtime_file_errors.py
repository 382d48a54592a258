"""Broken model files: each must give one `ModelFormatError` line that says what is wrong."""

from __future__ import annotations

import json
import pickle
import random
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import handmade_models as hm
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import transformer
from transformer import ModelFormatError
from transformer.fileformat import FORMAT_VERSION, save


def expect_format_error(path: Path, *fragments: str) -> str:
    """Both `load` and `read_metadata` refuse `path` with one line naming it and every fragment."""
    for reader in (transformer.load, transformer.read_metadata):
        with pytest.raises(ModelFormatError) as info:
            reader(path)
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(f"{path}: ")
        for fragment in fragments:
            assert fragment in message, message
        err = info.value  # no chained library exception behind it
        assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
    return message


def write_edited(path: Path, edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]) -> Path:
    """Save the previous-token model after `edit(metadata, tensors)` changed it in place."""
    made = hm.previous_token()
    edit(made.metadata, made.tensors)
    save(path, made.tensors, made.metadata)
    return path


def write_header(
    path: Path, header: dict[str, Any], data: bytes, length: int | None = None
) -> Path:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


# --- not a model at all ------------------------------------------------------------------------


def test_missing_file_and_directory(tmp_path: Path) -> None:
    expect_format_error(tmp_path / "nope.safetensors", "no such file")
    expect_format_error(tmp_path, "is a directory")


@pytest.mark.parametrize("size", [0, 3, 8, 100, 5000])
def test_random_bytes(tmp_path: Path, size: int) -> None:
    path = tmp_path / "random.safetensors"
    path.write_bytes(random.Random(size).randbytes(size))
    expect_format_error(path, "not a safetensors file")


def test_pickle_files_are_refused_without_being_unpickled(tmp_path: Path) -> None:
    plain = tmp_path / "plain.pkl"
    plain.write_bytes(pickle.dumps({"embed.W_E": [[1.0]]}))
    expect_format_error(plain, "not a safetensors file")
    zipped = tmp_path / "torch.pt"
    torch.save({"embed.W_E": torch.zeros(2, 2)}, zipped)
    expect_format_error(zipped, "not a safetensors file")


def test_text_and_json_files(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(hm.previous_token().metadata))
    expect_format_error(path, "not a safetensors file")


def test_header_that_is_not_json_or_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", 6) + b"{oops}")
    expect_format_error(path, "not valid JSON")
    write_header(path, [1, 2], b"")  # type: ignore[arg-type]
    expect_format_error(path, "not a JSON object")


def test_malformed_tensor_entry(tmp_path: Path) -> None:
    header = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}  # 2 floats need 8 bytes
    expect_format_error(
        write_header(tmp_path / "m.safetensors", header, b"\0" * 8), "malformed header", "'x'"
    )


@pytest.mark.parametrize("dtype", [["F32"], {"F32": 1}, None, 4])
def test_a_tensor_dtype_that_is_not_a_string(tmp_path: Path, dtype: object) -> None:
    # a list or an object raised TypeError: unhashable type, looking it up among the dtypes
    header = {"x": {"dtype": dtype, "shape": [1], "data_offsets": [0, 4]}}
    expect_format_error(
        write_header(tmp_path / "m.safetensors", header, b"\0" * 4), "malformed header", "'x'"
    )


def test_safetensors_without_our_metadata(tmp_path: Path) -> None:
    path = tmp_path / "plain.safetensors"
    from safetensors.numpy import save_file

    save_file({"embed.W_E": np.zeros((2, 2), dtype=np.float32)}, str(path))
    expect_format_error(path, "without the 'rasp_forge' metadata", "not a rasp-forge model")


# --- truncated --------------------------------------------------------------------------------


def test_truncated_at_many_offsets(tmp_path: Path, prev_path: Path) -> None:
    data = prev_path.read_bytes()
    header_end = 8 + int.from_bytes(data[:8], "little")
    cuts = [0, 5, 8, 9, header_end // 2, header_end - 1, header_end, header_end + 7, len(data) - 1]
    for cut in cuts:
        path = tmp_path / f"cut{cut}.safetensors"
        path.write_bytes(data[:cut])
        message = expect_format_error(path)
        expected = "not a safetensors file" if cut < 9 else "truncated file"
        assert expected in message, (cut, message)


# --- metadata ---------------------------------------------------------------------------------

METADATA_CASES: dict[str, tuple[Callable[[dict[str, Any]], None], tuple[str, ...]]] = {
    "newer_version": (
        lambda m: m.update(format_version=FORMAT_VERSION + 1),
        (f"format version {FORMAT_VERSION + 1}", f"up to {FORMAT_VERSION}", "upgrade"),
    ),
    "masks_need_version_3": (
        lambda m: m.update(format_version=2) or m["config"].update(layers=[_shape(["<="])]),
        ("'config.layers[].masks' needs 'format_version' 3",),
    ),
    "mask_unknown": (
        lambda m: m["config"].update(layers=[_shape(["<<"])]),
        ("'config.layers[0].masks' must list one of", '"<="', '["<<"]'),
    ),
    "masks_count": (
        lambda m: m["config"].update(layers=[_shape(["<", ">"])]),
        ("'config.layers[0].masks'", "per head (1)"),
    ),
    "layer_field": (
        lambda m: m["config"].update(layers=[{**_shape([]), "rotary": 1}]),
        ("'config.layers[0]' must be an object with n_heads, d_head and d_mlp",),
    ),
    "version_not_int": (
        lambda m: m.update(format_version="1"),
        ("'format_version' must be an integer",),
    ),
    "wrong_format": (lambda m: m.update(format="tracr"), ("'format' is \"tracr\"",)),
    "no_config": (lambda m: m.pop("config"), ("missing 'config'",)),
    "negative_size": (
        lambda m: m["config"].update(d_model=-1),
        ("'config.d_model' must be at least 1",),
    ),
    "bool_size": (
        lambda m: m["config"].update(n_layers=True),
        ("'config.n_layers' must be an integer",),
    ),
    "unknown_config": (lambda m: m["config"].update(rotary=True), ("unknown field(s) rotary",)),
    "gelu": (lambda m: m["config"].update(act_fn="gelu"), ("act_fn", "relu")),
    "layernorm": (lambda m: m["config"].update(normalization_type="LN"), ("normalization_type",)),
    "attention_dir": (lambda m: m["config"].update(attention_dir="sideways"), ("attention_dir",)),
    "n_ctx": (lambda m: m.update(max_len=3), ("'max_len' is 3", "n_ctx = max_len + 1")),
    "residual_length": (lambda m: m["residual"].pop(), ("'residual' must hold d_model = 16",)),
    "residual_type": (lambda m: m["residual"].__setitem__(0, 7), ("string labels",)),
    "bos_id": (lambda m: m["vocab"].update(bos_id=0), ("'vocab.bos_id' and 'vocab.pad_id'",)),
    "duplicate_token": (
        lambda m: m["vocab"]["tokens"].__setitem__(1, "a"),
        ("lists a value twice",),
    ),
    "token_not_atom": (lambda m: m["vocab"]["tokens"].__setitem__(1, [1]), ("not a token value",)),
    "values_count": (
        lambda m: m["output"]["values"].pop(),
        ("lists 3 values", "'config.d_vocab_out' is 4"),
    ),
    "encoding": (lambda m: m["output"].update(encoding="one-hot"), ("'output.encoding'",)),
    "numerical_width": (lambda m: m["output"].update(encoding="numerical"), ("d_vocab_out' = 1",)),
    "layers_count": (
        lambda m: m["layers"].append({"attn": [], "mlp": []}),
        ("'layers' describes 2",),
    ),
    "head_index": (lambda m: m["layers"][0]["attn"][0].update(head=3), ("names head 3",)),
    "sha256": (
        lambda m: m["program"].update(source="edited"),
        ("'program.sha256' does not match",),
    ),
    # optional fields the tools read: refused here, so no command accepts what another crashes on
    "certificate_text": (
        lambda m: m.update(certificate="x"),
        ("metadata field 'certificate' must be an object, got \"x\"",),
    ),
    "certificate_number": (lambda m: m.update(certificate=5), ("'certificate' must be an object",)),
    "certificate_checks": (
        lambda m: m.update(certificate={"checks": "x"}),
        ("'certificate.checks' must be a list",),
    ),
    "certificate_check_entry": (
        lambda m: m.update(certificate={"checks": [_decision(), 1]}),
        ("'certificate.checks[1]' must be an object, got 1",),
    ),
    "certificate_check_margin": (
        lambda m: m.update(certificate={"checks": [_decision(margin="big")]}),
        ("'certificate.checks[0].margin' must be a number", '"big"'),
    ),
    "certificate_check_kind": (
        lambda m: m.update(certificate={"checks": [_decision(kind=None)]}),
        ("'certificate.checks[0].kind' must be a string, got null",),
    ),
    "certificate_errors": (
        lambda m: m.update(certificate={"errors": 7}),
        ("'certificate.errors' must be a list, got 7",),
    ),
    "certificate_error_entry": (
        lambda m: m.update(certificate={"errors": [7]}),
        ("'certificate.errors' must list strings",),
    ),
    "certificate_ok": (
        lambda m: m.update(certificate={"ok": "yes"}),
        ("'certificate.ok' must be true or false",),
    ),
    "embedding": (lambda m: m.update(embedding="x"), ("'embedding' must be a list",)),
    "embedding_entry": (
        lambda m: m.update(embedding=[{"name": "i2"}]),
        ("missing 'embedding[0].op'",),
    ),
    "sums_as_means": (lambda m: m.update(sums_as_means=1), ("'sums_as_means' must be true",)),
    "votes_as_means": (lambda m: m.update(votes_as_means=1), ("'votes_as_means' must be true",)),
    # config.n_heads, d_head and d_mlp are the layers' maxima: export pads every layer to them
    "maxima_heads": (
        lambda m: m["config"].update(layers=[_shape([])], n_heads=10**12),
        ("'config.n_heads' is 1000000000000", "largest n_heads of any layer is 1", "maxima"),
    ),
    "maxima_mlp": (
        lambda m: m["config"].update(layers=[_shape([])], d_mlp=10**12),
        ("'config.d_mlp' is 1000000000000", "largest d_mlp of any layer is 1"),
    ),
    "maxima_width": (
        lambda m: m["config"].update(layers=[_shape([])], d_head=10**12),
        ("'config.d_head' is 1000000000000", "largest d_head of a layer with heads is 7"),
    ),
    "maxima_width_v1": (  # every layer has the maxima, so no head stores d_head's width
        lambda m: m["config"].update(n_heads=0, d_head=10**12),
        ("'config.d_head' is 1000000000000", "largest d_head of a layer with heads is 0"),
    ),
}


def _decision(**changes: Any) -> dict[str, Any]:
    """One entry of `certificate.checks` as the certifier writes it, with `changes`."""
    decision = {"sublayer": "layer 0 attn", "block": "prev", "op": "aggregate", "kind": "softmax"}
    decision |= {"margin": 9.0, "bound": 0.5, "ratio": 18.0, "max_bound": 0.5, "where": "q=1"}
    return decision | changes


def _shape(masks: list[str]) -> dict[str, Any]:
    """The previous-token model's one layer (format version 2's config.layers), with `masks`."""
    config = hm.previous_token().metadata["config"]
    shape = {key: config[key] for key in ("n_heads", "d_head", "d_mlp")}
    return {**shape, "masks": masks} if masks else shape


@pytest.mark.parametrize("case", sorted(METADATA_CASES))
def test_invalid_metadata(case: str, tmp_path: Path) -> None:
    edit, fragments = METADATA_CASES[case]
    path = write_edited(tmp_path / f"{case}.safetensors", lambda m, t: edit(m))
    expect_format_error(path, *fragments)


def test_a_certificate_of_the_right_shape_loads(tmp_path: Path) -> None:
    certificate = {"u": 5.96e-08, "underflow": 110.0, "ok": False, "errors": ["no reach"]}
    certificate["checks"] = [_decision(), _decision(margin="-inf", bound=0, ratio="nan")]
    path = write_edited(tmp_path / "c.safetensors", lambda m, t: m.update(certificate=certificate))
    assert transformer.read_metadata(path)["certificate"] == certificate
    assert transformer.load(path).run(["ab"]) == [hm.expected_previous_token("ab")]


def test_a_layer_without_heads_sets_no_head_width(tmp_path: Path) -> None:
    """Its own d_head stores nothing (its W_Q has 0 heads), so it cannot make config.d_head, which
    TransformerLens's layout pads the other layers' heads to, as wide as it likes."""

    def headless(m: dict[str, Any], t: dict[str, np.ndarray]) -> None:
        _headless_layer(m, t, width=10**12)
        m["config"].update(d_head=10**12)

    path = write_edited(tmp_path / "h.safetensors", headless)
    expect_format_error(path, "'config.d_head' is 1000000000000", "of a layer with heads is 0")
    # as the compiler writes it: width 0, and the maxima 1 where no layer has any
    fine = write_edited(tmp_path / "ok.safetensors", lambda m, t: _headless_layer(m, t, width=0))
    assert transformer.load(fine).meta.config.d_head == 1


def _headless_layer(m: dict[str, Any], t: dict[str, np.ndarray], width: int) -> None:
    """The previous-token model's layer without its head, its head width `width` (format 2)."""
    d_model, d_mlp = m["config"]["d_model"], m["config"]["d_mlp"]
    m["config"].update(layers=[{"n_heads": 0, "d_head": width, "d_mlp": d_mlp}], n_heads=1)
    m["config"].update(d_head=1)
    m["layers"][0]["attn"] = []
    for name in ("W_Q", "W_K", "W_V"):
        t[f"blocks.0.attn.{name}"] = np.zeros((0, d_model, width), dtype=np.float32)
    for name in ("b_Q", "b_K", "b_V"):
        t[f"blocks.0.attn.{name}"] = np.zeros((0, width), dtype=np.float32)
    t["blocks.0.attn.W_O"] = np.zeros((0, width, d_model), dtype=np.float32)


def test_metadata_that_is_not_json(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    path = tmp_path / "badjson.safetensors"
    save_file(
        hm.previous_token().tensors,
        str(path),
        metadata={"rasp_forge": '{"format": "rasp-forge-model",'},
    )
    expect_format_error(path, "'rasp_forge' metadata is not valid JSON")
    save_file(hm.previous_token().tensors, str(path), metadata={"rasp_forge": "[1, 2]"})
    expect_format_error(path, "not a JSON object")


# --- tensors ----------------------------------------------------------------------------------


def test_missing_tensor(tmp_path: Path) -> None:
    path = write_edited(tmp_path / "m.safetensors", lambda m, t: t.pop("blocks.0.attn.W_K"))
    expect_format_error(path, "missing tensor(s) 'blocks.0.attn.W_K'")


def test_unexpected_tensor(tmp_path: Path) -> None:
    path = write_edited(
        tmp_path / "m.safetensors", lambda m, t: t.update({"ln_final.w": np.ones(16)})
    )
    expect_format_error(path, "unexpected tensor(s) 'ln_final.w'")


def test_misshaped_tensor(tmp_path: Path) -> None:
    path = write_edited(
        tmp_path / "m.safetensors", lambda m, t: t.update({"unembed.W_U": np.zeros((16, 3))})
    )
    expect_format_error(path, "'unembed.W_U' has shape [16, 3]", "needs [16, 4]")


def test_config_disagreeing_with_every_tensor(tmp_path: Path) -> None:
    path = write_edited(tmp_path / "m.safetensors", lambda m, t: m["config"].update(n_heads=2))
    expect_format_error(path, "'blocks.0.attn.W_Q' has shape [1, 16, 7]", "needs [2, 16, 7]")


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int64, np.bool_])
def test_tensor_of_another_dtype(dtype: type, tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    made = hm.previous_token()
    tensors = dict(made.tensors, **{"unembed.b_U": made.tensors["unembed.b_U"].astype(dtype)})
    path = tmp_path / "dtype.safetensors"
    save_file(tensors, str(path), metadata={"rasp_forge": json.dumps(made.metadata)})
    expect_format_error(path, "'unembed.b_U' has dtype", "the format stores F32")


def test_non_finite_weights(tmp_path: Path) -> None:
    path = write_edited(
        tmp_path / "m.safetensors", lambda m, t: t["embed.W_E"].__setitem__((0, 0), np.nan)
    )
    with pytest.raises(ModelFormatError, match=r"'embed\.W_E' contains NaN or infinite values"):
        transformer.load(path)


def test_overlapping_tensor_data_is_caught_by_safetensors(tmp_path: Path, prev_path: Path) -> None:
    data = prev_path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + length])
    first, second = [
        name for name in header if name != "__metadata__" and header[name]["shape"] == [16]
    ][:2]
    header[second]["data_offsets"] = header[first]["data_offsets"]
    path = write_header(tmp_path / "overlap.safetensors", header, data[8 + length :])
    with pytest.raises(ModelFormatError, match="not a valid safetensors file"):
        transformer.load(path)


# --- fuzzing ----------------------------------------------------------------------------------


@settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    edits=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)), min_size=1, max_size=4)
)
def test_corrupted_bytes_load_or_fail_cleanly(
    edits: list[tuple[int, int]], prev_path: Path, tmp_path: Path
) -> None:
    data = bytearray(prev_path.read_bytes())
    header_end = 8 + int.from_bytes(data[:8], "little")
    for where, value in edits:
        data[where % header_end] = value  # the framing and JSON are where parsing can go wrong
    path = tmp_path / "fuzz.safetensors"
    path.write_bytes(bytes(data))
    try:
        transformer.load(path)
    except ModelFormatError as err:
        assert "\n" not in str(err)


def test_non_json_constants_and_deep_nesting_in_metadata(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    made = hm.previous_token()
    path = tmp_path / "nan.safetensors"
    text = json.dumps(made.metadata).replace(
        '"values": ["a", "b", "c", "-"]', '"values": [NaN, 1, 2, 3]'
    )
    save_file(made.tensors, str(path), metadata={"rasp_forge": text})
    expect_format_error(path, "'rasp_forge' metadata is not valid JSON")
    save_file(made.tensors, str(path), metadata={"rasp_forge": "[" * 100_000 + "]" * 100_000})
    expect_format_error(path, "'rasp_forge' metadata is not valid JSON")


def test_deeply_nested_safetensors_header(tmp_path: Path) -> None:
    path = tmp_path / "deep.safetensors"
    text = b"[" * 200_000 + b"]" * 200_000
    path.write_bytes(struct.pack("<Q", len(text)) + text)
    expect_format_error(path, "not a safetensors file")


# --- a crafted file's strings in a message --------------------------------------------------------

EVIL = "x\x1b[2J\u202e\x85\u2028\x7f\ny"  # clear screen, reorder, C1 and line separators, newline


@pytest.mark.parametrize(
    "edit",
    [
        lambda m, t: m["output"].update(encoding=EVIL),  # quoted by the field check (json_text)
        lambda m, t: t.update({EVIL: np.zeros(1, dtype=np.float32)}),  # an unexpected tensor
        lambda m, t: m.update(format_version=EVIL),
    ],
)
def test_a_files_own_strings_are_escaped_in_its_error(
    tmp_path: Path, edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]
) -> None:
    # JSON escapes only C0 controls: \u202e, \x85, \u2028 and \x7f reached the terminal raw, and
    # a tensor name was quoted as it is, \x1b and newline too
    message = expect_format_error(write_edited(tmp_path / "m.safetensors", edit))
    assert message.isprintable(), repr(message)


def test_save_writes_through_a_symlink(tmp_path: Path) -> None:
    """safetensors renames its new file into place, which replaced a symlink with a plain file."""
    target = tmp_path / "real.safetensors"
    target.write_text("old")
    link = tmp_path / "link.safetensors"
    link.symlink_to(target)
    hm.previous_token().save(link)
    assert link.is_symlink()
    assert transformer.load(target).run(["abc"]) == [hm.expected_previous_token("abc")]

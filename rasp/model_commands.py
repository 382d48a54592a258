"""The model commands of the CLI: compile, run --model, verify, show, draw, export, and the text and
JSON renderings of verify's report.

`rasp.cli` parses the arguments (token lists already parsed) and calls one `cmd_*(args) -> exit code`
here. Each handler imports the compiler or torch only if it needs them (`show` and `export` never load
torch). User mistakes raise `RaspError`s, which the CLI renders on stderr with exit 1; a bad model
file, a bad model input or a missing CUDA device becomes one such error line too. A usage error found
after argparse prints `rasp COMMAND: error: ...` and returns 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rasp.errors import ErrorKind, RaspError, Source

if TYPE_CHECKING:
    from rasp.verify import VerifyReport


def _usage_error(command: str, message: str) -> int:
    print(f"usage: rasp {command} ...\nrasp {command}: error: {message}", file=sys.stderr)
    return 2


@contextmanager
def runtime_errors(what: str) -> Iterator[None]:
    """The runtime's own error types (it cannot import `rasp`) as one-line `RaspError`s."""
    import transformer

    try:
        yield
    except transformer.ModelFormatError as err:
        raise RaspError(str(err), kind=ErrorKind.IO) from None
    except transformer.ModelInputError as err:
        raise RaspError(f"cannot run {what} on this input: {err}", kind=ErrorKind.IO) from None
    except transformer.ModelOutputError as err:
        raise RaspError(f"{what}: {err} (its weights are broken; recompile the program)",
                        kind=ErrorKind.IO) from None


def _check_device(device: str) -> None:
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise RaspError("--device cuda: no CUDA device is available here", hint="use --device cpu",
                        kind=ErrorKind.IO)


def _load_model(path: str | Path, device: str) -> Any:
    """Check the file (one clear line if it is bad), then load it with the torch runtime."""
    import transformer
    from rasp.inspect import read_model_file

    read_model_file(path)
    _check_device(device)
    with runtime_errors(str(path)):
        return transformer.load(str(path), device)


def _program(file: str, name: str | None) -> tuple[Any, str, Source]:
    """The s-op to compile from FILE: (sop, its name, the source)."""
    from rasp.cli import select_output
    from rasp.interpreter import load_file

    interp = load_file(file)
    sop = select_output(interp, name, file)
    return sop, name or interp.last_assigned, Source(file, Path(file).read_text(encoding="utf-8"))


def _compile(file: str, name: str | None, vocab: Sequence[Any], max_len: int, causal: bool = False) -> Any:
    return compile_sop(*_program(file, name), vocab, max_len, causal)


def compile_sop(sop: Any, name: str, source: Source, vocab: Sequence[Any], max_len: int,
                 causal: bool = False) -> Any:
    import compiler

    return compiler.compile_sop(sop, list(vocab), max_len, name=name, source=source, causal=causal)


def _check_writable(path: str | Path | None) -> None:
    """Refuse an output path up front, before minutes of compiling or drawing."""
    if path is None:
        return
    out = Path(path)
    if not out.parent.is_dir() or out.is_dir():
        problem = "it is a directory" if out.is_dir() else f"directory {out.parent} does not exist"
        raise RaspError(f"cannot write {out}: {problem}", kind=ErrorKind.IO)


# ------------------------------------------------------------------------------------------------
# compile, run --model, show, export


def cmd_compile(args: argparse.Namespace) -> int:
    from rasp.inspect import read_model_file, summarize

    _check_writable(args.output)
    model = _compile(args.file, args.name, args.vocab, args.max_len, args.causal)
    try:
        model.save(args.output)
    except OSError as exc:
        raise RaspError(f"cannot write {args.output}: {exc.strerror or exc}", kind=ErrorKind.IO) from None
    summary = summarize(read_model_file(args.output))
    cfg = summary.meta["config"]
    print(f"wrote {args.output}: {cfg['n_layers']} layers, {cfg['n_heads']} heads/layer, "
          f"d_model {cfg['d_model']}, {summary.total_params:,} parameters "
          f"({summary.nonzero_params:,} non-zero)")
    return 0


def cmd_run_model(args: argparse.Namespace) -> int:
    from rasp.display import seq_json, seq_text
    from rasp.sops import SeqType, SeqValue

    if args.name is not None:
        return _usage_error("run", "--name applies only to FILE.rasp; a model computes one output")
    model = _load_model(args.model, args.device)
    with runtime_errors(args.model):
        (values,) = model.run([args.input])
    if args.json:
        print(seq_json(values))
    else:
        print(seq_text(SeqValue(tuple(values), SeqType(model.meta.raw["output"]["type"]))))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from rasp.inspect import format_summary, read_model_file, summarize, summary_json

    summary = summarize(read_model_file(args.model))
    print(json.dumps(summary_json(summary), indent=2) if args.json else format_summary(summary))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from rasp.export import export_transformer_lens

    if args.to != "transformer-lens":
        return _usage_error("export", f"--to {args.to}: only transformer-lens is supported")
    for path in export_transformer_lens(args.model, args.output):
        print(f"wrote {path}")
    return 0


# ------------------------------------------------------------------------------------------------
# verify


def cmd_verify(args: argparse.Namespace) -> int:
    from rasp import verify as v

    plan = v.plan_inputs(args.vocab, args.max_len, args.exhaustive_len, args.samples, args.seed)
    if plan.total == 0:
        return _usage_error("verify", "--exhaustive-len 0 with --samples 0 leaves no input to check")
    sop, name, source = _program(args.file, args.name)
    if args.device == "cpu":
        import torch

        # Thousands of tiny batches: intra-op threads only add synchronisation (measured 4-15x slower
        # with 2 threads on a busy 2-core machine).
        torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        if args.model is not None:
            model = _load_model(args.model, args.device)
            _warn_if_other_source(args.model, model.meta.raw, source)
            known = {json.dumps(t) for t in model.meta.raw["vocab"]["tokens"]}
            unknown = [t for t in args.vocab if json.dumps(t) not in known]
            if unknown:
                raise RaspError(f"--vocab token {json.dumps(unknown[0])} is not in the vocabulary of "
                                f"{args.model} ({json.dumps(model.meta.raw['vocab']['tokens'])})",
                                hint="verify over the model's vocabulary, or recompile", kind=ErrorKind.IO)
            if args.max_len > model.max_len:
                raise RaspError(f"--max-len {args.max_len} is longer than {args.model} accepts "
                                f"({model.max_len})", kind=ErrorKind.IO)
        else:
            path = Path(tmp) / "verify.safetensors"
            compiled = compile_sop(sop, name, source, args.vocab, args.max_len)
            compiled.save(path)
            model = _load_model(path, args.device)
        nodes = nodes_by_residual_name(sop)
        progress = _progress_line if sys.stderr.isatty() and plan.total > 2000 else None
        with runtime_errors(args.model or "the compiled model"):
            report = v.verify(sop, model, plan, progress=progress, nodes=nodes)
    if progress is not None:
        print("\r\033[K", end="", file=sys.stderr)
    what = f"{args.file} `{name}`"
    if args.json:
        print(json.dumps(report_json(report), default=str))
    elif report.ok:
        print(format_success(report, what))
    else:
        print(format_failure(report, what), file=sys.stderr)
    return 0 if report.ok else 1


def nodes_by_residual_name(sop: Any) -> dict[str, Any]:
    """Each s-op node under the name the compiler gives it in the residual labels.

    The compiler's IR has one node per `rasp.sops.walk` node, in walk order, and names the unnamed ones
    `_<op>_<n>`; pairing the two lists recovers the node behind every label, generated names included.
    """
    from rasp import verify as v
    from rasp.sops import walk

    try:
        from compiler.graph import build_graph

        graph = build_graph(sop)
    except (ImportError, RaspError):
        return v.nodes_by_name(sop)
    walked = list(walk(sop))
    if len(walked) != len(graph.nodes):
        return v.nodes_by_name(sop)
    return {**v.nodes_by_name(sop), **{ir.name: node for ir, node in zip(graph.nodes, walked)}}


def _progress_line(done: int, total: int) -> None:
    print(f"\rverifying: {done:,}/{total:,} inputs", end="", file=sys.stderr, flush=True)


def _warn_if_other_source(model_path: str, meta: dict[str, Any], source: Source) -> None:
    recorded = (meta.get("program") or {}).get("sha256")
    actual = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
    if recorded != actual:
        print(f"warning: {model_path} was not compiled from this version of {source.name} "
              f"(source sha256 {str(recorded)[:12]}... in the model, {actual[:12]}... now); "
              "verifying anyway", file=sys.stderr)


# ------------------------------------------------------------------------------------------------
# draw


def cmd_draw(args: argparse.Namespace) -> int:
    from rasp.draw import draw_model_file

    target = Path(args.target)
    _check_writable(args.output)
    _check_writable(args.dot)
    if target.suffix == ".safetensors":
        given = [opt for opt, value in (("--vocab", args.vocab), ("--max-len", args.max_len),
                                        ("--name", args.name)) if value is not None]
        if given:
            return _usage_error("draw", f"{', '.join(given)} applies only to a .rasp program; a model "
                                "file already fixes its vocabulary, length and output")
        lines = draw_model_file(target, args.input, args.output, args.dot)
    elif target.suffix == ".rasp":
        vocab = args.vocab if args.vocab is not None else list(dict.fromkeys(args.input))
        max_len = args.max_len if args.max_len is not None else len(args.input)
        if len(args.input) > max_len:
            return _usage_error("draw", f"the input has {len(args.input)} tokens, more than --max-len {max_len}")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"{target.stem}.safetensors"
            _compile(str(target), args.name, vocab, max_len).save(path)
            lines = draw_model_file(path, args.input, args.output, args.dot)
    else:
        return _usage_error("draw", f"TARGET must be a .rasp program or a .safetensors model, got {target}")
    for line in lines:
        print(line)
    return 0


# ------------------------------------------------------------------------------------------------
# Rendering verify's report


def show_tokens(tokens: Sequence[Any]) -> str:
    """`"abc"` when every token is one character, else the JSON list."""
    if tokens and all(isinstance(t, str) and len(t) == 1 for t in tokens):
        return '"' + "".join(tokens) + '"'
    return json.dumps(list(tokens))


def show_values(values: Sequence[Any]) -> str:
    return "[" + ", ".join(_value_text(v) for v in values) + "]"


def format_success(report: VerifyReport, what: str) -> str:
    """What was covered, for a passing report (stdout)."""
    plan = report.plan
    lines = [f"verified {what}: model == interpreter on {report.checked:,} inputs"]
    if plan.exhaustive_len:
        lines.append(f"  exhaustive: every input of length 1..{plan.exhaustive_len} over "
                     f"{len(plan.vocab)} tokens ({plan.exhaustive_count:,} inputs)")
    if plan.sampled_lengths is not None:
        lo, hi = plan.sampled_lengths
        lines.append(f"  sampled:    {plan.sample_count:,} random inputs of length {lo}..{hi} (seed {plan.seed})")
    elif plan.exhaustive_len >= plan.max_len:
        lines.append(f"  complete:   every input up to the maximum length {plan.max_len} was checked")
    lines.append(f"  skipped:    {_skipped_text(report)}")
    return "\n".join(lines)


def format_failure(report: VerifyReport, what: str) -> str:
    """The first failing input and the first divergence, for a failing report (stderr)."""
    first = report.first_failure
    if first is None:  # a passing report
        return format_success(report, what)
    lines = [
        (f"error: verification failed for {what}: model and interpreter disagree on "
         f"{report.failures:,} of {report.checked:,} inputs"),
        (f"  first failing input: {show_tokens(first.tokens)} (length {len(first.tokens)}), "
         f"first wrong position {first.position}"),
        f"    interpreter: {show_values(first.interpreter)}",
        f"    model:       {show_values(first.model)}",
    ]
    div = report.divergence
    if div is None:
        lines.append("  the residual stream could not be decoded to locate the divergence")
    elif div.sublayer == "unembed":
        lines.append(f"  every materialised variable agrees; the output `{div.variable}` goes wrong in the "
                     f"unembedding (position {div.position})")
    else:
        lines += [
            f"  first divergence: variable `{div.variable}`"
            + (f" = {div.operation}" if div.operation and div.operation != div.variable else "")
            + f", {div.where}, position {div.position}",
            f"    interpreter: {_value_text(div.interpreter)}",
            f"    model:       {_value_text(div.model) if div.model is not None else '(no value: every dim < 0.5)'}",
        ]
    lines.append(f"  skipped:    {_skipped_text(report)}")
    return "\n".join(lines)


def report_json(report: VerifyReport) -> dict[str, Any]:
    """The `--json` report: one JSON object (NaN and infinities become strings)."""
    return _finite(_report_dict(report))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _report_dict(report: VerifyReport) -> dict[str, Any]:
    plan, first, div = report.plan, report.first_failure, report.divergence
    return {
        "ok": report.ok,
        "checked": report.checked,
        "failures": report.failures,
        "skipped": report.skipped,
        "skipped_example": None if report.skipped_example is None else
        {"input": list(report.skipped_example[0]), "error": report.skipped_example[1]},
        "exhaustive": {"max_len": plan.exhaustive_len, "inputs": plan.exhaustive_count},
        "sampled": {"inputs": plan.sample_count, "lengths": plan.sampled_lengths and list(plan.sampled_lengths),
                    "seed": plan.seed},
        "lengths": sorted(report.lengths),
        "vocab": list(plan.vocab),
        "max_len": plan.max_len,
        "first_failure": None if first is None else {
            "input": list(first.tokens), "position": first.position,
            "model": list(first.model), "interpreter": list(first.interpreter)},
        "divergence": None if div is None else {
            "variable": div.variable, "operation": div.operation, "layer": div.layer,
            "sublayer": div.sublayer, "position": div.position, "model": div.model,
            "interpreter": div.interpreter},
    }


def _skipped_text(report: VerifyReport) -> str:
    if not report.skipped:
        return "none (the interpreter ran on every input)"
    tokens, message = report.skipped_example or ((), "")
    return (f"{report.skipped:,} inputs where the interpreter fails, e.g. {show_tokens(tokens)}: {message}")


def _value_text(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)

"""The model commands of the CLI: compile, run --model, verify, show, draw, export (verify's report
is rendered by `rasp.tools.verify_text`).

`rasp.tools.cli` parses the arguments (token lists already parsed) and calls one `cmd_*(args) -> exit code`
here. Each handler imports the compiler or torch only if it needs them (`show` and `export` never load
torch). User mistakes raise `RaspError`s, which the CLI renders on stderr with exit 1; a bad model
file or a missing CUDA device becomes one such error line too. A usage error found after argparse,
an input the model cannot take among them (`argument --input: ...`), prints `rasp COMMAND: error:
...` and returns 2.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from rasp.errors import ErrorKind, RaspError, Source
from rasp.tools.console import Console
from rasp.tools.pyprogram import is_python_target, python_program


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
        from rasp.tools.inspect import ModelInputRefused

        raise ModelInputRefused(what, str(err)) from None
    except transformer.ModelOutputError as err:
        raise RaspError(
            f"{what}: {err} (its weights are broken; recompile the program)", kind=ErrorKind.IO
        ) from None


def _check_device(device: str) -> None:
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise RaspError(
            "--device cuda: no CUDA device is available here",
            hint="use --device cpu",
            kind=ErrorKind.IO,
        )


def _load_model(path: str | Path, device: str, command: str) -> Any:
    """Check the file (one clear line if it is bad), then load it with the torch runtime."""
    import transformer
    from rasp.tools.inspect import read_model_file

    read_model_file(path, command)
    _check_device(device)
    with runtime_errors(str(path)):
        return transformer.load(str(path), device)


def _program(
    file: str,
    name: str | None,
    console: Console | None = None,
    model_output: tuple[str, str] | None = None,
) -> tuple[Any, str, Source]:
    """The s-op to compile from FILE (`-`: standard input): (sop, its name, the source).
    `model_output`: (model file, its output's name), the s-op to take when `name` is None."""
    if is_python_target(file):
        return python_program(file, name)
    from rasp.tools.arguments import load_program, select_output

    interp, source = load_program(file, console)
    if name is None and model_output is not None:
        model, name = model_output
        if name not in set(interp.names()):
            raise RaspError(
                f"{model} computes `{name}`, which {source.name} does not define",
                hint=f"verify {model} against the program it was compiled from, or pass --name "
                "with the s-op of this program that computes it",
                kind=ErrorKind.NAME,
            )
    sop = select_output(interp, name, source.name)
    name = name or interp.last_assigned
    assigned = interp.assigned_at(name)
    if sop.span is None and assigned is not None:
        # A built-in (`z = length;`) has no place in the program: a copy located where the program
        # names it, so that a refusal of it (`--causal`: length reads every position) points there.
        sop = copy.copy(sop)
        sop.span = assigned
    return sop, name, source


def _compile(
    file: str,
    name: str | None,
    vocab: Sequence[Any],
    max_len: int,
    causal: bool = False,
    console: Console | None = None,
    max_params: int | None = None,
    head_masks: bool = True,
) -> tuple[Any, list[str]]:
    """The compiled model, and the warnings printed (the program fails on some inputs)."""
    console = console or Console()
    sop, name, source = _program(file, name, console)
    console.step(f"compiling `{name}` for {len(vocab)} tokens, max_len {max_len}")
    compiled = compile_sop(
        sop, name, source, vocab, max_len, causal, console, max_params, head_masks
    )
    console.step("compiled and certified")
    from rasp.tools.probe import probe_failures

    failures = probe_failures(sop, vocab, max_len)
    warnings = [] if failures is None else [failures.warning()]
    for warning in warnings:
        console.warn(warning)
    return compiled, warnings


def compile_sop(
    sop: Any,
    name: str,
    source: Source,
    vocab: Sequence[Any],
    max_len: int,
    causal: bool = False,
    console: Console | None = None,
    max_params: int | None = None,
    head_masks: bool = True,
) -> Any:
    import compiler
    from compiler.budget import DEFAULT_MAX_PARAMS

    # Refuses (CompileError, located) any model the certifier cannot prove, and any model
    # predicted to exceed max_params before building it.
    with (console or Console(quiet=True)).progress() as progress:
        return compiler.compile_sop(
            sop,
            list(vocab),
            max_len,
            name=name,
            source=source,
            causal=causal,
            head_masks=head_masks,
            progress=progress,
            max_params=max_params or DEFAULT_MAX_PARAMS,
        )


def in_memory_model(compiled: Any, device: str = "cpu") -> Any:
    """The torch runtime's model of a freshly compiled one, without writing a file (the same checks
    as loading its file)."""
    import transformer

    _check_device(device)
    with runtime_errors("the compiled model"):
        return transformer.from_tensors(compiled.weights, compiled.metadata, device)


def _check_writable(path: str | Path | None) -> None:
    """Refuse an output path up front, before minutes of compiling or drawing."""
    if path is None:
        return
    from rasp.tools.output_files import check_writable

    check_writable(path)


# ------------------------------------------------------------------------------------------------
# compile, run --model, show, export


def cmd_compile(args: argparse.Namespace) -> int:
    from rasp.tools.certificate_text import summary_line
    from rasp.tools.inspect import heads_text, layer_shapes, read_model_file, summarize
    from rasp.tools.output_files import same_file, user_mode, writing

    if args.file != "-" and not is_python_target(args.file) and same_file(args.file, args.output):
        return _usage_error(
            "compile", f"-o {args.output} is the program itself; write the model to another file"
        )
    console = Console.from_args(args)
    _check_writable(args.output)
    model, warnings = _compile(
        args.file,
        args.name,
        args.vocab,
        args.max_len,
        args.causal,
        console,
        args.max_params,
        args.head_masks,
    )
    with writing(args.output), user_mode(args.output):
        model.save(args.output)
    console.step(f"wrote {args.output}")
    summary = summarize(read_model_file(args.output))
    cfg = summary.meta["config"]
    certificate = model.metadata.get("certificate")
    if args.json:
        console.result_json(
            {
                "output": str(args.output),
                "n_layers": cfg["n_layers"],
                "n_heads": cfg["n_heads"],  # the config's: the most heads of any layer
                "heads": sum(n for n, _, _ in layer_shapes(cfg)),  # in all, as the text says
                "d_model": cfg["d_model"],
                "parameters": summary.total_params,
                "nonzero": summary.nonzero_params,
                "certificate": summary_line(certificate),
                "warnings": warnings,
            }
        )
        return 0
    console.note(
        f"wrote {args.output}: {heads_text(cfg)}, "
        f"d_model {cfg['d_model']}, {summary.total_params:,} parameters "
        f"({summary.nonzero_params:,} non-zero)"
    )
    console.note(summary_line(certificate))
    return 0


def cmd_run_model(args: argparse.Namespace) -> int:
    import transformer
    from rasp.display import seq_json, seq_text
    from rasp.seqvalues import make_seq
    from rasp.sops import SeqValue
    from rasp.tools.inspect import ModelInputRefused
    from rasp.tracr.lower import unbox

    if args.name is not None:
        return _usage_error("run", "--name applies only to FILE.rasp; a model computes one output")
    console = Console.from_args(args)
    model = _load_model(args.model, args.device, "run --model")
    console.step(f"loaded {args.model}")
    try:
        model.encode([args.input])
    except transformer.ModelInputError as err:
        refused = ModelInputRefused(args.model, str(err), tuple(model.meta.raw["vocab"]["tokens"]))
        return _usage_error("run", refused.as_argument_error(args.input))
    with runtime_errors(args.model):
        (values,) = model.run([args.input])
    if args.json:
        console.result(seq_json([unbox(v) for v in values]))
    else:
        # labelled by the values, as the interpreter labels them: a default 0 among strings gives
        # `[0]*3 (ints)` where every position takes it (the file's type says strings)
        seq = make_seq(values, loose=True)
        # tracr's tuples (n-ary maps) are string tokens in the model: shown as tuples, as `rasp run`
        # of the program shows them
        console.result(seq_text(SeqValue(tuple(unbox(v) for v in seq.values), seq.type)))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from rasp.tools.inspect import (
        format_summary,
        read_model_file,
        summarize,
        summary_json,
    )

    summary = summarize(read_model_file(args.model, "show"))
    console = Console.from_args(args)
    console.result(
        json.dumps(summary_json(summary), indent=2) if args.json else format_summary(summary)
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from rasp.tools.export import export_transformer_lens

    if args.to != "transformer-lens":
        return _usage_error("export", f"--to {args.to}: only transformer-lens is supported")
    console = Console.from_args(args)
    written = export_transformer_lens(args.model, args.output)
    if args.json:
        console.result_json({"files": [str(path) for path in written]})
    for path in written:
        console.note(f"wrote {path}")
    return 0


# ------------------------------------------------------------------------------------------------
# verify


def cmd_verify(args: argparse.Namespace) -> int:
    from rasp.tools import verify as v
    from rasp.tools.verify_orders import check_model
    from rasp.tools.verify_text import format_failure, format_success, report_json

    console = Console.from_args(args)
    model = None
    if args.model is None:
        missing = [
            o for o, v in (("--vocab", args.vocab), ("--max-len", args.max_len)) if v is None
        ]
        if missing:
            return _usage_error(
                "verify",
                f"the following arguments are required: {', '.join(missing)} (or --model "
                "M.safetensors, whose own they default to)",
            )
    else:
        if args.max_params is not None:
            return _usage_error(
                "verify", "--max-params applies only without --model (verify compiles the program)"
            )
        # The file's header alone (no torch, milliseconds) already fixes the vocabulary and the
        # length: refuse an argument the model cannot take, or a plan too large, before loading.
        header = _header_vocab_and_len(args.model)
        if header is not None:
            refused = _refuse_beyond_model(args, args.model, *header)
            if refused is not None:
                return refused
            tokens, max_len = header
            early = v.plan_inputs(
                args.vocab if args.vocab is not None else tokens,
                args.max_len if args.max_len is not None else max_len,
                args.exhaustive_len,
                args.samples,
            )
            if early.total == 0:
                return _usage_error("verify", NO_INPUT)
            v.check_plan_size(early)
        model = _load_model(args.model, args.device, "verify --model")
        refused = _refuse_beyond_model(
            args, args.model, model.meta.raw["vocab"]["tokens"], model.max_len
        )
        if refused is not None:
            return refused
        # what the model was compiled for, unless narrowed
        if args.vocab is None:
            args.vocab = list(model.meta.raw["vocab"]["tokens"])
        if args.max_len is None:
            args.max_len = model.max_len
    plan = v.plan_inputs(args.vocab, args.max_len, args.exhaustive_len, args.samples, args.seed)
    if plan.total == 0:
        return _usage_error("verify", NO_INPUT)
    v.check_plan_size(plan)  # before compiling: a K too large would run for years, silently
    if model is None and args.device != "cpu":
        _check_device(args.device)  # before compiling, which may take minutes
    # with --model, the s-op the model computes unless --name says otherwise (PROG.py:NAME names it)
    output = None if model is None else str(model.meta.output.name)
    sop, name, source = _program(
        args.file, args.name, console, None if output is None else (args.model, output)
    )
    if output is not None and name != output:  # --name, or PROG.py:NAME
        console.warn(
            f"{args.model} computes `{output}`; verifying `{name}` of {source.name} against it"
        )
    from compiler.resolve import resolve

    # A tracr program's predicates and means resolved for the vocabulary: the values its model
    # encodes (a numerical mean of one True is 1). That graph equals the program wherever the
    # program gives a value, but may give one where it fails (a mean over None): the program as
    # written guards, so such an input is skipped and reported, never counted as checked.
    written, sop = sop, resolve(sop, list(args.vocab), args.max_len)
    guard = None if sop is written else written
    if args.sampling == "guided":
        plan = replace(plan, program=sop)
    if args.device == "cpu":
        import torch

        # Thousands of tiny batches: intra-op threads only add synchronisation (measured 4-15x slower
        # with 2 threads on a busy 2-core machine).
        torch.set_num_threads(1)
    if model is not None:
        _warn_if_other_source(args.model, model.meta.raw, source, console)
    else:
        console.step(f"compiling `{name}` for {len(args.vocab)} tokens, max_len {args.max_len}")
        compiled = compile_sop(
            sop, name, source, args.vocab, args.max_len, max_params=args.max_params
        )
        model = in_memory_model(compiled, args.device)
    if args.model is not None:  # the graph compiled for the model's own vocabulary and length
        nodes = nodes_by_residual_name(
            sop, model.meta.raw["vocab"]["tokens"], model.max_len, model.meta.raw
        )
    else:
        nodes = nodes_by_residual_name(sop, args.vocab, args.max_len, model.meta.raw)
    with console.progress() as bars:
        if plan.program is not None and plan.sample_count:
            console.step(f"guiding {plan.sample_count:,} samples")
            plan.draw(
                None if bars is None else lambda done, total: bars("guiding samples", done, total)
            )
    console.step(f"checking {plan.total:,} inputs")
    with console.progress() as bars, runtime_errors(args.model or "the compiled model"):
        progress = None if bars is None else lambda done, total: bars("verifying", done, total)
        report = check_model(sop, model, plan, progress=progress, nodes=nodes, guard=guard)
    console.step("checked")
    what = f"{source.name if args.file == '-' else args.file} `{name}`"
    if args.json:
        console.result_json(report_json(report))
    elif report.ok:
        console.note(format_success(report, what))
    else:
        print(format_failure(report, what), file=sys.stderr)
    return 0 if report.ok else 1


NO_INPUT = "--exhaustive-len 0 with --samples 0 leaves no input to check"


def _header_vocab_and_len(path: str) -> tuple[list[Any], int] | None:
    """The vocabulary tokens and maximum length a model file records, read from its header
    without torch; None where the header does not hold them plainly (loading the file then says
    what is wrong with it)."""
    from rasp.tools.inspect import peek_metadata

    meta = peek_metadata(path)
    vocab = meta.get("vocab") if meta is not None else None
    tokens = vocab.get("tokens") if isinstance(vocab, dict) else None
    max_len = meta.get("max_len") if meta is not None else None
    if not isinstance(tokens, list) or not tokens:
        return None
    if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 1:
        return None
    return tokens, max_len


def _refuse_beyond_model(
    args: argparse.Namespace, path: str, tokens: Sequence[Any], max_len: int
) -> int | None:
    """A usage error (exit 2) for a --vocab token or a --max-len the model cannot take."""
    from rasp.tools.arguments import token_key, token_text

    if args.vocab is not None:
        known = {token_key(t) for t in tokens}
        unknown = [t for t in args.vocab if token_key(t) not in known]
        if unknown:
            return _usage_error(
                "verify",
                f"argument --vocab: the token {token_text(unknown[0])} is "
                f"not in the vocabulary of {path} "
                f"({json.dumps(list(tokens), ensure_ascii=False)}); "
                "verify over the model's vocabulary, or recompile",
            )
    if args.max_len is not None and args.max_len > max_len:
        return _usage_error(
            "verify",
            f"argument --max-len {args.max_len}: longer than {path} accepts ({max_len})",
        )
    return None


def nodes_by_residual_name(
    sop: Any,
    vocab: Sequence[Any] | None = None,
    max_len: int | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Each s-op node under the name the compiler gives it in the residual labels.

    The compiler's IR has one node per `rasp.sops.walk` node, in walk order, and names the unnamed ones
    `_<op>_<n>`; pairing the two lists recovers the node behind every label, generated names included.
    Given the model's `vocab` and `max_len`, the nodes are those of the graph the compiler compiled
    (`compiler.forms.prepare`: a counted mean is a count there, and the generated names that follow
    it are numbered differently); each computes what the program's node computes. The model's
    metadata `meta` says whether it was built with sums of whole numbers kept as means.
    """
    from rasp.sops import walk
    from rasp.tools import verify as v

    try:
        from compiler.forms import prepare
        from compiler.graph import build_graph

        if vocab is not None and max_len is not None:
            weighted = not (meta or {}).get("sums_as_means", False)
            fractions = bool((meta or {}).get("fractions_as_means", False))
            sop = prepare(sop, list(vocab), max_len, weighted=weighted, fractions=fractions)
        graph = build_graph(sop)
    except (ImportError, RaspError):
        return v.nodes_by_name(sop)
    walked = list(walk(sop))
    if len(walked) != len(graph.nodes):
        return v.nodes_by_name(sop)
    return {**v.nodes_by_name(sop), **{ir.name: node for ir, node in zip(graph.nodes, walked)}}


def _warn_if_other_source(
    model_path: str, meta: dict[str, Any], source: Source, console: Console
) -> None:
    recorded = (meta.get("program") or {}).get("sha256")
    actual = hashlib.sha256(source.text.encode("utf-8")).hexdigest()
    if recorded != actual:
        console.warn(
            f"{model_path} was not compiled from this version of {source.name} "
            f"(source sha256 {str(recorded)[:12]}... in the model, {actual[:12]}... now); "
            "verifying anyway"
        )


# ------------------------------------------------------------------------------------------------
# draw


def cmd_draw(args: argparse.Namespace) -> int:
    from rasp.tools.inspect import ModelInputRefused

    try:
        return _draw(args)
    except ModelInputRefused as err:  # a model file's vocabulary, or --vocab, lacks a token
        return _usage_error("draw", err.as_argument_error(args.input, args.vocab))


def _draw(args: argparse.Namespace) -> int:
    from rasp.tools.arguments import distinct_tokens, token_key
    from rasp.tools.draw import (
        draw_model_file,
        picture_format_problem,
        trace_model,
        write_pictures,
    )
    from rasp.tools.draw_graph import rendered_path

    console = Console.from_args(args)
    target = Path(args.target)
    problem = picture_format_problem(args.output)
    if problem is not None:
        return _usage_error("draw", f"argument -o/--output: {problem}")
    from rasp.tools.output_files import same_file

    if args.target != "-" and not is_python_target(args.target):
        for option, out in (("-o", args.output), ("--dot", args.dot)):
            if out is not None and same_file(args.target, out):
                return _usage_error("draw", f"{option} {out} is TARGET itself; name another file")
    if args.dot is not None:
        picture = Path(args.output).resolve()
        if Path(args.dot).resolve() == picture:
            return _usage_error("draw", f"--dot {args.dot}: the same file as -o {args.output}")
        if rendered_path(args.dot).resolve() == picture:
            return _usage_error(
                "draw",
                f"--dot {args.dot}: graphviz renders it to {rendered_path(args.dot)}, the "
                f"picture -o {args.output}; name the two differently",
            )
    _check_writable(args.output)
    _check_writable(args.dot)
    if target.suffix == ".safetensors":
        given = [
            opt
            for opt, value in (
                ("--vocab", args.vocab),
                ("--max-len", args.max_len),
                ("--name", args.name),
                ("--max-params", args.max_params),
            )
            if value is not None
        ]
        if given:
            return _usage_error(
                "draw",
                f"{', '.join(given)} applies only to a .rasp program; a model "
                "file is already compiled (its vocabulary, length and output fixed)",
            )
        lines = draw_model_file(target, args.input, args.output, args.dot)
    elif target.suffix == ".rasp" or is_python_target(args.target) or args.target == "-":
        vocab = args.vocab if args.vocab is not None else distinct_tokens(args.input)
        max_len = args.max_len if args.max_len is not None else len(args.input)
        if len(args.input) > max_len:
            return _usage_error(
                "draw", f"argument --input: {len(args.input)} tokens, more than --max-len {max_len}"
            )
        known = {token_key(t) for t in vocab}
        outside = [(i, t) for i, t in enumerate(args.input) if token_key(t) not in known]
        if outside:  # refused before compiling (which may take minutes), in the runtime's words
            from rasp.tools.inspect import ModelInputRefused
            from transformer.vocab import show_token

            at, token = outside[0]
            listed = ", ".join(show_token(t) for t in vocab)
            raise ModelInputRefused(
                f"the model compiled from {args.target}",
                f"token {show_token(token)} at position {at} of the input is not in the model's "
                f"vocabulary [{listed}]",
                tuple(vocab),
            )
        compiled, _ = _compile(
            args.target, args.name, vocab, max_len, console=console, max_params=args.max_params
        )
        model = in_memory_model(compiled)
        with runtime_errors(f"the model compiled from {args.target}"):
            trace = trace_model(model, args.input)
        lines = write_pictures(trace, args.output, compiled.metadata, compiled.weights, args.dot)
    else:
        return _usage_error(
            "draw",
            f"TARGET must be a .rasp program, PROG.py:NAME or a .safetensors model, got {target}",
        )
    if args.json:
        files = [str(args.output)] + ([str(args.dot)] if args.dot is not None else [])
        rendered = None if args.dot is None else rendered_path(args.dot)
        if rendered is not None and any(str(rendered) in line for line in lines):
            files.append(str(rendered))
        console.result_json({"files": files})
    for line in lines:
        console.note(line)
    return 0

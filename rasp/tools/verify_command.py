"""`rasp verify`: the compiled model (given, or compiled here) against the interpreter on every
short input and a sample of longer ones (`rasp.tools.verify` plans the inputs,
`rasp.tools.verify_orders` runs them, `rasp.tools.verify_text` renders the report).

The shared steps (loading the program or the model, compiling, usage errors) are
`rasp.tools.model_steps`'s, looked up there when called.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from rasp.errors import CompileError, Source
from rasp.text_width import printable
from rasp.tools import model_steps as steps
from rasp.tools.console import Console


def cmd_verify(args: argparse.Namespace) -> int:
    from rasp.tools import verify as v
    from rasp.tools.error_json import reported
    from rasp.tools.verify_json import refusal_json, report_json
    from rasp.tools.verify_orders import check_model
    from rasp.tools.verify_text import format_failure, format_success

    console = Console.from_args(args)
    model = None
    if args.file is None and args.model is None:
        return steps.usage_error(
            "verify",
            "the following arguments are required: FILE.rasp (or --model M.safetensors, whose "
            "recorded program it then checks)",
        )
    if args.file not in (None, "-"):
        # `rasp verify reverse.safetensors`: say that, not that --vocab is missing
        from rasp.tools.arguments import refuse_model_file

        refuse_model_file(args.file)
    wants_rebuild = getattr(args, "rebuild", True)
    if args.model is None and not wants_rebuild:
        return steps.usage_error(
            "verify", "--no-rebuild applies only with --model (without it verify compiles now)"
        )
    if args.model is None:
        missing = [
            o for o, v in (("--vocab", args.vocab), ("--max-len", args.max_len)) if v is None
        ]
        if missing:
            return steps.usage_error(
                "verify",
                f"the following arguments are required: {', '.join(missing)} (or --model "
                "M.safetensors, whose own they default to)",
            )
    else:
        if args.max_params is not None:
            return steps.usage_error(
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
            if early.planned_total == 0:
                return steps.usage_error("verify", NO_INPUT)
            v.check_plan_size(early)
        model = steps.load_model(args.model, args.device, "verify --model", console)
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
    if model is not None:
        accepts = (model.max_len, len(model.meta.raw["vocab"]["tokens"]))
        if accepts != (plan.max_len, len(plan.vocab)):  # narrowed: the report names what was left
            plan = replace(plan, narrowed_from=accepts)
    if plan.planned_total == 0:
        return steps.usage_error("verify", NO_INPUT)
    v.check_plan_size(plan)  # before compiling: a K too large would run for years, silently
    if model is None and args.device != "cpu":
        steps.check_device(args.device)  # before compiling, which may take minutes
    # with --model, the s-op the model computes unless --name says otherwise (PROG.py:NAME names it)
    output = None if model is None else str(model.meta.output.name)
    # no FILE: the program the model records (`rasp compile` stores its text)
    program = (
        args.file if args.file is not None else steps.recorded_program(args.model, model.meta.raw)
    )
    # model_sop: the program's s-op the model computes, where --name verifies another one
    sop, name, source, model_sop = steps.program_sops(
        program, args.name, console, None if output is None else (args.model, output)
    )
    if output is not None and name != output:  # --name, or PROG.py:NAME
        console.warn(
            printable(
                f"{args.model} computes `{output}`; verifying `{name}` of {source.name} against it"
            )
        )
    # importing the compiler and torch took 6 s of a class's verify (more on a cold start), with
    # nothing on the screen between reading the program and compiling it
    with console.stage("loading the compiler and torch"):
        import torch  # noqa: F401  (the model runs on it)

        from compiler.resolve import resolve

    # A tracr program's predicates and means resolved for the vocabulary: the values its model
    # encodes (a numerical mean of one True is 1). That graph equals the program wherever the
    # program gives a value, but may give one where it fails (a mean over None): the program as
    # written guards, so such an input is skipped and reported, never counted as checked.
    written, sop = sop, resolve(sop, list(args.vocab), args.max_len)
    guard = None if sop is written else written
    # the residual stream holds the variables of the graph the model computes: named as in it
    # (generated names are numbered along that graph, not along the verified s-op's)
    graph = sop if model_sop is None else resolve(model_sop, list(args.vocab), args.max_len)
    if args.sampling == "guided":
        plan = replace(plan, program=sop)
    if args.device == "cpu":
        import torch

        # Thousands of tiny batches: intra-op threads only add synchronisation (measured 4-15x slower
        # with 2 threads on a busy 2-core machine).
        torch.set_num_threads(1)
    if model is not None:
        if args.file is not None:  # (the recorded program is the model's own)
            _warn_if_other_source(args.model, model.meta.raw, source, console)
    else:
        console.step(f"compiling `{name}` for {len(args.vocab)} tokens, max_len {args.max_len}")
        try:
            compiled = steps.compile_sop(  # (with its stages' bars, as rasp compile draws them)
                sop,
                name,
                source,
                args.vocab,
                args.max_len,
                console=console,
                max_params=args.max_params,
            )
        except CompileError as err:
            if args.json:  # the report says why nothing was checked; stderr shows the error too
                console.result_json(refusal_json(err, args.vocab, args.max_len))
                reported(err)
            raise
        model = steps.in_memory_model(compiled, args.device)
    if args.model is not None:  # the graph compiled for the model's own vocabulary and length
        nodes = steps.nodes_by_residual_name(
            graph, model.meta.raw["vocab"]["tokens"], model.max_len, model.meta.raw
        )
    else:
        nodes = steps.nodes_by_residual_name(graph, args.vocab, args.max_len, model.meta.raw)
    with console.progress() as bars:
        if plan.program is not None and plan.planned_samples:
            console.step(f"guiding {plan.planned_samples:,} samples")
            plan.draw(
                None if bars is None else lambda done, total: bars("guiding samples", done, total)
            )
    rebuilt = None
    if args.model is not None:
        from rasp.tools.rebuild import Given, not_rebuilt, rebuild_reach

        if wants_rebuild:
            # the reach is what the certificate proves the weights against: the program's own,
            # FILE's where given (the s-op of it the model computes), else the recorded one's
            given = fallback = None
            if args.file is not None and (model_sop is not None or name == output):
                given = Given(model_sop if model_sop is not None else written, source)
            elif args.file is not None:
                # FILE under another --name, lacking the output (or Python): where the file
                # records no program to rebuild from, the s-op verified is the one claimed
                fallback = Given(written, source)
            console.step("rebuilding the reach from the program")
            with console.progress() as bars:
                rebuilt = rebuild_reach(model.meta.raw, args.model, given, bars, fallback)
        else:
            rebuilt = not_rebuilt("--no-rebuild was given")
    console.step(f"checking {plan.total:,} inputs")
    with console.progress() as bars, steps.runtime_errors(args.model or "the compiled model"):
        progress = None if bars is None else lambda done, total: bars("verifying", done, total)
        report = check_model(
            sop,
            model,
            plan,
            progress=progress,
            nodes=nodes,
            guard=guard,
            name=name,
            rebuild=rebuilt,
            stages=bars,
        )
    console.step("checked")
    what = f"{source.name if args.file in (None, '-') else args.file} `{name}`"
    if args.json:  # (the program's precedence warnings, as compile --json lists them)
        located = [f"{d.span.location()}: {d.message}" for d in console.located if d.span]
        console.result_json({**report_json(report), "warnings": located})
    elif report.ok:
        console.note(_printable_lines(format_success(report, what)))
    else:
        print(_printable_lines(format_failure(report, what)), file=sys.stderr)
    return 0 if report.ok else 1


def _printable_lines(text: str) -> str:
    """The report's lines with control and format characters escaped, as `rasp show` writes
    them: the model file names its output and its values and tokens, which the lines quote."""
    return "\n".join(printable(line) for line in text.split("\n"))


NO_INPUT = "--exhaustive-len 0 with --samples 0 leaves no input to check"


def _header_vocab_and_len(path: str) -> tuple[list[Any], int] | None:
    """The vocabulary tokens and maximum length a model file records, read from its checked
    header without torch; None where the file is bad (loading it then says what is wrong). The
    header is checked as the runtime checks it: a token that is no JSON atom (`[1]`) reached the
    input plan unchecked and crashed it."""
    from transformer import ModelFormatError, read_metadata

    try:
        meta = read_metadata(path)
    except ModelFormatError:
        return None
    return list(meta["vocab"]["tokens"]), int(meta["max_len"])


def _refuse_beyond_model(
    args: argparse.Namespace, path: str, tokens: Sequence[Any], max_len: int
) -> int | None:
    """A usage error (exit 2) for a --vocab token or a --max-len the model cannot take."""
    from rasp.tools.arguments import token_key, token_text

    if args.vocab is not None:
        known = {token_key(t) for t in tokens}
        unknown = [t for t in args.vocab if token_key(t) not in known]
        if unknown:
            return steps.usage_error(
                "verify",
                f"argument --vocab: the token {token_text(unknown[0])} is "
                f"not in the vocabulary of {path} "
                f"({json.dumps(list(tokens), ensure_ascii=False)}); "
                "verify over the model's vocabulary, or recompile",
            )
    if args.max_len is not None and args.max_len > max_len:
        return steps.usage_error(
            "verify",
            f"argument --max-len {args.max_len}: longer than {path} accepts ({max_len})",
        )
    return None


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

"""The model commands of the CLI: compile, run --model, verify (in `rasp.tools.verify_command`),
show, draw, export; the steps they share are `rasp.tools.model_steps`.

`rasp.tools.cli` parses the arguments (token lists already parsed) and calls one `cmd_*(args) -> exit code`
here. Each handler imports the compiler or torch only if it needs them (`show` and `export` never load
torch). User mistakes raise `RaspError`s, which the CLI renders on stderr with exit 1; a bad model
file or a missing CUDA device becomes one such error line too. A usage error found after argparse,
an input the model cannot take among them (`argument --input: ...`), prints `rasp COMMAND: error:
...` and returns 2.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rasp.errors import ErrorKind, RaspError
from rasp.tools import model_steps as steps
from rasp.tools.console import Console, write_stdout
from rasp.tools.pyprogram import is_python_target, split_target


def _compile(
    file: str,
    name: str | None,
    vocab: Sequence[Any],
    max_len: int,
    causal: bool = False,
    console: Console | None = None,
    max_params: int | None = None,
    head_masks: bool = True,
) -> tuple[Any, list[str], Callable[[str], str | None]]:
    """The compiled model, the warnings printed (the program's precedence traps, then that
    it fails on some inputs), and what messages say of a residual name a `def`'s call named or
    made (`model_steps.residual_about`)."""
    console = console or Console()
    sop, name, source = steps.program_sop(file, name, console)
    console.step(f"compiling `{name}` for {len(vocab)} tokens, max_len {max_len}")
    compiled = steps.compile_sop(
        sop, name, source, vocab, max_len, causal, console, max_params, head_masks
    )
    console.step("compiled and certified")
    from rasp.tools.probe import probe_warnings

    # (a constant output where a precedence warning was shown names that warning as the cause)
    warnings = probe_warnings(sop, vocab, max_len, name, console.located)
    for warning in warnings:
        console.warn(warning)
    # (the program's precedence warnings, shown as it was read, first in `--json`'s list)
    located = [f"{d.span.location()}: {d.message}" for d in console.located if d.span]
    about = steps.residual_about(sop, vocab, max_len, compiled.metadata)
    return compiled, located + warnings, about


def _source_file(target: str) -> str | None:
    """The file a command's program or model is read from (a Python target's program file too:
    `draw p.py:x --dot p.py` replaced its source), to keep outputs off it; None for stdin."""
    if target == "-":
        return None
    return split_target(target)[0] if is_python_target(target) else target


def _check_writable(path: str | Path | None, *, renamed: bool = False) -> None:
    """Refuse an output path up front, before minutes of compiling or drawing (`renamed`: see
    `check_writable`)."""
    if path is None:
        return
    from rasp.tools.output_files import check_writable

    check_writable(path, renamed=renamed)


# ------------------------------------------------------------------------------------------------
# compile, run --model, show, export


def cmd_compile(args: argparse.Namespace) -> int:
    from rasp.tools.certificate_text import summary_line
    from rasp.tools.error_json import compile_error_json, reported
    from rasp.tools.inspect import heads_text, layer_shapes, summarize
    from rasp.tools.model_file import read_model_file
    from rasp.tools.output_files import same_file, user_mode, writing

    source = _source_file(args.file)
    if source is not None and same_file(source, args.output):
        return steps.usage_error(
            "compile", f"-o {args.output} is the program itself; write the model to another file"
        )
    written = Path(os.path.realpath(args.output))  # (a link is written through)
    if written.suffix.lower() in (".rasp", ".py"):
        # a typo's slip (-o other.rasp) would replace a program's source with binary weights
        what = (
            Path(args.output).suffix
            if written.name == Path(args.output).name
            else (f"a link to {written}")
        )
        return steps.usage_error(
            "compile",
            f"-o {args.output} names a program source ({what}); write the "
            "model to a .safetensors file",
        )
    console = Console.from_args(args)
    try:
        _check_writable(args.output, renamed=True)  # safetensors renames its file into place
        model, warnings, about = _compile(
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
            model.save(args.output)  # (a full disk: compile's own object too, with `output`)
    except RaspError as err:
        if args.json:  # one object on stdout, also on failure; stderr shows the error too
            console.result_json(compile_error_json(err, str(args.output)))
        raise reported(err) from None
    console.step(f"wrote {args.output}")
    summary = summarize(read_model_file(args.output))
    cfg = summary.meta["config"]
    certificate = model.metadata.get("certificate")
    if args.json:
        console.result_json(
            {
                "ok": True,
                "output": str(args.output),
                "n_layers": cfg["n_layers"],
                "n_heads": cfg["n_heads"],  # the config's: the most heads of any layer
                "heads": sum(n for n, _, _ in layer_shapes(cfg)),  # in all, as the text says
                "d_model": cfg["d_model"],
                "parameters": summary.total_params,
                "nonzero": summary.nonzero_params,
                "certificate": summary_line(certificate, about),
                "warnings": warnings,
            }
        )
        return 0
    console.note(
        f"wrote {args.output}: {heads_text(cfg)}, "
        f"d_model {cfg['d_model']}, {summary.total_params:,} parameters "
        f"({summary.nonzero_params:,} non-zero)"
    )
    console.note(summary_line(certificate, about))
    if Path(args.output).suffix.lower() != ".safetensors":  # written as named, as draw's -o is
        console.note(
            f"note: {args.output} is named without .safetensors: rasp's commands read it as it "
            f"is; other tools look for the suffix (-o {args.output}.safetensors)"
        )
    return 0


def cmd_run_model(args: argparse.Namespace) -> int:
    import transformer
    from rasp.display import seq_json, seq_text
    from rasp.seqvalues import make_seq
    from rasp.sops import SeqValue
    from rasp.tools.model_file import ModelInputRefused
    from rasp.tracr.boxes import model_values

    if args.name is not None:
        return steps.usage_error(
            "run", "--name applies only to FILE.rasp; a model computes one output"
        )
    console = Console.from_args(args)
    model = steps.load_model(args.model, args.device, "run --model", console)
    console.step(f"loaded {args.model}")
    try:
        model.encode([args.input])
    except transformer.ModelInputError as err:
        refused = ModelInputRefused.of(args.model, err, tuple(model.meta.raw["vocab"]["tokens"]))
        return steps.usage_error("run", refused.as_argument_error(args.input))
    from rasp.tools.run_model_notes import uncertified_notes

    with steps.runtime_errors(args.model):
        (values,) = model.run([args.input])
        # (running the recorded program costs a parse: not where no warning is printed)
        notes = [] if console.quiet else uncertified_notes(model, args.model, args.input)
    for note in notes:  # where the output printed below is not certified
        console.warn(note)
    # tracr's tuples (n-ary maps) are string tokens in the model: shown as tuples, as `rasp run`
    # of the program shows them, where the file says its output's marked strings are tuples (a
    # RASP program's own token "\x00(1, 2)" is a string)
    tuples = model.meta.output.tuples
    if args.json:
        console.result(seq_json(model_values(values, tuples)))
    else:
        # labelled by the values, as the interpreter labels them: a default 0 among strings gives
        # `[0]*3 (ints)` where every position takes it (the file's type says strings)
        seq = make_seq(values, loose=True)
        console.result(seq_text(SeqValue(tuple(model_values(seq.values, tuples)), seq.type)))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from rasp.tools.inspect import format_summary, printable_file, summarize, summary_json
    from rasp.tools.model_file import read_model_file

    model_file = read_model_file(args.model, "show")
    if args.source:
        text = (model_file.meta.get("program") or {}).get("source")
        if text is None:
            raise RaspError(
                f"{args.model} records no program",
                hint="a model compiled by `rasp compile` records its program; one built with "
                "compiler.compile_sop records it where given a source",
                kind=ErrorKind.IO,
            )
        write_stdout(text, end="")  # the text compiled, as its recorded sha256 hashes it
        return 0
    console = Console.from_args(args)
    if args.json:  # JSON escapes control characters itself
        console.result(json.dumps(summary_json(summarize(model_file)), indent=2))
    else:
        console.result(format_summary(summarize(printable_file(model_file))))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from rasp.tools.export import export_transformer_lens

    if args.to != "transformer-lens":
        return steps.usage_error("export", f"--to {args.to}: only transformer-lens is supported")
    console = Console.from_args(args)
    written = export_transformer_lens(args.model, args.output, args.max_params, console.warn)
    if args.json:
        console.result_json({"files": [str(path) for path in written]})
    for path in written:
        console.note(f"wrote {path}")
    return 0


# ------------------------------------------------------------------------------------------------
# verify


def cmd_verify(args: argparse.Namespace) -> int:
    from rasp.tools.verify_command import cmd_verify as verify

    return verify(args)


# ------------------------------------------------------------------------------------------------
# draw


def _unsuffixed_model(target: str) -> bool:
    """A model file named without `.safetensors` (`rasp compile -o rev` writes it as named): told
    by its content, as `rasp show rev` and `run --model rev` read it."""
    from rasp.sources import is_safetensors_file

    if target == "-" or Path(target).suffix == ".rasp" or is_python_target(target):
        return False
    return is_safetensors_file(target)  # (unreadable: draw's own error names it)


def cmd_draw(args: argparse.Namespace) -> int:
    from rasp.tools.model_file import ModelInputRefused

    try:
        return _draw(args)
    except ModelInputRefused as err:  # a model file's vocabulary, or --vocab, lacks a token
        return steps.usage_error("draw", err.as_argument_error(args.input, args.vocab))


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
        return steps.usage_error("draw", f"argument -o/--output: {problem}")
    from rasp.tools.output_files import same_file

    source = _source_file(args.target)
    if source is not None:
        for option, out in (("-o", args.output), ("--dot", args.dot)):
            if out is not None and same_file(source, out):
                return steps.usage_error(
                    "draw", f"{option} {out} is TARGET itself; name another file"
                )
    if args.dot is not None:
        # (os.path.realpath: Path.resolve raised RuntimeError, an internal error, on a link loop)
        picture = os.path.realpath(args.output)
        if os.path.realpath(args.dot) == picture:
            return steps.usage_error("draw", f"--dot {args.dot}: the same file as -o {args.output}")
        if os.path.realpath(rendered_path(args.dot)) == picture:
            return steps.usage_error(
                "draw",
                f"--dot {args.dot}: graphviz renders it to {rendered_path(args.dot)}, the "
                f"picture -o {args.output}; name the two differently",
            )
    _check_writable(args.output)
    _check_writable(args.dot)
    if target.suffix == ".safetensors" or _unsuffixed_model(args.target):
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
            return steps.usage_error(
                "draw",
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to a "
                ".rasp program; a model "
                "file is already compiled (its vocabulary, length and output fixed)",
            )
        with console.stage("drawing"):  # (torch and matplotlib load: seconds, said so)
            lines = draw_model_file(target, args.input, args.output, args.dot)
    elif target.suffix == ".rasp" or is_python_target(args.target) or args.target == "-":
        vocab = args.vocab if args.vocab is not None else distinct_tokens(args.input)
        max_len = args.max_len if args.max_len is not None else len(args.input)
        if len(args.input) > max_len:
            return steps.usage_error(
                "draw", f"argument --input: {len(args.input)} tokens, more than --max-len {max_len}"
            )
        known = {token_key(t) for t in vocab}
        outside = [(i, t) for i, t in enumerate(args.input) if token_key(t) not in known]
        if outside:  # refused before compiling (which may take minutes), in the runtime's words
            from rasp.tools.model_file import ModelInputRefused
            from transformer.vocab import show_token

            at, token = outside[0]
            listed = ", ".join(show_token(t) for t in vocab)
            raise ModelInputRefused(
                f"the model compiled from {args.target}",
                f"token {show_token(token)} at position {at} of the input is not in the model's "
                f"vocabulary [{listed}]",
                tuple(vocab),
            )
        compiled, _, _ = _compile(
            args.target, args.name, vocab, max_len, console=console, max_params=args.max_params
        )
        with console.stage("drawing"):  # (torch and matplotlib load: seconds, said so)
            model = steps.in_memory_model(compiled)
            with steps.runtime_errors(f"the model compiled from {args.target}"):
                trace = trace_model(model, args.input)
            lines = write_pictures(
                trace, args.output, compiled.metadata, compiled.weights, args.dot
            )
    else:
        meant = [
            f"{target}{s}" for s in (".rasp", ".safetensors") if Path(f"{target}{s}").is_file()
        ]
        return steps.usage_error(
            "draw",
            f"TARGET must be a .rasp program, PROG.py:NAME or a .safetensors model, got {target}"
            + (f" (did you mean {meant[0]}?)" if meant else ""),
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

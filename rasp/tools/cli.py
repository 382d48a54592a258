"""The `rasp` command line (also `python -m rasp`): `main(argv) -> int`.

The only module that ties the packages together. `run FILE` uses the interpreter; the model
commands (`compile`, `run --model`, `verify`, `show`, `draw`, `export`) live in
`rasp.tools.model_commands`, imported only when one of them runs, so `rasp run` and `rasp repl` never load
the compiler or torch.

Exit status: 0 ok, 1 a program, compile, verification or file error, 2 a usage error (an --input
the program or model cannot read included), 130 Ctrl-C, 141 stdout's reader left. The process
starts in `rasp.tools.entry`, which handles Ctrl-C before this module is imported. The command
line is read by `rasp.tools.cli_args`, and a failure's line and status said by
`rasp.tools.cli_failures`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from rasp.errors import ErrorKind, RaspError
from rasp.tools.arguments import load_program, refuse_model_file, select_output
from rasp.tools.cli_args import parse_arguments, parse_token_arguments, subparser
from rasp.tools.cli_failures import (
    failed,
    flushed,
    internal_error,
    memory_text,
    os_error_text,
    out_of_memory,
    print_error,
    print_json_failure,
    silence_stdout,
    stderr_width,
)
from rasp.tools.cli_parser import build_parser
from rasp.tools.console import (
    Console,
    StdoutError,
    flush_stdout,
    not_installed,
    results_only_on_stdout,
)
from rasp.tools.interrupts import (
    INTERRUPTED,
    accept_interrupts,
    pause_point,
    settle_interrupts,
)
from rasp.tools.pyprogram import (
    compat_misuse,
    is_python_target,
    run_python_program,
    split_target,
    use_tracr_compat,
)

# Handlers in `rasp.tools.model_commands`, by subcommand (`run` goes there only with --model).
_MODEL_HANDLERS = {
    "compile": "cmd_compile",
    "run": "cmd_run_model",
    "verify": "cmd_verify",
    "show": "cmd_show",
    "draw": "cmd_draw",
    "export": "cmd_export",
}


# ------------------------------------------------------------------------------------------------
# Entry point


def main(argv: Sequence[str] | None = None) -> int:
    # torch's OpenMP threads otherwise spin between parallel regions: on a busy machine a
    # 2-thread forward of a small model took 146 ms instead of 1.3 ms (`verify` runs 2 threads).
    # It changes how idle threads wait, not the results; set before torch is imported (lazily).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    parser = build_parser()
    args: argparse.Namespace | None = None
    try:
        args = parse_arguments(parser, argv)
        parse_token_arguments(parser, args)
        pause_point("read")
        accept_interrupts()  # (a Ctrl-C while the CLI loaded is raised here, reported below)
        pause_point("command")
        code = _dispatch(parser, args)
        settle_interrupts()  # (the output is out: a Ctrl-C now would only contradict it)
        pause_point("done")
        flush_stdout()  # (a full disk under stdout is this command's error, said below)
        return code
    except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
        settle_interrupts()
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return flushed(code)  # (argparse swallows write errors: `--help > /dev/full` said 0)
    except BrokenPipeError:  # `rasp show M | head`: the reader left; nothing more to say
        settle_interrupts()
        silence_stdout()
        return 141  # 128 + SIGPIPE, as a program killed by the signal would report
    except KeyboardInterrupt:  # (--json: still one object on stdout, for whoever reads it)
        settle_interrupts()
        pause_point("interrupted")
        print_json_failure(args, RaspError("interrupted", kind=ErrorKind.INTERRUPTED))
        print_error("interrupted")
        return INTERRUPTED
    except RaspError as err:
        settle_interrupts()
        print_json_failure(args, err)  # (--json: one object on stdout)
        print_error(err.render(width=stderr_width(args)))
        return 1
    except StdoutError as exc:  # (`> /dev/full`: nothing more can go there, JSON or not)
        settle_interrupts()
        silence_stdout()
        print_error(f"error: cannot write standard output: {exc.strerror or exc}")
        return 1
    except OSError as exc:
        return failed(args, os_error_text(exc, args))
    except MemoryError as exc:  # the work is too large for this machine, not a bug
        # (`rasp export` of a file without W_pos whose header says max_len 10**9 pads a 30 GB W_pos)
        return failed(args, memory_text(exc), kind=ErrorKind.MEMORY)
    except RuntimeError as exc:
        # torch's allocators raise RuntimeError (torch.OutOfMemoryError on CUDA), not MemoryError
        if out_of_memory(exc):
            return failed(args, memory_text(exc), kind=ErrorKind.MEMORY)
        return internal_error(exc, args)
    except Exception as exc:  # the last line of defence: never a traceback by default
        return internal_error(exc, args)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    use_tracr_compat(getattr(args, "tracr_compat", False))
    if getattr(args, "tracr_compat", False):  # else ignored without a word where it means nothing
        program = getattr(args, "file", None) or getattr(args, "target", None)
        misuse = compat_misuse(args.command, program, getattr(args, "model", None))
        if misuse is not None:
            subparser(parser, args.command).error(misuse)
    if is_python_target(getattr(args, "file", None) or getattr(args, "target", None)):
        with results_only_on_stdout():  # (its functions may print while the command computes)
            return _dispatch_command(parser, args)
    return _dispatch_command(parser, args)


def _dispatch_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "repl":
        return _cmd_repl(args)
    if args.command == "run":
        if (args.file is None) == (args.model is None):
            subparser(parser, "run").error(
                "give either FILE.rasp or --model M.safetensors (exactly one)"
            )
        if args.file is not None:
            if args.device != "cpu":
                subparser(parser, "run").error("--device applies only to --model")
            return _cmd_run_program(args)
    return _run_model_command(args)


def _run_model_command(args: argparse.Namespace) -> int:
    try:
        # Lazy: pulls in the compiler and torch. import_module reports a missing module by name.
        model_commands = importlib.import_module("rasp.tools.model_commands")
    except ModuleNotFoundError as exc:
        if exc.name == "rasp.tools.model_commands":
            return failed(args, f"{args.command} is not available in this build")
        return failed(args, not_installed(args.command, exc))
    handler: Callable[[argparse.Namespace], int] | None = getattr(
        model_commands, _MODEL_HANDLERS[args.command], None
    )
    if handler is None:
        return failed(args, f"{args.command} is not available in this build")
    return handler(args)


# ------------------------------------------------------------------------------------------------
# run FILE (interpreter) and repl


def _cmd_run_program(args: argparse.Namespace) -> int:
    if is_python_target(args.file):
        return run_python_program(args)
    from rasp.display import seq_json, seq_text
    from rasp.errors import RaspInputError
    from rasp.sops import SeqValue, evaluate

    console = Console.from_args(args)
    interp, source = load_program(args.file, console)
    sop = select_output(interp, args.name, source.name, source.text)
    try:
        result = evaluate(sop, args.input)
    except RaspInputError as err:
        # The input, not the program, is wrong: an error of the argument (exit 2), as `run
        # --model` reports an input its model cannot take; located where the program reads it.
        err.message = f"argument --input: {err.message}"
        print(err.render(width=stderr_width(args)), file=sys.stderr)
        return 2
    except RaspError as err:  # a warning shown above, of what failed, is its likely cause
        from rasp.tools.failure_warnings import name_likely_cause

        name_likely_cause(err, console.located, None if console.quiet else "above")
        raise
    assert isinstance(result, SeqValue)
    console.result(seq_json(result) if args.json else seq_text(result))
    return 0


def _cmd_repl(args: argparse.Namespace) -> int:
    from rasp.sources import missing_program_hint
    from rasp.tools.repl_terminal import run_terminal

    if args.file == "-":
        return _repl_file_error(
            "-", "the REPL reads its statements from standard input; give a file to load first"
        )
    if is_python_target(args.file):  # it was read as RASP: a screen of syntax errors
        path, name = split_target(args.file)
        return _repl_file_error(
            args.file,
            f"the REPL loads RASP programs, and {path} is Python; run its s-op with "
            f"`rasp run {path}:{name or 'NAME'} --input INPUT`",
        )
    if args.file is not None:
        try:  # a missing file is an error before the session starts
            with open(args.file, "rb"):
                pass
        except FileNotFoundError as exc:
            raise RaspError(
                f"cannot read {args.file}: {exc.strerror or exc}",
                hint=missing_program_hint(args.file),
                kind=ErrorKind.IO,
            ) from None
        refuse_model_file(args.file)
    return run_terminal(args.file, verbose=bool(args.verbose), quiet=bool(args.quiet))


def _repl_file_error(file: str, reason: str) -> int:
    """A usage error of `rasp repl FILE.rasp` (exit 2), as argparse words one."""
    print(
        f"usage: rasp repl [FILE.rasp]\nrasp repl: error: argument FILE.rasp '{file}': {reason}",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":  # `python -m rasp.tools.cli` as `rasp` (it ran nothing and exited 0)
    # (this module's imports ran before Ctrl-C was handled; `rasp.tools.entry` handles it sooner)
    from rasp.tools import interrupts

    interrupts.install()
    sys.exit(interrupts.finish(main()))

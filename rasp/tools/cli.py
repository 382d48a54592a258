"""The `rasp` command line (also `python -m rasp`): `main(argv) -> int`.

The only module that ties the packages together. `run FILE` uses the interpreter; the model
commands (`compile`, `run --model`, `verify`, `show`, `draw`, `export`) live in
`rasp.tools.model_commands`, imported only when one of them runs, so `rasp run` and `rasp repl` never load
the compiler or torch.

Exit status: 0 ok, 1 a program, compile, verification or file error, 2 a usage error (an --input
the program or model cannot read included), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from rasp.errors import ErrorKind, RaspError
from rasp.tools.arguments import (
    UsageError,
    check_input,
    check_vocab,
    load_program,
    parse_tokens,
    refuse_model_file,
    select_output,
)
from rasp.tools.cli_parser import build_parser
from rasp.tools.console import Console
from rasp.tools.error_json import print_failure
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
        args = _parse_arguments(parser, argv)
        _parse_token_arguments(parser, args)
        return _dispatch(parser, args)
    except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BrokenPipeError:  # `rasp show M | head`: the reader left; nothing more to say
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a program killed by the signal would report
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except RaspError as err:
        print_failure(bool(getattr(args, "json", False)), err)  # (--json: one object on stdout)
        print(err.render(), file=sys.stderr)
        return 1
    except OSError as exc:
        return _failed(args, _os_error_text(exc))
    except MemoryError as exc:  # the work is too large for this machine, not a bug
        # (`rasp export` of a file without W_pos whose header says max_len 10**9 pads a 30 GB W_pos)
        return _failed(args, _memory_text(exc))
    except RuntimeError as exc:
        # torch's allocators raise RuntimeError (torch.OutOfMemoryError on CUDA), not MemoryError
        return (
            _failed(args, _memory_text(exc)) if _out_of_memory(exc) else _internal_error(exc, args)
        )
    except Exception as exc:  # the last line of defence: never a traceback by default
        return _internal_error(exc, args)


def _failed(args: argparse.Namespace | None, text: str, prefix: str = "error: ") -> int:
    """Exit 1 with `error: TEXT` on stderr and, under --json, the `{ok: false, ...}` object on
    stdout that a `RaspError` gets (a JSON consumer read empty output for these)."""
    print_failure(bool(getattr(args, "json", False)), RaspError(text, kind=ErrorKind.IO))
    print(f"{prefix}{text}", file=sys.stderr)
    return 1


def _out_of_memory(exc: RuntimeError) -> bool:
    """Whether torch's allocator ran out (no torch import here: the CLI starts without it)."""
    return type(exc).__name__ == "OutOfMemoryError" or "can't allocate memory" in str(exc)


def _memory_text(exc: Exception) -> str:
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not enough memory: {reason}"


def _internal_error(exc: Exception, args: argparse.Namespace | None) -> int:
    """One line for a bug of ours (called while `exc` is handled: the traceback is its own)."""
    if os.environ.get("RASP_DEBUG") == "1" or getattr(args, "verbose", False):
        traceback.print_exc()
    text = (
        f"{type(exc).__name__}: {exc} (a bug in rasp-forge: please report it with the command "
        "you ran; RASP_DEBUG=1 shows the traceback)"
    )
    return _failed(args, text, prefix="internal error: ")


def _parse_arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """argparse, except that an unknown option is reported with its subcommand's usage, and
    `rasp` alone is `rasp repl`, as the original's launcher (rasp.sh) starts its REPL."""
    if not (sys.argv[1:] if argv is None else argv):
        argv = ["repl"]
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _parse_token_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Turn INPUT and VOCAB text into token lists before any handler sees them; an empty input,
    an empty vocabulary or a repeated vocabulary token is an error of that argument."""
    checks = {"input": check_input, "vocab": check_vocab}
    for option, check in checks.items():
        text = getattr(args, option, None)
        if text is None:
            continue
        try:
            tokens = parse_tokens(text)  # its messages quote the text
        except UsageError as exc:
            _subparser(parser, args.command).error(f"argument --{option}: {exc}")
        try:
            check(tokens)
        except UsageError as exc:
            _subparser(parser, args.command).error(f"argument --{option} {text!r}: {exc}")
        setattr(args, option, tokens)


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of `command`, so a late usage error reads `rasp COMMAND: error: ...`."""
    found = getattr(parser, "subcommand_parsers", {}).get(command)
    return found if isinstance(found, argparse.ArgumentParser) else parser


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    use_tracr_compat(getattr(args, "tracr_compat", False))
    if getattr(args, "tracr_compat", False):  # else ignored without a word where it means nothing
        program = getattr(args, "file", None) or getattr(args, "target", None)
        misuse = compat_misuse(args.command, program, getattr(args, "model", None))
        if misuse is not None:
            _subparser(parser, args.command).error(misuse)
    if args.command == "repl":
        return _cmd_repl(args)
    if args.command == "run":
        if (args.file is None) == (args.model is None):
            _subparser(parser, "run").error(
                "give either FILE.rasp or --model M.safetensors (exactly one)"
            )
        if args.file is not None:
            if args.device != "cpu":
                _subparser(parser, "run").error("--device applies only to --model")
            return _cmd_run_program(args)
    return _run_model_command(args)


def _run_model_command(args: argparse.Namespace) -> int:
    try:
        # Lazy: pulls in the compiler and torch. import_module reports a missing module by name.
        model_commands = importlib.import_module("rasp.tools.model_commands")
    except ModuleNotFoundError as exc:
        if exc.name == "rasp.tools.model_commands":
            return _failed(args, f"{args.command} is not available in this build")
        return _failed(
            args, f"{args.command} needs the Python package '{exc.name}', which is not installed"
        )
    handler: Callable[[argparse.Namespace], int] | None = getattr(
        model_commands, _MODEL_HANDLERS[args.command], None
    )
    if handler is None:
        return _failed(args, f"{args.command} is not available in this build")
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
    sop = select_output(interp, args.name, source.name)
    try:
        result = evaluate(sop, args.input)
    except RaspInputError as err:
        # The input, not the program, is wrong: an error of the argument (exit 2), as `run
        # --model` reports an input its model cannot take; located where the program reads it.
        err.message = f"argument --input: {err.message}"
        print(err.render(), file=sys.stderr)
        return 2
    assert isinstance(result, SeqValue)
    console.result(seq_json(result) if args.json else seq_text(result))
    return 0


def _cmd_repl(args: argparse.Namespace) -> int:
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
        with open(args.file, "rb"):  # a missing file is an error before the session starts
            pass
        refuse_model_file(args.file)
    return run_terminal(args.file, verbose=bool(getattr(args, "verbose", False)))


def _repl_file_error(file: str, reason: str) -> int:
    """A usage error of `rasp repl FILE.rasp` (exit 2), as argparse words one."""
    print(
        f"usage: rasp repl [FILE.rasp]\nrasp repl: error: argument FILE.rasp '{file}': {reason}",
        file=sys.stderr,
    )
    return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush meets no broken pipe either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (captured, closed): nothing will be flushed
        pass


def _os_error_text(exc: OSError) -> str:
    if isinstance(exc, IsADirectoryError) and exc.filename is not None:  # as rasp.sources says it
        return f"cannot read {exc.filename}: it is a directory"
    if exc.filename is not None:
        return f"cannot read {exc.filename}: {exc.strerror or exc}"
    return str(exc)


if __name__ == "__main__":  # `python -m rasp.tools.cli` as `rasp` (it ran nothing and exited 0)
    sys.exit(main())

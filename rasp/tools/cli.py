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
from pathlib import Path

from rasp import __version__
from rasp.errors import ErrorKind, RaspError
from rasp.tools.arguments import (
    UsageError,
    check_input,
    check_vocab,
    grouped_count,
    load_program,
    parse_tokens,
    refuse_model_file,
    select_output,
)
from rasp.tools.console import Console, StdoutError, flush_stdout, results_only_on_stdout
from rasp.tools.error_json import print_failure
from rasp.tools.help_text import DESCRIPTIONS, FILE_HELP, INPUT_HELP, epilog
from rasp.tools.pyprogram import (
    add_python_options,
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
# Argument definitions


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rasp",
        usage="%(prog)s [-h] [--version] [COMMAND ...]",  # `rasp` alone starts the REPL
        description=DESCRIPTIONS["rasp"],
        epilog=epilog("rasp"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rasp-forge {__version__}")
    # prog: the subcommands' usage starts `rasp run`, not with the custom usage line above
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, prog="rasp")
    common = argparse.ArgumentParser(add_help=False)
    talk = common.add_mutually_exclusive_group()
    talk.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only results and errors: no notes, warnings or progress bars",
    )
    talk.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print each step with its time on stderr (and a traceback on an internal error)",
    )

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            description=DESCRIPTIONS[name],
            epilog=epilog(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[common],
        )

    run = command("run", "run a program (interpreter) or a compiled model")
    run.add_argument("file", nargs="?", metavar="FILE.rasp", help=FILE_HELP)
    add_python_options(run)
    run.add_argument(
        "--model", metavar="M.safetensors", help="compiled model to run instead of FILE"
    )
    run.add_argument("--input", required=True, metavar="INPUT", help=INPUT_HELP)
    run.add_argument(
        "--name", help="the s-op to print (default: the last name the program assigns)"
    )
    run.add_argument("--json", action="store_true", help="print one JSON list of the outputs")
    _add_device(run)

    comp = command("compile", "compile a program into a .safetensors model")
    comp.add_argument("file", metavar="FILE.rasp", help=FILE_HELP)
    add_python_options(comp)
    _add_vocab_and_len(comp, required=True)
    comp.add_argument("--name", help="the s-op to compile (default: the last name assigned)")
    comp.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.safetensors",
        type=_path,
        help="the model file to write (nothing is written if the compile is refused)",
    )
    comp.add_argument("--causal", action="store_true", help="compile with causal attention")
    comp.add_argument(
        "--no-head-masks",
        action="store_false",
        dest="head_masks",
        help="give no head a per-head mask (select(indices, indices, op) is then scored from "
        "N-wide index readings): a larger model that TransformerLens's HookedTransformer runs as is",
    )
    _add_max_params(comp)
    comp.add_argument("--json", action="store_true", help="print what was written as JSON")

    ver = command("verify", "compare a compiled model with the interpreter")
    ver.add_argument(
        "file",
        metavar="FILE.rasp",
        nargs="?",
        help=FILE_HELP + " (default with --model: the .rasp program the model records)",
    )
    add_python_options(ver)
    _add_vocab_and_len(
        ver, required=False, default_note="required, except with --model: the model's"
    )
    ver.add_argument(
        "--name",
        help="the s-op to verify (default: the model's output with --model, else the last name "
        "assigned)",
    )
    ver.add_argument(
        "--model", metavar="M.safetensors", help="verify this file (default: compile now)"
    )
    ver.add_argument(
        "--exhaustive-len",
        type=_non_negative,
        metavar="K",
        dest="exhaustive_len",
        help="check every input up to length K (default: the largest K with at most 20,000 "
        "such inputs); verify refuses more than 1,000,000 inputs in all (up to about 9 "
        "minutes on 2 busy cores)",
    )
    ver.add_argument(
        "--samples",
        type=_non_negative,
        default=1000,
        metavar="S",
        help="distinct random inputs to check past length K (default 1000; where the longer "
        "lengths hold no more inputs than S, every one is checked instead)",
    )
    ver.add_argument(
        "--sampling",
        choices=("guided", "uniform"),
        default="guided",
        help="guided (default): half the samples uniformly random, half mutants of them kept "
        "where they reach values of the program's variables that no input before reached; "
        "uniform: all uniformly random",
    )
    ver.add_argument("--seed", type=int, default=0, metavar="X", help="random seed (default 0)")
    ver.add_argument(
        "--no-rebuild",
        action="store_false",
        dest="rebuild",
        help="with --model, re-check the certificate against the file's reach without first "
        "rebuilding it from the program (FILE, else the one the file records): saves a compile, "
        "but the proof then trusts the file's reach",
    )
    _add_max_params(ver, " (without --model)")
    _add_device(ver)
    ver.add_argument("--json", action="store_true", help="print the report as JSON")

    show = command("show", "summarise a compiled model (layers, heads, widths, labels)")
    show.add_argument("model", metavar="M.safetensors", help="a model written by rasp compile")
    shown = show.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the summary as JSON")
    shown.add_argument(
        "--source",
        action="store_true",
        help="print the program the model was compiled from (its text as compiled), nothing else",
    )

    draw = command("draw", "draw a program's or model's computation on an input")
    draw.add_argument(
        "target",
        metavar="TARGET",
        help="a .rasp program (- reads one from standard input), PROG.py:NAME or a "
        ".safetensors model",
    )
    add_python_options(draw)
    draw.add_argument("--input", required=True, metavar="INPUT", help=INPUT_HELP)
    draw.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT.png",
        type=_path,
        help="the picture to write (its suffix names the format: .png, .svg, .pdf, ...)",
    )
    _add_vocab_and_len(draw, required=False)
    draw.add_argument("--name", help="the s-op to draw (default: the last name assigned)")
    draw.add_argument(
        "--dot", metavar="OUT.dot", type=_path, help="also write the graph as DOT text"
    )
    _add_max_params(draw, " (a .rasp TARGET only)")
    draw.add_argument("--json", action="store_true", help="print what was written as JSON")

    export = command("export", "export a compiled model for another library")
    export.add_argument("model", metavar="M.safetensors", help="a model written by rasp compile")
    export.add_argument(
        "--to", required=True, choices=["transformer-lens"], help="the library to export for"
    )
    export.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        type=_path,
        help="the directory to write (made if missing; files of the same names are replaced)",
    )
    _add_max_params(export, " once padded to TransformerLens's uniform layer shape")
    export.add_argument("--json", action="store_true", help="print what was written as JSON")

    repl = command("repl", "interactive RASP (like the original's REPL)")
    repl.add_argument("file", nargs="?", metavar="FILE.rasp", help="load this program first")
    parser.subcommand_parsers = dict(sub.choices)  # type: ignore[attr-defined]
    return parser


def _add_vocab_and_len(
    parser: argparse.ArgumentParser, *, required: bool, default_note: str | None = None
) -> None:
    note = f" ({default_note})" if default_note else ""
    parser.add_argument(
        "--vocab",
        required=required,
        metavar="VOCAB",
        help="the tokens the model must accept, each once: a JSON list or characters ('abc'); "
        f"see 'Tokens' below{note}",
    )
    parser.add_argument(
        "--max-len",
        required=required,
        type=_positive,
        metavar="N",
        dest="max_len",
        help=f"the longest input the model must accept{note}",
    )


def _add_max_params(parser: argparse.ArgumentParser, when: str = "") -> None:
    parser.add_argument(
        "--max-params",
        type=_parameter_count,
        metavar="P",
        dest="max_params",
        help=f"refuse, before building it, a model predicted to have more than P parameters{when} "
        "(default 200,000,000: 800 MB of weights)",
    )


def _add_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="where a compiled model runs (default cpu)",
    )


def _positive(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parameter_count(text: str) -> int:
    """A count written plainly, as the help writes the default (`200,000,000`) or as Python does
    (`200_000_000`)."""
    value = grouped_count(text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"not a whole number >= 1: {text!r} (e.g. 300000000, 300,000,000 or 300_000_000)"
        )
    return value


def _path(text: str) -> str:
    """An output path; an empty one (`-o ''`, an unset shell variable) would be the current
    directory."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file")
    return text


def _non_negative(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


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
        code = _dispatch(parser, args)
        flush_stdout()  # (a full disk under stdout is this command's error, said below)
        return code
    except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BrokenPipeError:  # `rasp show M | head`: the reader left; nothing more to say
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a program killed by the signal would report
    except KeyboardInterrupt:  # (--json: still one object on stdout, for whoever reads it)
        _print_failure(args, RaspError("interrupted"))
        print("interrupted", file=sys.stderr)
        return 130
    except RaspError as err:
        _print_failure(args, err)  # (--json: one object on stdout)
        print(err.render(), file=sys.stderr)
        return 1
    except StdoutError as exc:  # (`> /dev/full`: nothing more can go there, JSON or not)
        _silence_stdout()
        print(f"error: cannot write standard output: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        return _failed(args, _os_error_text(exc, args))
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
    _print_failure(args, RaspError(text, kind=ErrorKind.IO))
    print(f"{prefix}{text}", file=sys.stderr)
    return 1


def _print_failure(args: argparse.Namespace | None, err: RaspError) -> None:
    """Under --json, `err`'s object on stdout; where stdout cannot take it (a full disk, a reader
    that left), stderr's error line says it alone (it raised from the handler: a traceback)."""
    try:
        print_failure(bool(getattr(args, "json", False)), err)
        flush_stdout()
    except OSError:
        _silence_stdout()


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
    if is_python_target(getattr(args, "file", None) or getattr(args, "target", None)):
        with results_only_on_stdout():  # (its functions may print while the command computes)
            return _dispatch_command(parser, args)
    return _dispatch_command(parser, args)


def _dispatch_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
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


def _os_error_text(exc: OSError, args: argparse.Namespace | None) -> str:
    """`cannot read|write PATH: reason`, by what the command line says PATH is (an OSError does
    not say whether it came from a read or a write: a full disk said "cannot read OUT"); a path
    that is neither (a temporary file) is named without a guess."""
    if exc.filename is None:
        return str(exc)
    path = str(exc.filename)
    reason = (  # (as rasp.sources says it)
        "it is a directory" if isinstance(exc, IsADirectoryError) else exc.strerror or str(exc)
    )
    verb = _os_error_verb(path, args)
    return f"{path}: {reason}" if verb is None else f"cannot {verb} {path}: {reason}"


def _os_error_verb(path: str, args: argparse.Namespace | None) -> str | None:
    """`write` for a path the command writes (-o, --dot, a file in export's -o directory), `read`
    for one it reads (FILE, --model, M, TARGET), None for another."""
    given = vars(args) if args is not None else {}
    written = [given.get("output"), given.get("dot")]
    read = [given.get(key) for key in ("file", "model", "target")]
    read = [split_target(p)[0] if is_python_target(p) else p for p in read]  # (PROG.py:NAME)
    here = Path(path).absolute()
    for verb, paths in (("write", written), ("read", read)):
        for named in paths:
            if not isinstance(named, str | Path):
                continue
            where = Path(named).absolute()
            if here == where or (verb == "write" and here.parent == where):
                return verb
    return None


if __name__ == "__main__":  # `python -m rasp.tools.cli` as `rasp` (it ran nothing and exited 0)
    sys.exit(main())

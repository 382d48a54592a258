"""The `rasp` command line (also `python -m rasp`): `main(argv) -> int`.

The only module that ties the packages together. `run FILE` uses the interpreter; the model
commands (`compile`, `run --model`, `verify`, `show`, `draw`, `export`) live in
`rasp.tools.model_commands`, imported only when one of them runs, so `rasp run` and `rasp repl` never load
the compiler or torch.

Exit status: 0 ok, 1 a program, compile, verification or file error, 2 a usage error, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence

from rasp import __version__
from rasp.errors import RaspError
from rasp.tools.arguments import UsageError, parse_tokens, select_output

_INPUT_HELP = (
    "a JSON list gives its elements as tokens ('[\"the\",\"cat\"]', '[3,1,2]'); any other text "
    "is split "
    "into characters ('hello')"
)
_RUN_DESCRIPTION = """\
Run a program with the interpreter (FILE), or a compiled model (--model).

Output: the value of NAME on INPUT in RASP's display form followed by its type, e.g.
  [o, l, l, e, h] (strings)
(all-equal values print as [v]*n, floats rounded to 3 places, bools as T/F, as in the original RASP
REPL). With --json, exactly one JSON value: the list of per-position outputs, with ints, floats,
strings and bools kept as such, e.g. ["o", "l", "l", "e", "h"].
"""

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
        description="RASP (Thinking Like Transformers): interpret, compile to transformer "
        "weights, run.",
    )
    parser.add_argument("--version", action="version", version=f"rasp-forge {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run",
        help="run a program (interpreter) or a compiled model",
        description=_RUN_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("file", nargs="?", metavar="FILE.rasp", help="program to interpret")
    run.add_argument(
        "--model", metavar="M.safetensors", help="compiled model to run instead of FILE"
    )
    run.add_argument("--input", required=True, metavar="INPUT", help=_INPUT_HELP)
    run.add_argument(
        "--name", help="the s-op to print (default: the last name the program assigns)"
    )
    run.add_argument("--json", action="store_true", help="print one JSON list of the outputs")
    _add_device(run)

    comp = sub.add_parser("compile", help="compile a program into a .safetensors model")
    comp.add_argument("file", metavar="FILE.rasp")
    _add_vocab_and_len(comp, required=True)
    comp.add_argument("--name", help="the s-op to compile (default: the last name assigned)")
    comp.add_argument("-o", "--output", required=True, metavar="OUT.safetensors")
    comp.add_argument("--causal", action="store_true", help="compile with causal attention")

    ver = sub.add_parser("verify", help="compare a compiled model with the interpreter")
    ver.add_argument("file", metavar="FILE.rasp")
    _add_vocab_and_len(ver, required=True)
    ver.add_argument("--name", help="the s-op to verify (default: the last name assigned)")
    ver.add_argument(
        "--model", metavar="M.safetensors", help="verify this file (default: compile now)"
    )
    ver.add_argument(
        "--exhaustive-len",
        type=_non_negative,
        metavar="K",
        dest="exhaustive_len",
        help="check every input up to length K",
    )
    ver.add_argument(
        "--samples",
        type=_non_negative,
        default=1000,
        metavar="S",
        help="random inputs to check (default 1000)",
    )
    ver.add_argument("--seed", type=int, default=0, metavar="X", help="random seed (default 0)")
    _add_device(ver)
    ver.add_argument("--json", action="store_true", help="print the report as JSON")

    show = sub.add_parser("show", help="summarise a compiled model (layers, heads, widths, labels)")
    show.add_argument("model", metavar="M.safetensors")
    show.add_argument("--json", action="store_true", help="print the summary as JSON")

    draw = sub.add_parser("draw", help="draw a program's or model's computation on an input")
    draw.add_argument("target", metavar="TARGET", help="a .rasp program or a .safetensors model")
    draw.add_argument("--input", required=True, metavar="INPUT", help=_INPUT_HELP)
    draw.add_argument("-o", "--output", required=True, metavar="OUT.png")
    _add_vocab_and_len(draw, required=False)
    draw.add_argument("--name", help="the s-op to draw (default: the last name assigned)")
    draw.add_argument("--dot", metavar="OUT.dot", help="also write the graph as DOT text")

    export = sub.add_parser("export", help="export a compiled model for another library")
    export.add_argument("model", metavar="M.safetensors")
    export.add_argument("--to", required=True, choices=["transformer-lens"])
    export.add_argument("-o", "--output", required=True, metavar="OUT")

    repl = sub.add_parser("repl", help="interactive RASP (like the original's REPL)")
    repl.add_argument("file", nargs="?", metavar="FILE.rasp", help="load this program first")
    parser.subcommand_parsers = dict(sub.choices)  # type: ignore[attr-defined]
    return parser


def _add_vocab_and_len(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "--vocab",
        required=required,
        metavar="VOCAB",
        help="the input tokens the model must accept; " + _INPUT_HELP,
    )
    parser.add_argument(
        "--max-len",
        required=required,
        type=_positive,
        metavar="N",
        dest="max_len",
        help="the longest input the model must accept",
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
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        _parse_token_arguments(parser, args)
        return _dispatch(parser, args)
    except SystemExit as exc:  # argparse: usage errors (2), --help and --version (0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except RaspError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {_os_error_text(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # the last line of defence: never a traceback by default
        if os.environ.get("RASP_DEBUG") == "1":
            traceback.print_exc()
        print(
            f"internal error: {type(exc).__name__}: {exc} (a bug in rasp-forge: please report it "
            "with the command you ran; RASP_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1


def _parse_token_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Turn INPUT and VOCAB text into token lists before any handler sees them."""
    for option in ("input", "vocab"):
        text = getattr(args, option, None)
        if text is None:
            continue
        try:
            setattr(args, option, parse_tokens(text))
        except UsageError as exc:
            _subparser(parser, args.command).error(f"argument --{option}: {exc}")


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of `command`, so a late usage error reads `rasp COMMAND: error: ...`."""
    found = getattr(parser, "subcommand_parsers", {}).get(command)
    return found if isinstance(found, argparse.ArgumentParser) else parser


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
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
            print(f"error: {args.command} is not available in this build", file=sys.stderr)
        else:
            print(
                f"error: {args.command} needs the Python package '{exc.name}', which is not "
                "installed",
                file=sys.stderr,
            )
        return 1
    handler: Callable[[argparse.Namespace], int] | None = getattr(
        model_commands, _MODEL_HANDLERS[args.command], None
    )
    if handler is None:
        print(f"error: {args.command} is not available in this build", file=sys.stderr)
        return 1
    return handler(args)


# ------------------------------------------------------------------------------------------------
# run FILE (interpreter) and repl


def _cmd_run_program(args: argparse.Namespace) -> int:
    from rasp.display import seq_json, seq_text
    from rasp.interpreter import load_file
    from rasp.sops import SeqValue, evaluate

    interp = load_file(args.file)
    sop = select_output(interp, args.name, args.file)
    result = evaluate(sop, args.input)
    assert isinstance(result, SeqValue)
    print(seq_json(result) if args.json else seq_text(result))
    return 0


def _cmd_repl(args: argparse.Namespace) -> int:
    from rasp.tools.repl_terminal import run_terminal

    if args.file is not None:
        with open(args.file, "rb"):  # a missing file is an error before the session starts
            pass
    return run_terminal(args.file)


def _os_error_text(exc: OSError) -> str:
    if exc.filename is not None:
        return f"cannot read {exc.filename}: {exc.strerror or exc}"
    return str(exc)

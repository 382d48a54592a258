"""The `rasp` command line (also `python -m rasp`): `main(argv) -> int`.

The only module that ties the packages together. `run FILE` uses the interpreter; the model
commands (`compile`, `run --model`, `verify`, `show`, `draw`, `export`) live in
`rasp.tools.model_commands`, imported only when one of them runs, so `rasp run` and `rasp repl` never load
the compiler or torch.

Exit status: 0 ok, 1 a program, compile, verification or file error, 2 a usage error (an --input
the program or model cannot read included), 130 Ctrl-C, 141 stdout's reader left. The process
starts in `rasp.tools.entry`, which handles Ctrl-C before this module is imported.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from rasp.errors import Diagnostic, ErrorKind, RaspError
from rasp.tools.arguments import (
    UsageError,
    check_input,
    check_vocab,
    check_vocab_commas,
    check_vocab_spaces,
    load_program,
    parse_tokens,
    refuse_model_file,
    select_output,
)
from rasp.tools.cli_parser import build_parser, refuse_unknown_command
from rasp.tools.console import (
    Console,
    StdoutError,
    flush_stdout,
    message_width,
    not_installed,
    results_only_on_stdout,
)
from rasp.tools.error_json import print_failure
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
from rasp.wording import close_name

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
        return _flushed(code)  # (argparse swallows write errors: `--help > /dev/full` said 0)
    except BrokenPipeError:  # `rasp show M | head`: the reader left; nothing more to say
        settle_interrupts()
        _silence_stdout()
        return 141  # 128 + SIGPIPE, as a program killed by the signal would report
    except KeyboardInterrupt:  # (--json: still one object on stdout, for whoever reads it)
        settle_interrupts()
        pause_point("interrupted")
        _print_failure(args, RaspError("interrupted", kind=ErrorKind.INTERRUPTED))
        _print_error("interrupted")
        return INTERRUPTED
    except RaspError as err:
        settle_interrupts()
        _print_failure(args, err)  # (--json: one object on stdout)
        _print_error(err.render(width=_stderr_width(args)))
        return 1
    except StdoutError as exc:  # (`> /dev/full`: nothing more can go there, JSON or not)
        settle_interrupts()
        _silence_stdout()
        _print_error(f"error: cannot write standard output: {exc.strerror or exc}")
        return 1
    except OSError as exc:
        return _failed(args, _os_error_text(exc, args))
    except MemoryError as exc:  # the work is too large for this machine, not a bug
        # (`rasp export` of a file without W_pos whose header says max_len 10**9 pads a 30 GB W_pos)
        return _failed(args, _memory_text(exc), kind=ErrorKind.MEMORY)
    except RuntimeError as exc:
        # torch's allocators raise RuntimeError (torch.OutOfMemoryError on CUDA), not MemoryError
        if _out_of_memory(exc):
            return _failed(args, _memory_text(exc), kind=ErrorKind.MEMORY)
        return _internal_error(exc, args)
    except Exception as exc:  # the last line of defence: never a traceback by default
        return _internal_error(exc, args)


def _flushed(code: int) -> int:
    """`code` once what was printed is out; 141 where stdout's reader left, 1 where it cannot be
    written (said on stderr)."""
    try:
        flush_stdout()
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except StdoutError as exc:
        _silence_stdout()
        _print_error(f"error: cannot write standard output: {exc.strerror or exc}")
        return 1
    return code


def _failed(
    args: argparse.Namespace | None,
    text: str,
    severity: str = "error",
    kind: ErrorKind = ErrorKind.IO,
) -> int:
    """Exit 1 with `error: TEXT` on stderr and, under --json, the `{ok: false, ...}` object on
    stdout that a `RaspError` gets (a JSON consumer read empty output for these)."""
    settle_interrupts()
    _print_failure(args, RaspError(text, kind=kind))
    _print_error(Diagnostic(text, severity=severity).render(width=_stderr_width(args)))
    return 1


def _stderr_width(args: argparse.Namespace | None) -> int | None:
    """The columns an error on stderr is wrapped to: its terminal's, else one line (a pipe, a
    file, `--json`: `message_width`)."""
    return message_width(sys.stderr, json=bool(getattr(args, "json", False)))


def _print_error(text: str) -> None:
    """`text` on stderr; where stderr cannot take it (`2>&1 | head` whose reader left), the
    status says the outcome alone."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _print_failure(args: argparse.Namespace | None, err: RaspError) -> None:
    """Under --json, `err`'s object on stdout (shaped as the command's other failures); where
    stdout cannot take it (a full disk, a reader that left), stderr's error line says it alone
    (it raised from the handler: a traceback)."""
    given = vars(args) if args is not None else {}
    try:
        print_failure(bool(given.get("json", False)), err, given.get("command"), given)
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
    settle_interrupts()
    if os.environ.get("RASP_DEBUG") == "1" or getattr(args, "verbose", False):
        traceback.print_exc()
    text = (
        f"{type(exc).__name__}: {exc} (a bug in rasp-forge: please report it with the command "
        "you ran; RASP_DEBUG=1 shows the traceback)"
    )
    return _failed(args, text, severity="internal error", kind=ErrorKind.INTERNAL)


def _parse_arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """argparse, except that an unknown option is reported with its subcommand's usage, `rasp`
    alone is `rasp repl`, as the original's launcher (rasp.sh) starts its REPL, and `rasp help
    [COMMAND]` is `rasp [COMMAND] --help`."""
    given = list(sys.argv[1:] if argv is None else argv)
    if not given:
        argv = ["repl"]
    elif given[0] == "help" and len(given) <= 2:  # `rasp help [COMMAND]`, as git and pip read it
        argv = [*given[1:], "--help"]
    refuse_unknown_command(parser, argv if argv is not None else given)
    _refuse_unknown_option(parser, argv if argv is not None else given)
    _refuse_stray_input(parser, argv if argv is not None else given)
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _refuse_unknown_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """A misspelt option (`--maxlen 5`) is named before argparse checks the required ones, which
    said only `the following arguments are required: --max-len`; a close option is suggested."""
    if not argv or argv[0] not in getattr(parser, "subcommand_parsers", {}):
        return
    sub = _subparser(parser, argv[0])
    known = [o for o in sub._option_string_actions if o.startswith("--")]
    for word in argv[1:]:
        if word == "--":  # the rest are positional
            return
        if not word.startswith("--"):
            continue
        option = word.split("=", 1)[0]
        if any(o.startswith(option) for o in known):  # itself, or argparse's abbreviation
            continue
        close = close_name(option.replace("_", "-"), known)
        if option.replace("_", "-") in known:
            close = option.replace("_", "-")
        others = [
            name
            for name, other in parser.subcommand_parsers.items()  # type: ignore[attr-defined]
            if option in other._option_string_actions
        ]
        if close:
            guess = f" (did you mean {close}?)"
        elif others == ["compile"] and argv[0] in ("verify", "draw"):  # `verify --causal`
            model = "--model M.safetensors" if argv[0] == "verify" else "M.safetensors"
            guess = (
                f" ({option} is an option of rasp compile: compile with it, then give the model, "
                f"`rasp {argv[0]} {model}`)"
            )
        elif others:  # `rasp run --vocab`: a model command's option
            guess = f" ({option} is an option of rasp {', '.join(others)}, not of rasp {argv[0]})"
        else:
            guess = ""
        sub.error(f"unrecognized arguments: {option}{guess}")


def _refuse_stray_input(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """An input typed without `--input` (`rasp run p.rasp hello`: argparse said only that
    --input is required), or one with a space typed without quotes (`--input hello world`:
    `unrecognized arguments: world`), is named with the argument to write."""
    if not argv or argv[0] not in ("run", "draw"):
        return
    sub = _subparser(parser, argv[0])
    takes_value = {o for a in sub._actions if a.nargs != 0 for o in a.option_strings}
    words: list[tuple[int, str]] = []  # the positional words, with where they stand
    skip = False
    for at, word in enumerate(argv[1:], 1):
        if skip:
            skip = False
        elif word == "--":
            break
        elif word.startswith("-") and word != "-":  # (argparse takes `--inp` for --input)
            skip = "=" not in word and any(o.startswith(word) for o in takes_value if len(word) > 2)
            skip = skip or word in takes_value
        else:
            words.append((at, word))
    room = sum(1 for a in sub._actions if not a.option_strings)
    extra = words[room:]
    if not extra and words and any(w.startswith("--model") for w in argv):
        # `run --model M abc`: a word that names no file is no program to check M against
        extra = [(at, w) for at, w in words if w != "-" and not Path(w.split(":")[0]).exists()]
    if not extra:
        return
    typed = " ".join(w for _, w in extra)
    if not any(len(w) > 3 and "--input".startswith(w.split("=")[0]) for w in argv):
        sub.error(
            f"the following arguments are required: --input (write the input after it: "
            f"--input '{typed}')"
        )
    first = extra[0][0]
    before = argv[first - 2] if first >= 2 else ""
    if len(before) > 3 and "--input".startswith(before):  # the words after the input's first
        given = f"{argv[first - 1]} {typed}"
        sub.error(
            f"unrecognized arguments: {typed} (an input with spaces is one argument, in "
            f"quotes: --input '{given}')"
        )


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
            if option == "vocab":
                check_vocab_commas(text, tokens)
            check(tokens)
            if option == "vocab":
                check_vocab_spaces(text, tokens)
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
        return _failed(args, not_installed(args.command, exc))
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
    sop = select_output(interp, args.name, source.name, source.text)
    try:
        result = evaluate(sop, args.input)
    except RaspInputError as err:
        # The input, not the program, is wrong: an error of the argument (exit 2), as `run
        # --model` reports an input its model cannot take; located where the program reads it.
        err.message = f"argument --input: {err.message}"
        print(err.render(width=_stderr_width(args)), file=sys.stderr)
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
    # (this module's imports ran before Ctrl-C was handled; `rasp.tools.entry` handles it sooner)
    from rasp.tools import interrupts

    interrupts.install()
    sys.exit(interrupts.finish(main()))

"""Programs written in Python (`prog.py:NAME`): tracr-style programs built with `rasp.tracr`.

`rasp compile prog.py:NAME ...` runs prog.py (it is the user's own program: loading it executes
it, as `python prog.py` would, except that `if __name__ == "__main__":` blocks do not run and what it
prints goes to stderr), then takes NAME from it: an s-op, or a function that returns one when called
without arguments.

`--tracr-compat` loads an unmodified tracr program: for that load only (running the file and calling
NAME), the modules `tracr`, `tracr.rasp`, `tracr.rasp.rasp`, `tracr.compiler`, `tracr.compiler.lib`,
`tracr.compiler.compiling` and `tracr.compiler.validating` are this project's (`rasp.tracr`,
`rasp.tracr.lib`, `rasp.tools.tracr_compiling`); whatever `sys.modules` held under those names before
is put back afterwards.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import traceback
import types
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rasp import sops
from rasp.display import seq_json, seq_text
from rasp.errors import ErrorKind, RaspError, RaspInputError, Source, Span
from rasp.sources import read_source
from rasp.tools.console import message_width, write_stdout
from rasp.tracr.boxes import marked, marked_problem, unbox
from rasp.tracr.expr import RASPExpr, is_foreign
from rasp.tracr.lower import is_lowered, to_sops
from rasp.tracr.sites import forget_sources
from rasp.wording import close_name, with_article

COMPAT_HELP = (
    "load a tracr program unchanged: its imports of tracr (tracr.rasp.rasp, tracr.compiler.lib, "
    "tracr.compiler.compiling, ...) get rasp-forge's tracr API for this load only"
)
TARGET_HELP = (
    "a .rasp program, or PROG.py:NAME, a Python program built with rasp.tracr (NAME: an s-op, or "
    "a function returning one); loading a .py file runs it, as python would"
)


@dataclass(frozen=True)
class PythonProgram:
    """What a `prog.py:NAME` target gives: the s-op (lowered to rasp.sops), its name, the file."""

    sop: sops.SOp
    name: str
    source: Source
    program: Any  # the rasp.tracr expression (or rasp.sops node) NAME gave


def is_python_target(target: str | None) -> bool:
    """`prog.py` or `prog.py:NAME`."""
    if not target:
        return False
    return split_target(target)[0].endswith(".py")


def split_target(target: str) -> tuple[str, str | None]:
    """`prog.py:NAME` -> ("prog.py", "NAME"); `prog.py` -> ("prog.py", None)."""
    path, sep, name = target.rpartition(":")
    if sep and path.endswith(".py") and "/" not in name and "\\" not in name:
        return path, name or None  # `prog.py:` names no s-op, as `prog.py` (not a file `prog.py:`)
    return target, None


def load_python_program(
    target: str, name: str | None = None, *, tracr_compat: bool = False
) -> PythonProgram:
    """Run the program file of `target` and return the s-op NAME (from `prog.py:NAME` or `name`)."""
    path, target_name = split_target(target)
    if target_name and name and target_name != name:
        raise RaspError(
            f"{target} names '{target_name}' but --name says '{name}'",
            hint="give the name once",
            kind=ErrorKind.NAME,
        )
    name = target_name or name
    text = _read(path)
    source = Source(path, text)
    forget_sources()
    # What the program prints goes to stderr: a command's result alone is on stdout.
    with _compat_modules(tracr_compat), _program_dir(path), redirect_stdout(sys.stderr):
        namespace = _run(path, source, tracr_compat)
        value = _pick(namespace, name, path, source)
        # DeepMind tracr's s-ops are callable too (on an input): said as such by _as_sop
        if (
            callable(value)
            and not isinstance(value, (RASPExpr, sops.Node))
            and not is_foreign(value)
        ):
            value = _call(value, name or "", path, source, tracr_compat)
    return PythonProgram(_as_sop(value, name or "", path, tracr_compat), name or "", source, value)


def _read(path: str) -> str:
    """The program's text, said as a `.rasp` file's (rasp.sources): a directory, a missing file,
    bytes that are not UTF-8 (located)."""
    file = Path(path)
    if file.exists() and not file.is_file() and not file.is_dir():
        # runpy reads it again by its path: a pipe's text would be gone (a device: endless)
        raise RaspError(
            f"cannot read {path}: not a regular file (a Python program is run from its path)",
            kind=ErrorKind.IO,
        )
    return read_source(path).text


def _run(path: str, source: Source, tracr_compat: bool) -> dict[str, Any]:
    try:
        return runpy.run_path(path, run_name="__rasp_program__")
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = max(exc.offset or 1, 1)
        span = Span(source, line, col, line, col + 1)
        raise RaspError(f"Python syntax error: {exc.msg}", span, kind=ErrorKind.SYNTAX) from None
    except ImportError as exc:  # (ModuleNotFoundError too)
        raise _import_error(exc, path, source, tracr_compat) from None
    except SystemExit:
        raise RaspError(f"{path} called exit() while loading", kind=ErrorKind.EVALUATION) from None
    except RaspError:
        raise
    except Exception as exc:  # noqa: BLE001 (the user's program may raise anything)
        raise _program_error(exc, path, source, "while loading") from None


def _call(function: Any, name: str, path: str, source: Source, tracr_compat: bool) -> Any:
    try:
        return function()
    except TypeError as exc:
        if _raised_by_the_call(exc):
            raise RaspError(
                f"'{name}' in {path} cannot be called without arguments: {exc}",
                hint="name an s-op, or a function of no arguments that returns one",
                kind=ErrorKind.TYPE,
            ) from None
        raise _program_error(exc, path, source, f"while calling {name}()") from None
    except ImportError as exc:  # (ModuleNotFoundError too)
        raise _import_error(exc, path, source, tracr_compat) from None
    except RaspError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _program_error(exc, path, source, f"while calling {name}()") from None


def _raised_by_the_call(exc: TypeError) -> bool:
    """A TypeError about the call's own arguments (its traceback ends in this module)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename == __file__


def _pick(namespace: dict[str, Any], name: str | None, path: str, source: Source) -> Any:
    candidates = [
        key
        for key, value in namespace.items()
        if not key.startswith("_")
        and (isinstance(value, (RASPExpr, sops.SOp)) or _is_program_function(value, path))
    ]
    if name is None:
        listed = ", ".join(candidates[:8]) or "none found"
        raise RaspError(
            f"say which s-op of {path} to use: {path}:NAME",
            hint=f"NAME is an s-op or a function returning one (in this file: {listed})",
            kind=ErrorKind.NAME,
        )
    if name not in namespace:
        close = close_name(name, candidates or list(namespace))
        listed = ", ".join(candidates[:8]) or "none found"
        hint = (
            f"did you mean '{close}'?"
            if close
            else f"NAME is an s-op or a function returning one (in this file: {listed})"
        )
        raise RaspError(f"{path} defines no name '{name}'", hint=hint, kind=ErrorKind.NAME)
    return namespace[name]


def _is_program_function(value: Any, path: str) -> bool:
    code = getattr(value, "__code__", None)
    return isinstance(value, types.FunctionType) and code is not None and code.co_argcount == 0


def _as_sop(value: Any, name: str, path: str, tracr_compat: bool) -> sops.SOp:
    if isinstance(value, RASPExpr):
        lowered = to_sops(value)
    else:
        lowered = value
    if isinstance(lowered, sops.SOp):
        return lowered
    if isinstance(lowered, sops.Selector):
        raise RaspError(
            f"'{name}' in {path} is a selector, not an s-op",
            getattr(value, "span", None),
            hint="a program's output is an s-op: Aggregate the selector, or count it with "
            "SelectorWidth",
            kind=ErrorKind.TYPE,
        )
    module = type(value).__module__ or ""
    if module.split(".")[0] == "tracr" and not tracr_compat:
        raise RaspError(
            f"'{name}' in {path} was built with DeepMind's tracr, not rasp.tracr",
            hint="pass --tracr-compat to load the program with rasp-forge's tracr API, or import "
            "`from rasp import tracr as rasp`",
            kind=ErrorKind.TYPE,
        )
    raise RaspError(
        f"'{name}' in {path} is {with_article(type(value).__name__)}, not an s-op",
        hint="NAME must be an s-op built with rasp.tracr, or a function returning one",
        kind=ErrorKind.TYPE,
    )


def _import_error(exc: ImportError, path: str, source: Source, tracr_compat: bool) -> RaspError:
    missing = exc.name or ""
    if not isinstance(exc, ModuleNotFoundError):
        # `from tracr.compiler import rasp_to_graph`: a name the module (ours, under
        # --tracr-compat) does not have, spelled as the module the program imports
        name = getattr(exc, "name_from", None) or _imported_name(str(exc))
        if not (tracr_compat and missing.split(".")[0] == "tracr" and name):
            return _program_error(exc, path, source, "while loading")
        missing = f"{missing}.{name}"
    if missing.split(".")[0] == "tracr":
        if not tracr_compat:
            return RaspError(
                f"{path} imports '{missing}' (DeepMind's tracr), which is not installed",
                _user_span(exc, path, source),
                hint="pass --tracr-compat to load it with rasp-forge's tracr API (rasp.tracr)",
                kind=ErrorKind.NAME,
            )
        return RaspError(
            f"{path} imports '{missing}', a part of tracr that --tracr-compat does not provide",
            _user_span(exc, path, source),
            hint="--tracr-compat provides tracr.rasp.rasp, tracr.compiler.lib, "
            "tracr.compiler.compiling and tracr.compiler.validating",
            kind=ErrorKind.NAME,
        )
    if isinstance(exc, ModuleNotFoundError) and missing:
        # not the program's own error: a module this Python lacks (a tracr notebook's jax)
        top = missing.split(".")[0]
        return RaspError(
            f"{path} imports '{missing}', which is not installed",
            _user_span(exc, path, source),
            hint=f"install {top} in this Python, or remove the import"
            + (
                " (tracr's compiler and models need it; rasp.tracr and its models do not)"
                if top in _TRACR_DEPENDENCIES
                else ""
            ),
            kind=ErrorKind.NAME,
        )
    return _program_error(exc, path, source, "while loading")


# what tracr's own compiler and models run on, which a tracr notebook imports beside its program
_TRACR_DEPENDENCIES = frozenset({"jax", "jaxlib", "haiku", "chex", "einops", "networkx"})


def _imported_name(message: str) -> str | None:
    """The name in Python's "cannot import name 'X' from 'M'" message."""
    prefix = "cannot import name '"
    if not message.startswith(prefix):
        return None
    return message[len(prefix) :].split("'", 1)[0] or None


def _program_error(exc: BaseException, path: str, source: Source, when: str) -> RaspError:
    return RaspError(
        f"{path} raised {type(exc).__name__} {when}: {exc}",
        _user_span(exc, path, source),
        hint=_api_name_hint(exc) or "this is an error in the Python program itself",
        kind=ErrorKind.EVALUATION,
    )


_TRACR_API_MODULES = ("rasp.tracr", "tracr.rasp.rasp", "tracr.rasp")


def _api_name_hint(exc: BaseException) -> str | None:
    """`rasp.tokens_int`, `rasp.select`: a name RASP has and tracr's API (rasp.tracr) lacks, or a
    misspelling of one it has; Python's own "Did you mean" is printed only with a traceback."""
    if not isinstance(exc, AttributeError) or exc.name is None:
        return None
    module = getattr(exc, "obj", None)
    if not isinstance(module, types.ModuleType) or module.__name__ not in _TRACR_API_MODULES:
        return None
    public = [n for n in dir(module) if not n.startswith("_")]
    close = close_name(exc.name, public) or close_name(exc.name.capitalize(), public)
    if close is None and exc.name.startswith("tokens_"):
        return (
            "tracr's API has one input s-op, tokens, holding the tokens as given: a model of "
            "numbers takes number tokens (--vocab '[1,2,3]'), or convert with rasp.Map(int, "
            "rasp.tokens)"
        )
    listed = "tokens, indices, Map, SequenceMap, Select, Aggregate, SelectorWidth, Comparison"
    return f"did you mean '{close}'?" if close else f"tracr's API (rasp.tracr) has {listed}, ..."


def _user_span(exc: BaseException, path: str, source: Source) -> Span | None:
    """The line of the program file where the exception was raised (its innermost frame there)."""
    target = str(Path(path).resolve())
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        try:
            if str(Path(frame.filename).resolve()) == target:
                line = frame.lineno
        except (OSError, ValueError):
            continue
    if line is None:
        return None
    text = source.line(line)
    start = len(text) - len(text.lstrip()) + 1
    return Span(source, line, start, line, max(len(text) + 1, start + 1))


@contextmanager
def _program_dir(path: str) -> Iterator[None]:
    """The program's directory on sys.path while it loads (its sibling modules import)."""
    folder = str(Path(path).resolve().parent)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:
            pass


def compat_modules() -> dict[str, types.ModuleType]:
    """The modules `--tracr-compat` puts under tracr's names."""
    from rasp import tracr
    from rasp.tools import tracr_compiling, tracr_validating
    from rasp.tracr import lib

    top = _package("tracr")
    rasp_pkg = _package("tracr.rasp", rasp=tracr)
    compiler_pkg = _package(
        "tracr.compiler",
        lib=lib,
        compiling=tracr_compiling,
        validating=tracr_validating,
        compile_rasp_to_model=tracr_compiling.compile_rasp_to_model,
    )
    top.rasp = rasp_pkg  # type: ignore[attr-defined]
    top.compiler = compiler_pkg  # type: ignore[attr-defined]
    return {
        "tracr": top,
        "tracr.rasp": rasp_pkg,
        "tracr.rasp.rasp": tracr,
        "tracr.compiler": compiler_pkg,
        "tracr.compiler.lib": lib,
        "tracr.compiler.compiling": tracr_compiling,
        "tracr.compiler.validating": tracr_validating,
    }


def _package(name: str, **attributes: Any) -> types.ModuleType:
    module = types.ModuleType(name, f"rasp-forge's stand-in for {name} (--tracr-compat)")
    module.__path__ = []  # a package: `import tracr.rasp.rasp` looks inside it
    for key, value in attributes.items():
        setattr(module, key, value)
    return module


@contextmanager
def _compat_modules(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    stand_ins = compat_modules()
    saved = {name: sys.modules[name] for name in stand_ins if name in sys.modules}
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for name in stand_ins:
            if name in saved:
                sys.modules[name] = saved[name]
            else:
                sys.modules.pop(name, None)


# ------------------------------------------------------------------------------------------------
# The command line's hooks (rasp.tools.cli, rasp.tools.model_commands)

_tracr_compat: ContextVar[bool] = ContextVar("tracr_compat", default=False)


def add_python_options(parser: argparse.ArgumentParser) -> None:
    """`--tracr-compat` on a command that takes a program."""
    parser.add_argument(
        "--tracr-compat", action="store_true", dest="tracr_compat", help=COMPAT_HELP
    )


def compat_misuse(command: str, program: str | None, model: str | None) -> str | None:
    """Why `--tracr-compat` means nothing to this command (its program, FILE or TARGET; its
    --model), for a usage error: it changes only what a Python program imports, and a RASP
    program or a model file runs none; None where it may apply."""
    head = "--tracr-compat applies only to PROG.py:NAME; "
    if program is None:
        return None if model is None else f"{head}{model} is a model file, which runs no Python"
    if is_python_target(program):
        return None
    if program.lower().endswith(".safetensors") and command == "draw":
        return f"{head}{program} is a model file, which runs no Python"
    if program == "-" or program.lower().endswith(".rasp") or command != "draw":
        return f"{head}{program} is a RASP program"
    return None  # (draw refuses a TARGET of another kind itself)


def use_tracr_compat(enabled: bool) -> None:
    """What this command's `prog.py` loads get (set once per command by the CLI)."""
    _tracr_compat.set(enabled)


def python_program(target: str, name: str | None) -> tuple[sops.SOp, str, Source]:
    """(s-op, its name, source) of `prog.py:NAME`, as the CLI's `.rasp` loader returns them."""
    loaded = load_python_program(target, name, tracr_compat=_tracr_compat.get())
    return loaded.sop, loaded.name, loaded.source


def run_python_program(args: argparse.Namespace) -> int:
    """`rasp run prog.py:NAME --input ...`: the program's value on the input (tracr's semantics)."""
    sop, _, _ = python_program(args.file, args.name)
    tracr = is_lowered(sop)  # a tracr program's: its marked strings are its tuples
    try:
        if tracr:  # the graph would read such a token as the tuple its text spells
            refused = next((t for t in args.input if marked(t)), None)
            if refused is not None:
                problem = marked_problem(refused, "the input token", sop.span)
                raise RaspInputError(problem.message, problem.span, hint=problem.hint)
        result = sops.evaluate(sop, args.input)
    except RaspInputError as err:
        # an error of the argument (exit 2), as `rasp run FILE.rasp` reports one
        err.message = f"argument --input: {err.message}"
        print(
            err.render(width=message_width(sys.stderr, json=getattr(args, "json", False))),
            file=sys.stderr,
        )
        return 2
    assert isinstance(result, sops.SeqValue)
    if tracr:  # tuples as such (a rasp.sops program's own marked string is a string, as compiled)
        result = sops.SeqValue(tuple(unbox(v) for v in result.values), result.type)
    write_stdout(seq_json(result) if args.json else seq_text(result))
    return 0

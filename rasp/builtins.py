"""The interpreter's built-in operations: range, zip, applying an s-op to an input, selector_width,
and finding the file a `load` names.

Each checks its arguments and raises a located `RaspError` for a wrong kind or count.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import Any

from rasp.arithmetic import MAX_COLLECTION
from rasp.errors import (
    ErrorKind,
    RaspArityError,
    RaspError,
    RaspInputError,
    RaspRuntimeError,
    RaspTypeError,
    Span,
)
from rasp.operators import SELECTOR_HINT
from rasp.sops import MapSOp, Selector, SelectorWidthSOp, SOp, evaluate
from rasp.values import (
    TOKEN_HINT,
    Scope,
    describe,
    evaluated_hint,
    kind_name,
    non_token_inside,
)
from rasp.wording import close_name, with_article


def make_range(args: list[Any], span: Span) -> list[int]:
    if len(args) not in (1, 2, 3):
        raise RaspArityError(
            f"wrong number of inputs to range, expected: 1, 2, or 3, got: {len(args)}", span
        )
    if not all(isinstance(a, int) for a in args):
        raise RaspTypeError(f"range expects all integer inputs, but got: {describe(args)}", span)
    try:
        result = range(*args)
    except ValueError as exc:
        raise RaspRuntimeError(str(exc), span) from None
    try:
        too_long = len(result) > MAX_COLLECTION
    except OverflowError:  # `range(10 ^ 400)`: its length is past what len() returns
        too_long = True
    if too_long:
        raise RaspRuntimeError(f"a range longer than {MAX_COLLECTION} items", span)
    return list(result)


def make_zip(lists: list[Any], span: Span) -> list[list[Any]]:
    if not lists:
        raise RaspArityError("zip needs at least one list", span)
    for i, value in enumerate(lists):
        if not isinstance(value, list):
            raise RaspTypeError(
                f"attempting to zip lists, but {i + 1}-th element is not list: {describe(value)}",
                span,
            )
    if len({len(v) for v in lists}) > 1:
        raise RaspTypeError(
            f"attempting to zip lists of different lengths {[len(v) for v in lists]}", span
        )
    return [list(row) for row in zip(*lists)]


def unpack(targets: tuple[str, ...], values: list[Any], span: Span) -> list[Any]:
    if len(targets) == 1:
        return [values[0] if len(values) == 1 else list(values)]
    if len(values) == 1 and isinstance(values[0], list | str | dict):
        values = list(
            values[0]
        )  # the original zips the names with it: a string's characters, a dict's keys
    if len(values) != len(targets):
        raise RaspTypeError(f"expected {len(targets)} values, but got: {len(values)}", span)
    return list(values)


def bind_targets(scope: Scope, targets: tuple[str, ...], item: Any, span: Span) -> None:
    if len(targets) == 1:
        scope.assign(targets[0], item, span)
        return
    if not isinstance(item, list | str | dict):
        raise RaspTypeError(
            f"iterating with {len(targets)} names, but got single value: {describe(item)}", span
        )
    parts = list(item)
    if len(parts) != len(targets):
        raise RaspTypeError(
            f"iterating with {len(targets)} names but got {len(parts)} values ({describe(item)})",
            span,
        )
    for name, part in zip(targets, parts):
        scope.assign(name, part, span)


def check_arity(name: str, expected: int, got: int, span: Span, hint: str | None = None) -> None:
    """The original's message; `hint` says how the call is written (`sort(vals, keys)`)."""
    if expected != got:
        raise RaspArityError(
            f"wrong number of args for {name}- expected: {expected}, got: {got}.", span, hint
        )


def _applied_to_sop_hint(node: SOp | Selector, given: Any) -> str | None:
    """`length(tokens)`: a call of an s-op runs it on an input; s-ops combine without one."""
    if not isinstance(given, SOp | Selector):
        return None
    name = node.name or kind_name(node)
    uses = (
        f"aggregate({name}, ...), selector_width({name})"
        if isinstance(node, Selector)
        else f"{name} + 1, select({name}, ...)"
    )
    return (
        f'calling {name} runs it on one input, as in {name}("abc"); in a program it is already '
        f"computed on the input, so use it as it is ({uses}), or write a def to make a "
        "function of s-ops"
    )


def _applied_to_atom_hint(node: SOp | Selector, given: Any) -> str | None:
    """`tokens(1)`: an input is a string or list of tokens; one position is read by indexing."""
    if not isinstance(given, int | float | bool) or isinstance(node, Selector):
        return None
    if node.name is None:
        return f'the input is a string or list of tokens: apply it to "abc" or [{given}]'
    name = node.name
    index = (
        f"; {name}[{given}] gives position {given}'s value everywhere" if type(given) is int else ""
    )
    return f'the input is a string or list of tokens: {name}("abc") or {name}([{given}]){index}'


def apply(node: SOp | Selector, args: list[Any], span: Span) -> Any:
    """`node(input)`: evaluate a lazy s-op or selector on one input (a string, a token list, or a
    dict, whose keys are the tokens)."""
    what = kind_name(node)
    usage = f"{with_article(what)} takes one input" + (f': {node.name}("abc")' if node.name else "")
    check_arity(node.name or what, 1, len(args), span, usage)
    (given,) = args
    if isinstance(given, str | list | dict):
        tokens: list[Any] = list(given)  # a dict gives its keys, as the original iterates it
    else:
        raise RaspTypeError(
            f"an s-op or selector is applied to a string, list or dict, got: {describe(given)}",
            span,
            hint=evaluated_hint(given)
            or _applied_to_sop_hint(node, given)
            or _applied_to_atom_hint(node, given),
        )
    found = non_token_inside(tokens)
    if found is not None:  # (its text as a token would be numpy's or our class's repr)
        raise RaspTypeError(
            f"an input token cannot be {with_article(kind_name(found))}: {describe(found)}",
            span,
            hint=evaluated_hint(found) or TOKEN_HINT,
        )
    try:
        return evaluate(node, tokens)
    except RaspInputError as exc:
        # the input that cannot be read is this call's (not the first use of `tokens_int`, which
        # may be in an earlier statement)
        exc.span = span
        raise exc from None
    except RaspError as exc:
        raise exc.with_span(span) from None


def selector_width(args: tuple[Any, ...], span: Span) -> SelectorWidthSOp:
    (selector,) = args
    if not isinstance(selector, Selector):
        # `selector_width(tokens == "a")`, a count meant: the selector that counts it
        text = selector.text if isinstance(selector, MapSOp) else ""
        counts = (
            f"selector_width counts the keys a selector selects; the positions where {text} "
            f"holds are counted by selector_width(select({text}, True, ==))"
            if re.search(r"==|!=|<|>|\b(and|or|not|in)\b", text)
            else None
        )
        raise RaspTypeError(
            f"Expected selector, got: {describe(selector)}",
            span,
            hint=evaluated_hint(selector)
            or counts
            or f"selector_width counts the keys a selector selects: {SELECTOR_HINT}",
        )
    return SelectorWidthSOp(selector=selector, span=span)


def programs_dir() -> Path | None:
    """The directory of the shipped program library (`programs/`), if the package is importable."""
    try:
        return Path(str(resources.files("programs")))
    except (ModuleNotFoundError, TypeError):
        return None


def find_program(name: str, span: Span, search_dirs: Sequence[Path]) -> Path:
    """The file `load "name";` means: `name.rasp` in the loading file's directory (its source's
    `loads_from`, where given), the working directory, `search_dirs`, then the shipped
    `programs/` (first found wins); a name with a suffix (`"prog.txt"`, `rasp repl prog.txt`) is
    also the file of that very name."""
    if not name.strip():  # `load "";` would look for `.rasp`
        raise RaspError(
            "load needs a file name, got an empty one",
            span,
            hint='load "NAME"; runs NAME.rasp (from this directory or programs/)',
            kind=ErrorKind.IO,
        )
    candidates = [name + ".rasp"] + ([name] if Path(name).suffix else [])
    dirs: list[Path] = []
    loader = Path(span.file)
    if span.source.loads_from is not None:
        dirs.append(Path(span.source.loads_from))
    elif loader.is_file():
        dirs.append(loader.parent)
    dirs.append(Path.cwd())
    dirs.extend(search_dirs)
    programs = programs_dir()
    if programs is not None:
        dirs.append(programs)
    dirs = list(dict.fromkeys(_resolved(d) for d in dirs))  # each once, as the hint lists them
    for directory in dirs:
        for candidate in candidates:
            path = _resolved(directory / candidate)
            if path.is_file():
                return path
            if path.is_symlink():  # a link to itself, or to a missing file
                raise RaspError(
                    f"cannot load '{name}': {directory / candidate} is a link to no file",
                    span,
                    kind=ErrorKind.IO,
                )
    for directory in dirs:  # no file: a directory of that name (or NAME.rasp) was meant
        for candidate in [name, *candidates]:
            folder = _resolved(directory / candidate)
            if folder.is_dir():  # (the hint's path goes through the directory found: lib.rasp/)
                raise RaspError(
                    f"cannot load '{name}': {folder} is a directory",
                    span,
                    hint=_directory_hint(candidate, folder),
                    kind=ErrorKind.IO,
                )
    # `load "prog.rasp";` said "cannot find 'prog.rasp.rasp'": named as typed, its typo looked
    # for without the suffix and suggested with it
    stem = name.removesuffix(".rasp") if name.endswith(".rasp") else None
    close = _close_program(stem if stem is not None else name, dirs)
    if stem is not None and close:
        close = close.replace('"? ', '.rasp"? ')
    raise RaspError(
        f"cannot find '{name if stem is not None else name + '.rasp'}'",
        span,
        hint=close + "looked in " + ", ".join(str(d) for d in dirs),
        kind=ErrorKind.IO,
    )


def _close_program(name: str, dirs: Sequence[Path]) -> str:
    """`load "revers";`: a program one typo away in the directories looked in, as a question."""
    stem = Path(name)
    names: list[str] = []
    for directory in dirs:
        try:  # (a few hundred names looked at per directory, not a whole disk)
            found = islice((directory / stem.parent).glob("*.rasp"), 1000)
            names.extend(str(stem.parent / p.stem) for p in found if p.is_file())
        except OSError:
            continue
    close = close_name(name, dict.fromkeys(names))
    return f'did you mean "{close}"? ' if close else ""


def shown_path(path: Path, written: str) -> str:
    """How errors name the program file `path` (resolved) that `load "written";` found: as the
    load wrote it where that names the file from the working directory (`load "sub/prog";`,
    `rasp repl sub/prog.rasp`), as other commands show the path typed; else relative to the
    working directory where the file is under it, else in full."""
    for candidate in (written + ".rasp", written):
        if _resolved(Path(candidate)) == path:
            return candidate
    try:
        return str(path.relative_to(_resolved(Path.cwd())))
    except ValueError:
        return str(path)


def _resolved(path: Path) -> Path:
    """`path` absolute, through its symlinks (os.path.realpath: Path.resolve raises RuntimeError on
    a link to itself, which a load reported as an internal error)."""
    return Path(os.path.realpath(path))


def _directory_hint(name: str, folder: Path) -> str:
    """What to load instead of a directory: a program in it, by its path (`load "dir/prog";`)."""
    try:
        programs = sorted(p.stem for p in folder.glob("*.rasp") if p.is_file())
    except OSError:  # an unreadable directory: nothing to suggest in it
        programs = []
    if not programs:
        return 'load takes a file: load "NAME"; runs NAME.rasp'
    shown = ", ".join(f"{p}.rasp" for p in programs[:4]) + (", ..." if len(programs) > 4 else "")
    example = f'load "{name.rstrip("/")}/{programs[0]}";'
    return f"load a file in it by its path, e.g. {example} (it holds {shown})"

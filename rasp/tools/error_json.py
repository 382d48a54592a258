"""An error as the `--json` output of a command that failed: a JSON consumer gets one object on
stdout, not empty output, while stderr shows the located error (`compile` and `verify` refusing a
program write their own, of the same shape; any other failure gets `command_failure_json`'s)."""

from __future__ import annotations

import json
from typing import Any

from rasp.errors import ErrorKind, RaspError, spell_options


def diagnostics_json(err: RaspError) -> list[dict[str, Any]]:
    """One `{severity, message, location, hint}` per diagnostic of `err`: `location` is
    `file:line:col` or null, the hint names the command line's options."""
    return [
        {
            "severity": d.severity,
            "message": d.message,
            "location": None if d.span is None else d.span.location(),
            "hint": None if d.hint is None else spell_options(d.hint),
        }
        for d in err.diagnostics
    ]


def failure_json(err: RaspError) -> dict[str, Any]:
    """`{ok: false, error, location, refused, kind}`: the first error and its location (null where
    it has none: a file that cannot be read), every diagnostic (under `refused`, whatever stopped
    the command: readers depend on the key), and what kind of failure it is (`failure_kind`)."""
    found = diagnostics_json(err)
    return {
        "ok": False,
        "error": found[0]["message"],
        "location": found[0]["location"],
        "refused": found,
        "kind": failure_kind(err),
    }


def failure_kind(err: RaspError) -> str:
    """What stopped the command, for a reader of `--json`: `syntax` (the program does not read),
    `refused` (the compiler or its certificate refused it), `name`, `type`, `arity`, `evaluation`
    (the program does not run; a refusal of a program failing on every input is one: its first
    diagnostic's `kind`), `verify`, `io` (a file, an input, the environment), `interrupted`,
    `memory` or `internal` (a bug of ours)."""
    return "refused" if err.kind is ErrorKind.COMPILE else err.kind.value


def compile_error_json(err: RaspError, output: str) -> dict[str, Any]:
    """`rasp compile --json`'s object where nothing was written to `output`."""
    return {
        "ok": False,
        "output": output,
        **{k: v for k, v in failure_json(err).items() if k != "ok"},
    }


def verify_failure_json(err: RaspError, vocab: Any, max_len: Any) -> dict[str, Any]:
    """`rasp verify --json`'s object where no check completed (the compiler refused the program,
    an error, Ctrl-C): the counts a completed report has, 0 (a partial check's are not a
    verdict), and what it was asked to check (null where it was not known yet)."""
    return {
        "ok": False,
        "checked": 0,
        "failures": 0,
        "vocab": None if vocab is None else list(vocab),
        "max_len": max_len,
        **{k: v for k, v in failure_json(err).items() if k != "ok"},
    }


def command_failure_json(
    command: str | None, err: RaspError, given: dict[str, Any]
) -> dict[str, Any]:
    """The `--json` object of `command` failing with `err`: every failure of a command has the
    same keys (compile's carry `output`, verify's its counts), whatever stopped it; `given`: the
    command line's arguments."""
    if command == "compile" and given.get("output") is not None:
        return compile_error_json(err, str(given["output"]))
    if command == "verify":
        return verify_failure_json(err, given.get("vocab"), given.get("max_len"))
    return failure_json(err)


def reported(err: RaspError) -> RaspError:
    """`err`, marked as printed on stdout already by its command's own JSON report."""
    err.json_reported = True  # type: ignore[attr-defined]
    return err


def print_failure(
    json_output: bool,
    err: RaspError,
    command: str | None = None,
    given: dict[str, Any] | None = None,
) -> None:
    """Under `--json` (`json_output`), `command_failure_json` of `err` on stdout, unless its
    command printed its own report."""
    if json_output and not getattr(err, "json_reported", False):
        found = command_failure_json(command, err, given or {})
        print(json.dumps(found, ensure_ascii=False, default=str))

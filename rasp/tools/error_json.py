"""An error as the `--json` output of a command that failed: a JSON consumer gets one object on
stdout, not empty output, while stderr shows the located error (`compile` and `verify` write their
own; any other command's error gets `failure_json`'s)."""

from __future__ import annotations

import json
from typing import Any

from rasp.errors import RaspError, spell_options


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
    """`{ok: false, error, location, refused}`: the first error and its location (null where it
    has none: a file that cannot be read), and every diagnostic."""
    found = diagnostics_json(err)
    return {
        "ok": False,
        "error": found[0]["message"],
        "location": found[0]["location"],
        "refused": found,
    }


def compile_error_json(err: RaspError, output: str) -> dict[str, Any]:
    """`rasp compile --json`'s object where nothing was written to `output`."""
    return {
        "ok": False,
        "output": output,
        **{k: v for k, v in failure_json(err).items() if k != "ok"},
    }


def reported(err: RaspError) -> RaspError:
    """`err`, marked as printed on stdout already by its command's own JSON report."""
    err.json_reported = True  # type: ignore[attr-defined]
    return err


def print_failure(json_output: bool, err: RaspError, compile_output: str | None = None) -> None:
    """Under `--json` (`json_output`), `failure_json` of `err` on stdout, unless its command
    printed its own report; `compile_output`: compile's `-o`, whose failures all carry it (Ctrl-C,
    not enough memory, a bug of ours, as a refusal)."""
    if json_output and not getattr(err, "json_reported", False):
        found = (
            failure_json(err) if compile_output is None else compile_error_json(err, compile_output)
        )
        print(json.dumps(found, ensure_ascii=False, default=str))

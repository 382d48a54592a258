"""An error as the `--json` output of a command that failed (`compile`, `verify`): a JSON
consumer gets one object on stdout, not empty output, while stderr shows the located error."""

from __future__ import annotations

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


def compile_error_json(err: RaspError, output: str) -> dict[str, Any]:
    """`rasp compile --json`'s object where nothing was written to `output`: the first error and
    its location (null where it has none: a file that cannot be read), and every diagnostic."""
    found = diagnostics_json(err)
    return {
        "ok": False,
        "output": output,
        "error": found[0]["message"],
        "location": found[0]["location"],
        "refused": found,
    }

"""The `rasp` command's entry point (the console script and `python -m rasp`).

The CLI is imported and run only once Ctrl-C is handled (`rasp.tools.interrupts`): importing it
takes half a second, during which an interrupt printed a traceback and killed the process by the
signal. Nothing but that module and the standard library is loaded before.
"""

from __future__ import annotations

from rasp.tools import interrupts


def main() -> int:
    """Run the CLI with the process's command line; the exit status."""
    if not interrupts.install():
        from rasp.tools.cli import main as run_cli

        return run_cli()
    try:
        interrupts.pause_point("start")
        from rasp.tools.cli import main as run_cli

        code = run_cli()
    except KeyboardInterrupt:  # before the CLI could take it (it reports the others itself)
        code = interrupts.report()
    return interrupts.finish(code)

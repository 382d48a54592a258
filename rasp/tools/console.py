"""How a CLI command talks to the person running it, under `--quiet`, `--verbose` and `--json`.

- results (what the command is for: `run`'s value, `show`'s summary, any `--json` object) go to
  stdout, always;
- notes (what was done: `wrote reverse.safetensors: ...`) go to stdout, except with `--quiet` or
  `--json` (the JSON object says it instead);
- warnings go to stderr, except with `--quiet`; errors are the CLI's, always shown;
- steps (`--verbose`) go to stderr with the seconds since the command started;
- progress bars (tqdm) go to stderr only when it is a terminal, not with `--quiet` or `--json`,
  and only for work that has already taken a second (tqdm's `delay`), so quick runs never flash.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rasp.sources import Progress

PROGRESS_DELAY_S = 1.0  # a bar appears only once the work has taken this long
_UNITS = {
    "parsing": "chars",
    "running": "statements",
    "guiding samples": "inputs",
    "verifying": "inputs",
}


@dataclass
class Console:
    quiet: bool = False
    verbose: bool = False
    json: bool = False
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def from_args(cls, args: Any) -> Console:
        return cls(
            quiet=bool(getattr(args, "quiet", False)),
            verbose=bool(getattr(args, "verbose", False)),
            json=bool(getattr(args, "json", False)),
        )

    def result(self, text: str) -> None:
        print(text)

    def result_json(self, value: Any) -> None:
        print(json.dumps(value, ensure_ascii=False, default=str))

    def note(self, text: str) -> None:
        if not (self.quiet or self.json):
            print(text)

    def warn(self, text: str) -> None:
        if not self.quiet:
            print(f"warning: {text}", file=sys.stderr)

    def step(self, text: str) -> None:
        if self.verbose:
            print(f"[{time.monotonic() - self.started:7.2f}s] {text}", file=sys.stderr, flush=True)

    @property
    def shows_progress(self) -> bool:
        return not (self.quiet or self.json) and _is_terminal(sys.stderr)

    @contextmanager
    def progress(self) -> Iterator[Progress | None]:
        """A `progress(stage, done, total)` callback drawing one bar per stage, or None."""
        if not self.shows_progress:
            yield None
            return
        bars = _StageBars()
        try:
            yield bars
        finally:
            bars.close()


class _StageBars:
    """One tqdm bar at a time; a new stage closes the previous stage's bar."""

    def __init__(self) -> None:
        self.stage: str | None = None
        self.bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.close()
            from tqdm import tqdm

            self.stage = stage
            self.bar = tqdm(
                total=total,
                desc=stage,
                unit=_UNITS.get(stage, "it"),
                unit_scale=True,
                delay=PROGRESS_DELAY_S,
                leave=False,
                file=sys.stderr,
                dynamic_ncols=True,
            )
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar = self.stage = None


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False

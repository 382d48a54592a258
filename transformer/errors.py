"""The runtime's two error types: a bad model file and a bad model input.

`transformer` must not import `rasp`, so these do not derive from `rasp.errors.RaspError`; each
carries one printable line (no traceback needed) that the CLI renders as `error: <message>`.
"""

from __future__ import annotations


class ModelFormatError(Exception):
    """A file that is not a valid compiled model: `str(err)` is `<path>: <what is wrong>`."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ModelInputError(ValueError):
    """An input the model cannot run (unknown token, empty, longer than `max_len`)."""


class ModelOutputError(ArithmeticError):
    """A model computed a NaN or infinite output: its weights, not the input, are broken."""

"""RASP: the language of "Thinking Like Transformers" (parser, interpreter, REPL, CLI)."""

from __future__ import annotations

__version__ = "0.1.0"

"""The tools built on the language core: CLI, REPL (and its compiled view), verify, show, draw, export.

These are the only modules that tie `rasp` (the language core), `compiler` and `transformer`
together; the core imports nothing from here (tests/test_architecture.py enforces it).
"""

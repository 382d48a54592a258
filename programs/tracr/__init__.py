"""Programs in tracr's Python-embedded RASP, written against `rasp.tracr` (`from rasp import tracr as
rasp`). Compile one with `rasp compile programs/tracr/FILE.py:NAME --vocab ... --max-len N`."""

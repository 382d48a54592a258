"""The driver's last build, where none before is proved, the output's snap is refused and its
one-hot output was built and not proved either: the one-hot output with every map of a map
computed from its input maps' sources (`fused_maps`).

A map read by another map may be an interpolation (a line through its points), which passes its
input's error on times its slope; a one-hot output stepped over that number carries the error
into its steps. Numeric 2196601 at N = 4, `v1 * ((v2 * v2) % 2)` over a mean of prefix means v2:
the inner map's interpolation carries v2's error (3.3e-6) times slopes of hundreds (the numerical
output's snap: a margin of 1.81e-5 against 0.00342), and the one-hot output stepped over it (a
relu margin of 4 against 4.49). Fused, the output is stepped over v2 itself (its 89 values at
least 1/144 apart) per value of v1: every step exact, proved. Its outputs hold float64 twins
of one value (7/6 and 11/6 squared both give 49/36) that one column writes
(`compiler.fits.merge_per_context`). Tried last, only where nothing else is proved and the
one-hot output was small enough to build, so that no model proved before changes; the
certifier, unchanged, has the last word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler import build_facts, build_trials
from compiler.blocks import Encoding
from compiler.build_trials import BuildOptions, Builds, Kept
from compiler.graph import Graph

FUSED_ONE_HOT = "with a one-hot output of the maps of maps fused over their sources"


def fused_output_instead(
    kept: Kept,
    graph: Callable[[], Graph],
    builds: Callable[[], Builds],
    note: Callable[[str], None],
) -> Kept:
    """`kept` where it is proved; else the one-hot output with the maps of maps fused where
    it is proved; else `kept` with why not among its tried."""
    if kept.certificate.ok or not build_facts.snap_failed(kept.certificate):
        return kept
    if kept.one_hot_note != build_trials.ONE_HOT_NOT_PROVED:  # (only then did its size fit)
        return kept
    fusable = build_facts.maps_of_maps(graph())
    if not fusable:
        return kept
    note(f"build {FUSED_ONE_HOT}")
    tried: list[tuple[str, str]] = []
    options = BuildOptions(output=Encoding.CATEGORICAL, fused_maps=fusable)
    found = build_trials.proved(builds(), options, FUSED_ONE_HOT, note, tried)
    if found is not None:
        return found
    return replace(kept, tried=(*kept.tried, *tried))

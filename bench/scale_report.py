"""The tables and the plot of bench/README.md, drawn from bench_scale.py's results (kept apart
from the measuring: rendering needs neither the compiler nor torch)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any


def mixed_table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of bench/README.md's mixed lengths: each time and its ratio to the
    forward pass per length, in CPU time where one thread ran (steadier), else wall time."""
    names = ["forward", "forward_padded", "run", "run_str", "run_array", "run_array_per_length"]
    out = [
        "| program | N | device | threads | clock | forward, per length | forward, one padded "
        "batch | run | run (strs) | run_array, lengths= | run_array, one per length |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu = r["threads"] == 1
        times = [r[f"{name}_cpu_s" if cpu else f"{name}_s"] for name in names]
        cells = [f"{t * 1e3:.0f} ms ({t / times[0]:.2f})" for t in times]
        out.append(
            f"| {r['program']} | {r['N']} | {r['device']} | {r['threads']} "
            f"| {'CPU' if cpu else 'wall'} | {' | '.join(cells)} |"
        )
    return "\n".join(out)


def tables(results: dict[str, Any], root: Path) -> str:
    """The markdown tables of bench/README.md (paths under `root` in refusals made relative)."""
    out = [
        "| program | N | layers | heads | d_model | params | non-zero | dense/non-zero "
        "| compile (wall / CPU) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.get("sizes", []):
        if "params" not in r:
            reason = (r.get("refused") or r.get("error", "")).replace(f"{root}/", "")
            out.append(f"| {r['program']} | {r['N']} | refused: {reason} ||||||||")
            continue
        out.append(
            f"| {r['program']} | {r['N']} | {r['layers']} | {'/'.join(map(str, r['heads']))} "
            f"| {r['d_model']} | {r['params']:,} | {r['nonzero']:,} "
            f"| {r['params'] / max(r['nonzero'], 1):.1f} | {r['compile_s']:.2f} s"
            f" / {r.get('compile_cpu_s', float('nan')):.2f} s |"
        )
    out += [
        "",
        "| program | N | device | forward | run | forward tokens/s | run tokens/s | run/forward "
        "| run (strs)/forward | run_ids/forward | run_array/forward |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results.get("speeds", []):
        ratios = [
            f"{r[key]:.2f}" if key in r else "n/a"
            for key in ("run_str_ratio", "run_ids_ratio", "run_array_ratio")
        ]
        out.append(
            f"| {r['program']} | {r['N']} | {r['device']} | {r['forward_s'] * 1e3:.1f} ms "
            f"| {r['run_s'] * 1e3:.1f} ms | {r['forward_tok_s']:,.0f} | {r['run_tok_s']:,.0f} "
            f"| {r['ratio']:.2f} | {' | '.join(ratios)} |"
        )
    return "\n".join(out)


def plot(
    results: dict[str, Any],
    path: Path,
    programs: Iterable[str],
    tracr: dict[str, dict[int, float]],
) -> None:
    """Parameters against N for each of `programs` in `results` (log-log), with `tracr`'s
    published sizes as crosses, saved to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    colors: dict[str, Any] = {}
    palette = plt.get_cmap("tab20").colors  # more programs than the default cycle's 10 colours
    for k, program in enumerate(programs):
        points = sorted(
            (r["N"], r["params"])
            for r in results.get("sizes", [])
            if r["program"] == program and "params" in r
        )
        if points:
            (line,) = ax.plot(
                *zip(*points, strict=True),
                marker="o" if k < 10 else "s",
                label=program,
                color=palette[2 * k % 20 + 2 * k // 20],  # past 10: the lighter shades
            )
            colors[program] = line.get_color()
    for program, figures in tracr.items():
        xs, ys = zip(*sorted(figures.items()), strict=True)
        ax.plot(xs, ys, linestyle="none", marker="x", markersize=9, color=colors.get(program, "k"))
    ax.plot([], [], linestyle="none", marker="x", color="k", label="tracr (published, N=10/40)")
    guide = [8, 1024]  # a line of slope 1: linear growth, for the eye
    ax.plot(guide, [20.0 * n for n in guide], linestyle=":", color="grey", label="∝ N (guide)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("maximum length N")
    ax.set_ylabel("parameters")
    ax.set_title("Compiled model size against N (certified models)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)

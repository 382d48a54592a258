"""How compiled models scale with the maximum length N: size, compile time and end-to-end speed.

For each library program and N it compiles (certificate included) in a subprocess with a time limit,
and records layers, parameters (total and non-zero), compile seconds, or the refusal. For the
throughput table it runs 1024 random full-length inputs through the bare forward pass on ids
encoded beforehand, through `CompiledTransformer.run` (encode, forward, decode) given lists of
tokens and given the same inputs as strs, through `run_ids` (ids in, codes out) and through
`run_array` (a numpy array of tokens in, one of values out), on the CPU and, when one is present,
on CUDA; tokens/s counts input tokens.

    python bench/bench_scale.py                       # everything, writes bench/results/scale.json
    python bench/bench_scale.py --sizes-only --lengths 16 64 256 --results /tmp/sizes.json
    python bench/bench_scale.py --speed-only --speed-cases hist:256 reverse:64
    python bench/bench_scale.py --plot                # bench/scale.png from the saved results
    python bench/bench_scale.py --mixed --speed-cases sort:64 --threads 1   # mixed lengths

`--mixed` measures inputs of mixed lengths instead (below, `mixed_throughput`) and writes its rows
to their own file (`--results`, default bench/results/mixed.json), leaving scale.json alone.

A measuring run replaces the results file (`--results`, default bench/results/scale.json) with
what it measured: a run of some programs or lengths keeps only their rows, `--sizes-only` no speed
rows, `--speed-only` the file's sizes and the new speeds (a file that does not exist is an error:
it has no sizes to keep). It then draws the plot beside that file, as `--plot` does
(bench/scale.png for the default one).

Needs matplotlib for `--plot` (the `viz` extra).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "scale.json"
MIXED_RESULTS = ROOT / "bench" / "results" / "mixed.json"
PLOT = ROOT / "bench" / "scale.png"
VOCABS = {
    "reverse": "abc",
    "hist": "abc",
    "sort": "abc",
    "most_freq": "abc",
    "double_hist": "abc",
    "length": "abc",
    "frac_prevs": "xab",  # the program counts "x"
    "hist_bos": "abc",
    "induction": "abc",
    "dyck1": "()",
    "dyck2": "(){}",
}
LONG = ("reverse", "hist", "sort", "frac_prevs")  # also tried at N = 1024
# tracr on its own library (issue 3's measurements, vocabulary {a,b,c}): N -> parameters
TRACR = {
    "reverse": {10: 90e3, 40: 3.64e6},
    "hist": {10: 2.3e3, 40: 20.5e3},
    "sort": {10: 36e3, 40: 473e3},
    "most_freq": {10: 554e3, 40: 89.5e6},
    "dyck1": {10: 293e3, 40: 10.9e6},
}
BATCH = 1024


def library_program(program: str) -> tuple[Any, str, Any]:
    """programs/`program`.rasp's last assigned s-op, its name and its `Source`: what
    `rasp compile` compiles from the file (the benchmarks' and model_hashes' programs)."""
    from rasp.errors import Source
    from rasp.interpreter import load_file

    path = ROOT / "programs" / f"{program}.rasp"
    interp = load_file(path)
    name = interp.last_assigned or ""
    return interp.get(name), name, Source(str(path), path.read_text())


def compile_one(program: str, max_len: int, out: Path | None) -> dict[str, Any]:
    """Compile in this process; the record of one (program, N)."""
    from compiler import compile_sop
    from rasp.errors import RaspError

    sop, name, source = library_program(program)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        model = compile_sop(sop, list(VOCABS[program]), max_len, name=name, source=source)
    except RaspError as err:
        first = err.render().splitlines()[0] if hasattr(err, "render") else str(err)
        return {"program": program, "N": max_len, "refused": first[:300]}
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    if out is not None:
        model.save(out)
    cfg = model.config
    return {
        "program": program,
        "N": max_len,
        "layers": cfg["n_layers"],
        "heads": [layer["n_heads"] for layer in cfg["layers"]],
        "d_model": cfg["d_model"],
        "params": model.param_count(),
        "nonzero": model.nonzero_params(),
        "compile_s": round(seconds, 3),
        "compile_cpu_s": round(cpu_seconds, 3),  # every thread of this process
    }


def throughput(path: Path, program: str, max_len: int, device: str) -> dict[str, Any]:
    """Bare forward vs `run` on BATCH random full-length inputs: the best of 3 runs each on the
    CPU, of 10 on CUDA (milliseconds each, on a shared host whose timings vary by tens of %)."""
    import torch

    import transformer

    model = transformer.load(path, device=device)
    rng = random.Random(0)
    vocab = list(VOCABS[program])
    inputs = [[rng.choice(vocab) for _ in range(max_len)] for _ in range(BATCH)]
    ids, _ = model.encode(inputs)

    def best(fn: Any) -> float:
        fn()  # warm-up
        times = []
        for _ in range(10 if device == "cuda" else 3):
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            fn()
            if device == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return min(times)

    forward = best(lambda: model.forward(ids))
    run = best(lambda: model.run(inputs, batch_size=BATCH))
    # the same inputs as strs (every vocabulary here is one-character tokens): one join less
    texts = ["".join(row) for row in inputs]
    run_str = best(lambda: model.run(texts, batch_size=BATCH))
    # tensors in, codes out (no Python lists at either end): what a GPU pipeline would call
    run_ids = best(lambda: model.run_ids(ids, batch_size=BATCH))
    # a numpy array of tokens in, an array of values out: lookups on the device
    tokens_array = np.array(inputs)  # [BATCH, max_len] of one-character strs
    run_array = best(lambda: model.run_array(tokens_array, batch_size=BATCH))
    tokens = BATCH * max_len
    return {
        "program": program,
        "N": max_len,
        "device": device,
        "forward_s": forward,
        "run_s": run,
        "forward_tok_s": tokens / forward,
        "run_tok_s": tokens / run,
        "ratio": run / forward,
        "run_str_s": run_str,
        "run_str_ratio": run_str / forward,
        "run_ids_s": run_ids,
        "run_ids_ratio": run_ids / forward,
        "run_array_s": run_array,
        "run_array_ratio": run_array / forward,
    }


def _best(fn: Any, reps: int) -> tuple[float, float]:
    """The least wall and the least CPU seconds (this process, every thread) of `reps` calls
    of `fn`, after a warm-up call. CPU time is the steadier on a machine other jobs share."""
    fn()
    wall, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def mixed_throughput(path: Path, program: str, max_len: int, reps: int = 3) -> dict[str, Any]:
    """BATCH random inputs of random lengths 1..N on the CPU: the bare forward pass on ids encoded
    beforehand, per length (one call per length: no padding, the least work any runtime does)
    and as the one padded batch `encode` gives, against `run` (lists of tokens, and strs),
    `run_array` given one ragged array (`lengths=`) and given one array per length; every
    `batch_size` BATCH. Seconds, wall and CPU, the best of `reps`."""
    import transformer

    model = transformer.load(path, device="cpu")
    rng = random.Random(0)
    vocab = list(VOCABS[program])
    inputs = [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(BATCH)]
    ids, lengths = model.encode(inputs)
    by_length: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        by_length.setdefault(n, []).append(i)
    per_length = [model.encode([inputs[i] for i in rows])[0] for rows in by_length.values()]
    arrays = [np.array([inputs[i] for i in rows]) for rows in by_length.values()]
    texts = ["".join(row) for row in inputs]
    ragged = np.full((BATCH, max(lengths)), "", dtype="U1")  # "" past each length
    for row, tokens in enumerate(inputs):
        ragged[row, : len(tokens)] = tokens
    runs = {
        "forward": lambda: [model.forward(part) for part in per_length],
        "forward_padded": lambda: model.forward(ids),
        "run": lambda: model.run(inputs, batch_size=BATCH),
        "run_str": lambda: model.run(texts, batch_size=BATCH),
        "run_array": lambda: model.run_array(ragged, batch_size=BATCH, lengths=lengths),
        "run_array_per_length": lambda: [model.run_array(a, batch_size=BATCH) for a in arrays],
    }
    row: dict[str, Any] = {
        "program": program,
        "N": max_len,
        "device": "cpu",
        "threads": torch_threads(),
        "tokens": sum(lengths),
    }
    for name, fn in runs.items():
        row[f"{name}_s"], row[f"{name}_cpu_s"] = _best(fn, reps)
    return row


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def mixed(cases: list[tuple[str, int]], timeout: float, results: Path) -> None:
    """`--mixed`: rows for `cases`, replacing those (program, N, threads) in `results`."""
    kept = json.loads(results.read_text())["mixed"] if results.exists() else []
    results.parent.mkdir(parents=True, exist_ok=True)
    for program, n, path in _compiled(cases, timeout):
        row = mixed_throughput(path, program, n)
        print(json.dumps(row), flush=True)
        key = (program, n, row["threads"])
        kept = [r for r in kept if (r["program"], r["N"], r["threads"]) != key] + [row]
        # written after each row: a long run stopped midway keeps what it measured
        results.write_text(json.dumps({"mixed": kept}, indent=1) + "\n")
    from scale_report import mixed_table  # a sibling script: bench/ is on the path when run

    print(mixed_table(kept))


def _compiled(cases: list[tuple[str, int]], timeout: float) -> Iterator[tuple[str, int, Path]]:
    """(program, N, model file) for each case that compiles (in a process of its own, within
    `timeout`); the files last until the next case is asked for."""
    with tempfile.TemporaryDirectory() as tmp:
        for program, n in cases:
            path = Path(tmp) / f"{program}-{n}.safetensors"
            made = _subprocess(["--one", program, str(n), "--save", str(path)], timeout)
            if made and "params" in made:
                yield program, n, path


def _subprocess(args: list[str], timeout: float) -> dict[str, Any] | None:
    try:
        done = subprocess.run(
            [sys.executable, __file__, *args],
            capture_output=True,
            check=False,  # a refusal or crash is reported in the row, not raised
            text=True,
            timeout=timeout,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:300]}
    return json.loads(lines[-1])


def sizes(programs: list[str], lengths: list[int], timeout: float) -> list[dict[str, Any]]:
    rows = []
    for program in programs:
        for n in sorted(set(lengths)):
            if n >= 1024 and program not in LONG:
                continue
            row = _subprocess(["--one", program, str(n)], timeout)
            if row is None:
                row = {"program": program, "N": n, "refused": f"did not finish in {timeout:.0f} s"}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def speeds(
    cases: list[tuple[str, int]], timeout: float, devices: list[str] | None
) -> list[dict[str, Any]]:
    import torch

    if devices is None:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    rows = []
    for program, n, path in _compiled(cases, timeout):
        for device in devices:
            row = throughput(path, program, n, device)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=2, metavar=("PROGRAM", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--save", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--programs", nargs="+", default=list(VOCABS))
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=[10, 16, 40, 64, 128, 256, 512, 1024]
    )
    parser.add_argument(
        "--speed-cases",
        nargs="+",
        metavar="PROGRAM:N",
        # every program at N = 256
        default=[
            "reverse:256",
            "hist:256",
            "sort:256",
            "double_hist:256",
            "length:256",
            "hist_bos:256",
            "dyck1:256",
            "frac_prevs:256",
            "dyck2:256",
            "most_freq:256",
            "induction:256",
        ],
    )
    parser.add_argument(
        "--speed-only", action="store_true", help="keep the saved sizes, measure speeds again"
    )
    parser.add_argument(
        "--devices",
        nargs="+",
        choices=["cpu", "cuda"],
        help="where to measure speeds (default: the CPU, and CUDA when there is one)",
    )
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--sizes-only", action="store_true")
    parser.add_argument("--plot", action="store_true", help="only redraw the plot and tables")
    parser.add_argument(
        "--results", type=Path, help="the JSON file to use (default: scale.json; mixed.json)"
    )
    parser.add_argument(
        "--mixed",
        action="store_true",
        help="measure inputs of mixed lengths 1..N for the speed cases, into their own file",
    )
    parser.add_argument("--threads", type=int, help="torch threads for the speed measurements")
    parser.add_argument(
        "--merge", type=Path, nargs="+", help="only merge these results files into --results"
    )
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if args.mixed:
        cases = [(c.split(":")[0], int(c.split(":")[1])) for c in args.speed_cases]
        mixed(cases, args.timeout, args.results or MIXED_RESULTS)
        return
    if args.results is None:
        args.results = RESULTS
    if args.merge:  # runs of program subsets (e.g. in parallel), in one file
        merged: dict[str, list[Any]] = {"sizes": [], "speeds": []}
        for path in args.merge:
            part = _saved(path, "--merge", "a results file of an earlier run")
            for key in merged:
                merged[key] += part.get(key, [])
        args.results.write_text(json.dumps(merged, indent=1) + "\n")
        return
    if args.one:
        print(json.dumps(compile_one(args.one[0], int(args.one[1]), args.save)))
        return
    if args.plot:
        results = _saved(args.results, "--plot", "a results file of an earlier run")
    else:
        if args.speed_only:  # (read before minutes of measuring, which it would then lose)
            saved = _saved(args.results, "--speed-only", "a copy of bench/results/scale.json")
            results = {"sizes": saved.get("sizes", [])}
        else:
            results = {"sizes": sizes(args.programs, args.lengths, args.timeout)}
        if not args.sizes_only:
            cases = [(c.split(":")[0], int(c.split(":")[1])) for c in args.speed_cases]
            results["speeds"] = speeds(cases, args.timeout, args.devices)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(results, indent=1) + "\n")
    # the plot goes with its results: another --results file never redraws bench/scale.png
    from scale_report import plot, tables  # a sibling script: bench/ is on the path when run

    drawn = PLOT if args.results.resolve() == RESULTS else args.results.with_suffix(".png")
    plot(results, drawn, VOCABS, TRACR)
    print(tables(results, ROOT))


def _saved(path: Path, option: str, what: str) -> dict[str, Any]:
    """The results saved in `path`, which `option` reads; one line and exit status 2 where there
    are none (a missing file ended `--speed-only` in a traceback: it keeps the file's sizes, so a
    new file has nothing to keep, and a path typed wrong is more likely than a run meant to have
    no size rows)."""
    try:
        saved = json.loads(path.read_text())
    except FileNotFoundError:
        problem = "does not exist"
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror or exc})"
    except ValueError as exc:  # (UnicodeDecodeError and json's errors are ValueErrors)
        problem = f"is not JSON ({exc})"
    else:
        if isinstance(saved, dict):
            return saved
        problem = "is not a results object"
    print(
        f"bench_scale.py: error: {option} reads {path}, which {problem}; give {what}",
        file=sys.stderr,
    )
    raise SystemExit(2)


if __name__ == "__main__":
    main()

"""A fuzz campaign on fresh seeds: the random-program generators of the compiler's fuzz tests
(random_programs.py), each program compiled and compared with the interpreter, one line per
failure. The tests keep a few dozen seeds each; this runs as many as you like:

    python tests/compiler/fuzz_campaign.py plain 100000 101000 --max-len 12

Flavours: plain, twins (1, 1.0 and None in one s-op), causal (compiled with causal attention),
kinds (plain, with tokens_float and tokens_bool, constant s-ops, maps of three s-ops, maps telling
0, 0.0 and False apart, and selects by a Python predicate), addressing (selects by `==` between
whole numbers, at a random N of 4..64, or of `--sizes` such as 128,256: a seed keeps its program
whatever the sizes), numeric (the texts of random_numeric_texts.py, means compared and mapped, at
`--max-len`, where float32's error grows with N; with shaped inputs: runs, halves, alternations),
texts (random_texts.py's texts as a user writes them, with its wide extras: the prelude's
functions and selectors, string tokens mapped to numbers, maps over zipped s-ops, widths of
compound selectors; tokens "0", "1", "2" at `--max-len`), mixed (random_mixed_texts.py's texts: 1,
1.0 and True in one s-op into maps, comparisons, sorts and aggregates; maps reading a variable
several times; strings and tokens of odd characters; widths of compound selectors beside means;
each value checked as `rasp verify` checks it, a bool never equal to a number), defs
(random_def_texts.py's texts: `def`s with locals calling each other, nested and several times,
inner defs, loops and recursion chaining maps, functions returning selectors or pairs, the
prelude and the programs/ files' s-ops loaded and composed; checked as mixed is).
`--causal` (numeric, texts, mixed, defs): the text made one a causal model can compute
(causal_texts.py: every aggregate's selector also `select(indices, indices, <=)`, `length` read
as `indices + 1`, the prelude's attending functions and defs' loaded files looking back),
compiled with causal attention; a seed keeps its program otherwise.
Every flavour but addressing draws a seed's program again while the interpreter runs it on no
probe input (runnable.py: a select ordering strings against numbers, `res = 0`): a seed whose
first draw runs keeps its program. A program the interpreter still runs on none of the seed's
inputs is counted `invalid`, apart from the refusals (`INVALID` lines with `--reasons`).
Inputs: every input up to length 3 (4 at N = 4) and 60 random ones up to the maximum length. Each
seed runs in a process of its own, killed past `--seconds` of CPU time (or four times that of wall
clock). A refusal (CompileError) keeps the promise; a wrong value, another exception, a process
that died or a seed past the time limit is reported (`FAIL`, `SLOW`) and makes the exit status 1.
A refusal because the certifier could not check the model is a compiler bug kept safe: reported
(`ODD`), counted among the refusals. `--reasons` also prints a line per refusal (`REFUSED kinds
1970004: <the refusal's first message>`, or `(interpreter) ...` for a text the interpreter cannot
run), to count the refusals by reason and rerun one of each.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import signal
import sys
from collections.abc import Callable
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[2])]

from causal_texts import causal_text  # noqa: E402
from random_def_texts import random_def_program  # noqa: E402
from random_mixed_texts import random_mixed_program  # noqa: E402
from random_numeric_texts import random_numeric_program  # noqa: E402
from random_programs import random_addressing_program, random_program  # noqa: E402
from random_texts import wide_text  # noqa: E402
from runnable import interpreter_error, probe_inputs, redraw  # noqa: E402
from test_compile import all_inputs, check_inputs, random_inputs  # noqa: E402
from test_random_numeric_texts import shaped_inputs  # noqa: E402

from compiler import compile_sop  # noqa: E402
from rasp import sops as S  # noqa: E402
from rasp.atoms import same_value  # noqa: E402
from rasp.errors import CompileError, RaspError, Source  # noqa: E402
from rasp.interpreter import load_source  # noqa: E402

FLAVOURS = ("plain", "twins", "causal", "addressing", "numeric", "kinds", "texts", "mixed", "defs")
TEXT_FLAVOURS = ("numeric", "texts", "mixed", "defs")  # those `--causal` rewrites
PROGRAMS = Path(__file__).parents[2] / "programs"  # what the defs flavour's texts load


ADDRESSING_SIZES = (4, 9, 17, 33, 40, 64)
# a refusal that says the certifier could not walk the model (a block reading a dim nothing wrote,
# two blocks writing one): the promise is kept, but the compiler built a model it cannot read
UNCHECKED = "the certifier could not check the model"


def _program(
    flavour: str,
    seed: int,
    max_len: int,
    sizes: tuple[int, ...] = ADDRESSING_SIZES,
    causal: bool = False,
) -> tuple[S.SOp, list, int, list[list]]:
    """The seed's program, vocabulary, maximum length and inputs (`sizes`: addressing's N;
    `causal`: a text flavour's text rewritten by causal_text)."""
    rng = random.Random(seed)
    rewrite = partial(causal_text, library=PROGRAMS) if causal else _unchanged
    if flavour == "numeric":
        return _numeric(seed, max_len, rewrite)
    if flavour == "texts":
        return _text(seed, max_len, rewrite)
    if flavour == "mixed":
        return _mixed(seed, max_len, rewrite)
    if flavour == "defs":
        return _defs(seed, max_len, rewrite)
    if flavour == "addressing":
        n = sizes[ADDRESSING_SIZES.index(rng.choice(ADDRESSING_SIZES)) % len(sizes)]
        root = random_addressing_program(rng)
        return root, list("abc"), n, all_inputs("abc", 3) + random_inputs("abc", n, 60, seed)
    int_tokens = flavour == "twins" or rng.random() < 0.5
    vocab: list = [0, 1, 2] if int_tokens else list("abc")
    depth = rng.randint(2, 4) if flavour == "twins" else rng.randint(1, 4)
    draw = partial(
        random_program,
        rng,
        depth,
        int_tokens,
        twins=flavour == "twins",
        causal=flavour == "causal",
        kinds=flavour == "kinds",
    )
    probes = probe_inputs(vocab)
    root = redraw(draw, lambda drawn: interpreter_error(drawn, probes))
    short = all_inputs(vocab, min(max_len, 4 if max_len == 4 else 3))
    longer = random_inputs(vocab, max_len, 60, seed) if max_len > 4 else []
    return root, vocab, max_len, short + longer


def _unchanged(text: str) -> str:
    return text


def _numeric(
    seed: int, max_len: int, rewrite: Callable[[str], str] = _unchanged
) -> tuple[S.SOp, list, int, list[list]]:
    """A numeric text's `res` at N = max_len (a text the interpreter cannot run raises
    RaspError, counted as invalid)."""
    text, vocab, _ = random_numeric_program(seed, rewrite)
    interp = load_source(Source(f"numeric-{seed}.rasp", rewrite(text)))
    root = interp.get("res")
    if not isinstance(root, S.SOp):
        raise RaspError("res is not an s-op")
    rng = random.Random(seed)
    inputs = all_inputs(vocab, 3) + shaped_inputs(vocab, max_len, rng)
    return root, vocab, max_len, inputs + random_inputs(vocab, max_len, 60, seed)


def _text(
    seed: int, max_len: int, rewrite: Callable[[str], str] = _unchanged
) -> tuple[S.SOp, list, int, list[list]]:
    """A wide random text's `res` at N = max_len (RaspError where it is no s-op or the
    interpreter refuses it: counted as invalid)."""
    text = wide_text(seed, rewrite)
    root = load_source(Source(f"texts-{seed}.rasp", rewrite(text))).get("res")
    if not isinstance(root, S.SOp):
        raise RaspError("res is not an s-op")
    vocab = ["0", "1", "2"]
    short = all_inputs(vocab, min(max_len, 4 if max_len == 4 else 3))
    return root, vocab, max_len, short + random_inputs(vocab, max_len, 60, seed)


def _mixed(
    seed: int, max_len: int, rewrite: Callable[[str], str] = _unchanged
) -> tuple[S.SOp, list, int, list[list]]:
    """A mixed text's `res` over its vocabulary at N = max_len (RaspError where it is no s-op or
    the interpreter refuses it: counted as invalid)."""
    text, vocab = random_mixed_program(seed, rewrite)
    root = load_source(Source(f"mixed-{seed}.rasp", rewrite(text))).get("res")
    if not isinstance(root, S.SOp):
        raise RaspError("res is not an s-op")
    short = all_inputs(vocab, min(max_len, 3))
    return root, vocab, max_len, short + random_inputs(vocab, max_len, 60, seed)


def _defs(
    seed: int, max_len: int, rewrite: Callable[[str], str] = _unchanged
) -> tuple[S.SOp, list, int, list[list]]:
    """A defs text's `res` over its vocabulary at N = max_len (RaspError where it is no s-op or
    the interpreter refuses it: counted as invalid)."""
    text, vocab = random_def_program(seed, rewrite)
    source = Source(f"defs-{seed}.rasp", rewrite(text))
    root = load_source(source, search_dirs=[PROGRAMS]).get("res")
    if not isinstance(root, S.SOp):
        raise RaspError("res is not an s-op")
    short = all_inputs(vocab, min(max_len, 3))
    return root, vocab, max_len, short + random_inputs(vocab, max_len, 60, seed)


def check_exactly(model: object, root: S.SOp, inputs: list[list]) -> int:
    """Every value as the model promises it (`rasp verify`'s test): check_inputs takes a bool for
    the float 1.0, which the mixed flavour's values would hide. Returns how many were compared
    (those the interpreter runs)."""
    from tests.runtime_helpers import run_compiled

    outputs = run_compiled(model, inputs)
    compared = 0
    for tokens, got in zip(inputs, outputs, strict=True):
        try:
            want = S.evaluate(root, tokens).values
        except RaspError:
            continue
        if len(got) != len(want) or not all(map(same_value, got, want)):
            raise AssertionError((tokens, got, list(want)))
        compared += 1
    return compared


def _warm_up() -> None:
    """Compile and run one small model before the seeds: each seed's process is forked from this
    one and inherits torch's lazy imports (torch.fx) done, instead of paying for them per seed."""
    # (its own imports: the campaign's tests replace this module's compile_sop and check_inputs)
    import compiler
    from tests.runtime_helpers import as_runtime, run_compiled

    tokens = S.TokensSOp(name="tokens")
    root = S.AggregateSOp(
        selector=S.Select(keys=tokens, queries=tokens, comparison=S.Comparison.EQ), sop=tokens
    )
    run_compiled(as_runtime(compiler.compile_sop(root, list("ab"), 2)), all_inputs("ab", 2))


def run(
    flavour: str,
    seeds: range,
    max_len: int,
    seconds: int,
    say: Callable[[str], None],
    sizes: tuple[int, ...] = ADDRESSING_SIZES,
    causal: bool = False,
    reasons: bool = False,
) -> int:
    """Check every seed, each in a process of its own; returns how many failed (or ran past
    `seconds`). `causal`: a text flavour's texts rewritten by causal_text, compiled causal;
    `reasons`: a `REFUSED` (or `INVALID`) line for each refusal (or invalid program) too."""
    _warm_up()
    label = _label(flavour, causal)
    counts = {"compiled": 0, "refused": 0, "odd": 0, "failed": 0, "invalid": 0}
    for seed in seeds:
        check = partial(_check, flavour, seed, max_len, sizes, causal, reasons)
        outcome, line = _in_child(check, seconds)
        if outcome == "slow":
            outcome, line = "failed", f"SLOW {label} {seed}: {line}"
        elif outcome == "died":
            outcome, line = "failed", f"FAIL {label} {seed}: {line}"
        counts[outcome] += 1
        counts["refused"] += outcome == "odd"
        if line:
            say(line)
    compiled, refused, odd, bad, invalid = counts.values()
    # (a run with no invalid program says nothing of them: its line is as it always was)
    said_invalid = f", {invalid} invalid (the interpreter runs no input)" if invalid else ""
    say(f"{label} seeds {seeds.start}..{seeds.stop - 1}: {compiled} compiled and agreed, "
        f"{refused} refused{f' ({odd} odd)' if odd else ''}, {bad} failed{said_invalid}")  # fmt: skip
    return bad


def _label(flavour: str, causal: bool) -> str:
    """The flavour as its lines name it (as it is run again)."""
    return f"{flavour} --causal" if causal else flavour


def _check(
    flavour: str,
    seed: int,
    max_len: int,
    sizes: tuple[int, ...],
    causal: bool = False,
    reasons: bool = False,
) -> tuple[str, str]:
    """One seed: compiled, refused, odd, invalid (a program the interpreter runs on none of its
    inputs) or failed, and the line to report ("" for none, or with `reasons` a refusal's
    `REFUSED` line or an invalid program's `INVALID` line)."""
    label = _label(flavour, causal)
    refused = f"REFUSED {label} {seed}: " if reasons else ""
    invalid = f"INVALID {label} {seed}: (interpreter) " if reasons else ""
    try:
        try:
            root, vocab, n, inputs = _program(flavour, seed, max_len, sizes, causal)
        except RaspError as err:  # a text the interpreter cannot run: nothing to compile
            return "invalid", invalid and f"{invalid}{_first_line(err)}"
        try:
            model = compile_sop(root, vocab, n, causal=causal or flavour == "causal")
        except CompileError as err:
            if UNCHECKED in str(err):  # kept, but the compiler built what it cannot read
                return "odd", f"ODD {label} {seed}: {str(err)[:300]}"
            # (still compiled: a crash on a program no input runs is a bug too)
            why = interpreter_error(root, inputs)
            if why is not None:
                return "invalid", invalid and f"{invalid}{why}"
            return "refused", refused and f"{refused}{_first_line(err)}"
        check = check_exactly if flavour in ("mixed", "defs") else check_inputs
        if check(model, root, inputs) == 0:
            return "invalid", invalid and f"{invalid}{interpreter_error(root, inputs)}"
        return "compiled", ""
    except Exception as err:  # noqa: BLE001 (a campaign reports every failure and goes on)
        return "failed", f"FAIL {label} {seed}: {type(err).__name__}: {str(err)[:300]}"


def _first_line(err: RaspError) -> str:
    """An error's message as one short line (a refusal's first reason)."""
    lines = str(err).splitlines() or [type(err).__name__]
    return lines[0][:300]


# A seed past its limit is killed with its process: the alarm this campaign used before could
# only interrupt the waiting main thread, and the compile went on in its deep-stack thread
# (rasp/deep_stack.py), sharing the CPU with every later seed and making their timings lie.
# The limit is CPU time (other work on the machine does not make a seed slow); a seed waiting
# on nothing that long is stopped by the wall clock.
WALL_PER_CPU = 4


def _in_child(check: Callable[[], tuple[str, str]], seconds: int) -> tuple[str, str]:
    """`check()` in a forked process (it inherits the warmed-up imports and any test's
    monkeypatches), killed past `seconds` of CPU: ("slow", why) then, ("died", why) when it ended
    without an answer."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(check, writer, seconds), daemon=True)
    child.start()
    writer.close()  # (the child's copy stays open: EOF here once it has ended)
    try:
        if reader.poll(seconds * WALL_PER_CPU):
            try:
                return reader.recv()  # type: ignore[no-any-return]
            except EOFError:
                child.join()
                if child.exitcode == -signal.SIGXCPU:
                    return "slow", f"over {seconds} s of CPU"
                if child.exitcode == -signal.SIGKILL:  # (SIGXCPU's hard end comes 5 s later)
                    return "died", "its process was killed (out of memory, or far past its limit)"
                return "died", f"its process ended without an answer (exit code {child.exitcode})"
        return "slow", f"over {seconds * WALL_PER_CPU} s of wall-clock time"
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        reader.close()


def _child(check: Callable[[], tuple[str, str]], writer: Connection, seconds: int) -> None:
    # SIGXCPU (which ends the process) at `seconds` of CPU, SIGKILL a little later
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    kill_at = seconds + 5 if hard == resource.RLIM_INFINITY else min(hard, seconds + 5)
    resource.setrlimit(resource.RLIMIT_CPU, (min(seconds, kill_at), kill_at))
    # torch's OpenMP threads were not forked with it: a parallel region would wait for them for
    # ever (or crash); with one thread torch runs no region
    import torch

    torch.set_num_threads(1)
    writer.send(check())
    writer.close()


def _sizes(text: str) -> tuple[int, ...]:
    sizes = tuple(int(part) for part in text.split(","))
    if not sizes or min(sizes) < 4:
        raise argparse.ArgumentTypeError("sizes are whole numbers of at least 4, comma-separated")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("flavour", choices=FLAVOURS)
    parser.add_argument("first", type=int, help="the first seed")
    parser.add_argument("stop", type=int, help="the seed after the last")
    parser.add_argument("--max-len", type=int, default=4, help="N (not addressing's)")
    parser.add_argument("--seconds", type=int, default=120, help="CPU time limit per program")
    parser.add_argument(
        "--sizes", type=_sizes, default=ADDRESSING_SIZES, help="addressing's N, comma-separated"
    )
    parser.add_argument(
        "--causal",
        action="store_true",
        help="a text flavour's texts made causal (causal_texts.py), compiled causal",
    )
    parser.add_argument(
        "--reasons", action="store_true", help="a REFUSED line per refusal, with its first reason"
    )
    args = parser.parse_args(argv)
    if args.causal and args.flavour not in TEXT_FLAVOURS:
        parser.error(f"--causal rewrites texts: {', '.join(TEXT_FLAVOURS)} (or flavour causal)")
    seeds = range(args.first, args.stop)
    bad = run(
        args.flavour,
        seeds,
        args.max_len,
        args.seconds,
        print,
        args.sizes,
        args.causal,
        args.reasons,
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
